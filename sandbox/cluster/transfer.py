"""A run directory's trip from a node back to the driver: bounded, packed, checked, placed whole.

    node    trim(run_dir, limit)   keep the run directory within the return limit (files cut or
                                   dropped, records first, each cut said in run-meta.json)
            pack(root, run_dir)    a tar of <safe_model>/<run>/..., regular files and directories
    driver  unpack(archive, ...)   every member checked before one byte is written: a relative
                                   name under the one run it claims to be, no `..`, no absolute
                                   path, no link, no device or FIFO, no name twice, within the
                                   limit; any other member refuses the whole archive
            place(incoming, ...)   one rename into the batch directory, so a run directory
                                   appears whole or not at all

The names in a run directory are partly the agent's (its trace files under agent/), so the
driver treats the archive as hostile even though a node packed it (docs/security.md).
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sandbox.host import cut_note

RETURN_LIMIT = 512 << 20
"""Bytes of a run directory (tar headers included) that come back through Ray at most."""
MEMBER_LIMIT = 20_000
"""Files and directories of one run directory at most."""
_BLOCK = tarfile.BLOCKSIZE
_RECORDS = (
    "task.json",
    "data/interception.json",
    "data/sandbox.json",
    "data/usage.json",
    "data/.proxy-ready",
    "agent/result.json",
)
"""Kept whole before anything else: what the record and the scorer read."""
_NOTES = 20


class TransferRefused(ValueError):
    """An archive the driver will not extract; the message names the member and why."""


def _cost(size: int) -> int:
    """Bytes a member of this size counts for in the tar: its header, room for a PAX header
    (a long or non-ASCII name, a fine mtime) and its padded data."""
    return 3 * _BLOCK + -(-size // _BLOCK) * _BLOCK


def _files(run_dir: Path) -> list[tuple[int, int, str, Path]]:
    """(priority, size, name, path) of every regular file, records first, then smallest first."""
    out = []
    for path in run_dir.rglob("*"):
        if path.is_file() and not path.is_symlink():
            name = path.relative_to(run_dir).as_posix()
            size = path.stat().st_size
            out.append((0 if name in _RECORDS else 1, size, name, path))
    return sorted(out)


def trim(run_dir: Path, limit: int = RETURN_LIMIT, reserve: int = 1 << 20) -> list[str]:
    """Cut or drop files (the largest last in line) until the run directory packs within limit
    minus reserve (room for run-meta.json, written after); return what was done, for run-meta's
    collection_warnings."""
    dirs = sum(1 for p in run_dir.rglob("*") if p.is_dir() and not p.is_symlink())
    budget = limit - reserve - (dirs + 1) * _cost(0)
    notes: list[str] = []
    for _, size, name, path in _files(run_dir):
        cost = _cost(size)
        if cost <= budget:
            budget -= cost
            continue
        note = len(cut_note(size, size))  # at least as long as the note it will get
        keep = budget - _cost(0) - note - _BLOCK  # the headers, the note, a block of padding
        if keep < 0:
            path.unlink()
            notes.append(f"{name}: not returned ({size} bytes over the return limit)")
            continue
        with open(path, "r+b") as f:
            f.truncate(keep)
            f.seek(keep)
            f.write(cut_note(keep, size))
        budget -= _cost(path.stat().st_size)
        notes.append(f"{name}: cut at {keep} of {size} bytes (the return limit)")
    if len(notes) > _NOTES:
        notes[_NOTES:] = [f"... and {len(notes) - _NOTES} more files cut or not returned"]
    return notes


def pack(root: Path, run_dir: Path) -> bytes:
    """A tar of run_dir named relative to root (<safe_model>/<run>/...): directories and regular
    files only, with their modes and times."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(run_dir, arcname=run_dir.relative_to(root).as_posix(), recursive=False)
        for path in sorted(run_dir.rglob("*")):
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                continue  # nothing of ours writes one; never follow or send it
            tar.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)
    return raw.getvalue()


@dataclass(frozen=True)
class _Checked:
    """A member that passed every check: its path under the run and what it is."""

    member: tarfile.TarInfo
    rel: PurePosixPath


def _check_name(member: tarfile.TarInfo, expect_parent: str) -> PurePosixPath:
    name = member.name
    if name.startswith("/") or PurePosixPath(name).is_absolute():
        raise TransferRefused(f"{name!r}: an absolute path")
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise TransferRefused(f"{name!r}: an empty, '.' or '..' path component")
    if "\\" in name or "\x00" in name:
        raise TransferRefused(f"{name!r}: a backslash or NUL in the name")
    if parts[0] != expect_parent or len(parts) < 2:
        raise TransferRefused(f"{name!r}: not under {expect_parent}/<run>/")
    return PurePosixPath(*parts[1:])


def _check(tar: tarfile.TarFile, expect_parent: str, limit: int) -> list[_Checked]:
    """Every member, checked; TransferRefused on the first that fails."""
    checked: list[_Checked] = []
    seen: set[str] = set()
    total = 0
    run: str | None = None
    for member in tar:
        if len(checked) >= MEMBER_LIMIT:
            raise TransferRefused(f"more than {MEMBER_LIMIT} members")
        rel = _check_name(member, expect_parent)
        if not (member.isreg() or member.isdir()) or member.type == tarfile.CONTTYPE:
            kind = "a link" if member.issym() or member.islnk() else "not a file or directory"
            raise TransferRefused(f"{member.name!r}: {kind}")
        if member.issparse():
            raise TransferRefused(f"{member.name!r}: a sparse file")
        top = rel.parts[0]
        if run is None:
            run = top
        elif top != run:
            raise TransferRefused(f"{member.name!r}: a second run directory ({run!r} first)")
        if member.name in seen:
            raise TransferRefused(f"{member.name!r}: in the archive twice")
        seen.add(member.name)
        total += _cost(member.size)
        if total > limit:
            raise TransferRefused(f"over the return limit of {limit} bytes")
        checked.append(_Checked(member, rel))
    if run is None:
        raise TransferRefused("an empty archive")
    if not any(c.member.isdir() and len(c.rel.parts) == 1 for c in checked):
        raise TransferRefused(f"no directory entry for the run {run!r}")
    return checked


def unpack(archive: bytes, into: Path, expect_parent: str, limit: int = RETURN_LIMIT) -> Path:
    """Extract a packed run under `into` (a fresh directory of the driver's) and return the run
    directory; TransferRefused (nothing left under `into`) when any member fails a check."""
    into.mkdir(parents=True)
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:") as tar:
            checked = _check(tar, expect_parent, limit)
            for item in checked:
                _write(tar, item, into)
        return into / checked[0].rel.parts[0]
    except tarfile.TarError as e:
        shutil.rmtree(into, ignore_errors=True)
        raise TransferRefused(f"not a readable tar archive: {e}") from e
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)
        raise


def _write(tar: tarfile.TarFile, item: _Checked, into: Path) -> None:
    """Create one checked member below into: never through a link, never over a file."""
    target = into.joinpath(*item.rel.parts)
    if item.member.isdir():
        target.mkdir(mode=0o755, exist_ok=True)
    else:
        target.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        source = tar.extractfile(item.member)
        assert source is not None
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        with os.fdopen(os.open(target, flags, 0o644), "wb") as out:
            shutil.copyfileobj(source, out)
        os.utime(target, (item.member.mtime, item.member.mtime), follow_symlinks=False)


def place(run: Path, parent: Path) -> Path:
    """Move an unpacked run into parent (the batch's <safe_model>/) in one rename, under its own
    name or, when that is taken, name-2, name-3 ... (as a local run is named)."""
    parent.mkdir(parents=True, exist_ok=True)
    for n in range(1, 1000):
        target = parent / (run.name if n == 1 else f"{run.name}-{n}")
        if target.exists():
            continue
        os.rename(run, target)
        return target
    raise FileExistsError(f"{parent}: too many runs named {run.name}")


__all__ = ["MEMBER_LIMIT", "RETURN_LIMIT", "TransferRefused", "pack", "place", "trim", "unpack"]
