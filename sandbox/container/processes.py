"""Start processes as an unprivileged user with no capabilities, and stop every one of them.

setpriv (util-linux) switches uid/gid, drops the inheritable, ambient and bounding capability
sets and sets no_new_privs, so neither the agent nor anything it executes (setuid binaries
included) can regain the NET_ADMIN the entrypoint needed for the firewall.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

CUT = "over the log limit"
"""What the line that ends a capped log says (read back to tell a log that was cut)."""


@dataclass(frozen=True)
class Account:
    """A user the entrypoint runs something as."""

    name: str
    uid: int
    gid: int
    home: str

    @classmethod
    def lookup(cls, name: str) -> Account:
        entry = pwd.getpwnam(name)
        return cls(name, entry.pw_uid, entry.pw_gid, entry.pw_dir)


def unprivileged(account: Account, argv: Sequence[str]) -> list[str]:
    """argv wrapped to run as account with every capability set empty and no_new_privs."""
    return [
        "setpriv",
        f"--reuid={account.uid}",
        f"--regid={account.gid}",
        "--init-groups",
        "--inh-caps=-all",
        "--ambient-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
        "--",
        *argv,
    ]


def spawn(
    account: Account,
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    log: IO[bytes] | int,
    oom_score_adj: int = 0,
    nofile: int | None = None,
    pass_fds: Sequence[int] = (),
) -> subprocess.Popen[bytes]:
    """Start argv as account in its own session (so the whole group can be signalled).

    oom_score_adj: raises how early the OOM killer takes it (1000: first); nofile: the
    open-files limit of it and all it starts; pass_fds: descriptors it inherits."""
    prefix = ["choom", "-n", str(oom_score_adj), "--"] if oom_score_adj else []
    if nofile is not None:
        prefix += ["prlimit", f"--nofile={nofile}:{nofile}", "--"]
    return subprocess.Popen(
        [*prefix, *unprivileged(account, argv)],
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        pass_fds=pass_fds,
    )


def capped_copy(fd: int, log: IO[bytes], limit: int, whose: str = "agent") -> threading.Thread:
    """Copy what a process (the agent, the proxy) writes to fd into log, up to limit bytes with
    the line that says it was cut (the rest is read and dropped, so the writer never blocks on a
    full pipe); a thread that ends at EOF."""

    note = f"\n[clawbench: {whose} output cut here, {CUT}]\n".encode()
    room = max(limit - len(note), 0)  # the log, its note included, stays within limit

    def copy() -> None:
        kept = 0
        with os.fdopen(fd, "rb", buffering=0) as pipe:
            while chunk := pipe.read(1 << 16):
                if kept > room:
                    continue
                try:
                    log.write(chunk[: room - kept])
                    kept += len(chunk)
                    if kept > room:
                        log.write(note)
                    log.flush()
                except OSError:  # a full disk: the rest is drained, never left to block
                    kept = room + 1

    thread = threading.Thread(target=copy, name=f"{whose}-log", daemon=True)
    thread.start()
    return thread


def keep_files(src: Path, dest: Path, limit: int) -> list[str]:
    """Copy the regular files under src to dest (as root, after the agent stopped), limit bytes
    in all; symlinks and special files are the agent's and stay behind. What was left out."""
    left: list[str] = []
    budget = limit
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_symlink() or not path.is_file():
            if path.is_symlink() or not path.is_dir():
                left.append(f"{rel}: not a regular file")
            continue
        size = path.stat().st_size
        if size > budget:
            left.append(f"{rel}: {size} bytes, over what is kept ({limit} in all)")
            continue
        budget -= size
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        with path.open("rb") as f_in, (dest / rel).open("wb") as f_out:
            f_out.write(f_in.read(size))
    return left


def pids_of(uid: int) -> list[int]:
    """Every live process whose real uid is uid (a setsid'd grandchild included)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        zombie = fields.get("State", "").split()[:1] == ["Z"]  # dead, awaiting its reaper
        if not zombie and int(fields.get("Uid", "-1 ").split()[0]) == uid:
            found.append(int(entry.name))
    return found


def _signal_all(proc: subprocess.Popen[bytes], uid: int, sig: int) -> None:
    """Signal the agent's process group and every other process of uid (a setsid'd one too)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)  # also reaches the leader before setpriv has switched uid
    for pid in pids_of(uid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _running(proc: subprocess.Popen[bytes], uid: int) -> bool:
    return proc.poll() is None or bool(pids_of(uid))


def stop(proc: subprocess.Popen[bytes], uid: int, grace_s: float) -> int | None:
    """SIGTERM every process of the agent, SIGKILL whatever of it still runs grace_s later.

    The grace is for all of them, not only the group leader: with `cd /tmp && harness`, the
    leader is `sh`, which dies on SIGTERM at once while the harness is still flushing.
    """
    if _running(proc, uid):
        _signal_all(proc, uid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while _running(proc, uid) and time.monotonic() < deadline:
            time.sleep(0.05)
    deadline = time.monotonic() + 5
    while _running(proc, uid) and time.monotonic() < deadline:
        _signal_all(proc, uid, signal.SIGKILL)
        time.sleep(0.05)
    return proc.wait()
