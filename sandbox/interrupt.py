"""SIGTERM handled like Ctrl-C by the commands that start containers or processes.

Inside `sigterm_as_interrupt()` a SIGTERM raises KeyboardInterrupt in the main thread, so the
cleanup written for Ctrl-C (stop agents, remove containers) runs for `kill` and `timeout` too.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM → KeyboardInterrupt while inside, the previous handler back after. Off the main
    thread (an embedding caller's) signals cannot be handled and are left alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["sigterm_as_interrupt"]
