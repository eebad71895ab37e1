"""Disk space kept back, at the start of a run, for the writes that record how it ended.

The block (interception.json, .stop-requested) and the container's report.json must be written
even when the disk is full: the agent's own traffic cannot fill it (the proxy's records have a
byte budget), but the host's disk is shared. Each writer preallocates a reserve file when it
starts; a write that finds the disk full gives the reserve back and is tried once more.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from pathlib import Path

DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
RESERVE_FILE = ".reserve"
"""The addon's reserve in the data dir (while the proxy runs; given back when it stops)."""


def reserve_space(path: Path, size: int) -> None:
    """A file of size bytes at path, its blocks allocated now; OSError when the disk cannot
    give them (then the end of the run could not be recorded either)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)


def release(path: Path) -> bool:
    """Give the reserve at path back to the disk; whether there was one."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def write_with_reserve(write: Callable[[], None], reserve: Path) -> None:
    """write(); when it finds the disk full, the reserve given back and write() once more."""
    try:
        write()
    except OSError as e:
        if e.errno not in DISK_FULL or not release(reserve):
            raise
        write()


__all__ = ["DISK_FULL", "RESERVE_FILE", "release", "reserve_space", "write_with_reserve"]
