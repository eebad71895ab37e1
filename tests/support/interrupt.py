"""Commands a test interrupts with SIGINT, started with SIGINT's default action restored.

A shell starts a background job with SIGINT ignored, and an ignored signal stays ignored across
fork and exec: a suite started that way (`pytest &`, a CI step in the background) would hand
every child a Ctrl-C it cannot receive. Python installs its KeyboardInterrupt handler only
where SIGINT is not ignored at start, so the child is exec'd through a line that restores the
default first (no preexec_fn: the tests' process has threads).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

_RESTORE = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def interruptible(argv: Sequence[str | Path]) -> list[str]:
    """argv, run with SIGINT's default action whatever this process inherited."""
    return [sys.executable, "-c", _RESTORE, *map(str, argv)]


__all__ = ["interruptible"]
