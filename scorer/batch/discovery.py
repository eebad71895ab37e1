"""Find runs and batches under a path (docs/formats.md, "The run directory").

A run is a directory holding run-meta.json (its subdirectories are its data, never other runs).
A run belongs to the nearest enclosing directory named batch-* at or below the path given, else
to the path itself; so the path may be one run, one batch, or a directory of batches.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from proxy_addon.records import RUN_META

TEMP_FILE = re.compile(
    r"\.(judge(?:_llm)?(?:\..+)?\.json|run-meta\.json|rescore-summary\.json)\.(\d+)\.\d+\.tmp"
)
"""A temp file of a file the scorer writes (judge files of every judge, run-meta.json,
rescore-summary.json) and the pid that wrote it: a stale one (a killed write) is swept."""


class DiscoveryError(ValueError):
    """The path holds nothing to score."""


@dataclass
class Batch:
    """A directory of runs scored together; single when the path given was one run."""

    path: Path
    runs: list[Path] = field(default_factory=list)
    single_run: bool = False


def _walk(root: Path, home: Path, out: list[tuple[Path, Path]]) -> None:
    """Append (run, its batch) for every run at or under root; home: root's batch if it is one."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    if any(e.name == RUN_META and e.is_file() for e in entries):
        out.append((root, home))
        return
    if root.name.startswith("batch-"):
        home = root  # the nearest batch-* directory above a run is its batch
    for e in sorted(entries, key=lambda e: e.name):
        if e.is_dir(follow_symlinks=False) and not e.name.startswith("."):
            _walk(Path(e.path), home, out)


def find_batches(path: Path) -> list[Batch]:
    """Group the runs under path by batch; DiscoveryError when there are none."""
    if not path.exists():
        raise DiscoveryError(f"{path}: no such directory")
    if not path.is_dir():
        raise DiscoveryError(f"{path}: not a directory (give a batch, batches or a run directory)")
    if (path / RUN_META).is_file():
        return [Batch(path, [path], single_run=True)]
    found: list[tuple[Path, Path]] = []
    _walk(path, path, found)  # the path itself is the batch of runs in no batch-* directory
    groups: dict[Path, Batch] = {}
    for run, home in found:
        groups.setdefault(home, Batch(home)).runs.append(run)
    if not groups:
        raise DiscoveryError(f"{path}: no runs found (a run is a directory holding {RUN_META})")
    return [groups[k] for k in sorted(groups)]


def sweep_temp_files(directory: Path) -> int:
    """Remove temp files a killed write of ours left in directory; return how many.

    A temp file named with this process's pid is its own write in progress, so it is left alone
    (a library caller may score two batches at once from two threads).
    """
    removed = 0
    pid = str(os.getpid())
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    for e in entries:
        found = TEMP_FILE.fullmatch(e.name)
        if found is not None and found[2] != pid:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(e.path)
                removed += 1
    return removed


__all__ = ["RUN_META", "TEMP_FILE", "Batch", "DiscoveryError", "find_batches", "sweep_temp_files"]
