"""Import the openai package in a background thread, once, so the first judge call waits less.

It takes most of a second to import; started as soon as the first run that needs the judge is
found, it overlaps the reading of the batch (a batch whose verdicts are all saved never pays it).
What the end of the batch needs (the summary's validators, the table's rich) is made ready later,
while the calls are out.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable

_done: threading.Event | None = None
_lock = threading.Lock()


def start() -> threading.Event:
    """Begin importing openai (at most once per process); the event is set when it is done."""
    global _done
    with _lock:
        if _done is None:
            _done = threading.Event()
            done = _done

            def load() -> None:
                try:
                    importlib.import_module("openai")
                finally:
                    done.set()

            threading.Thread(target=load, name="clawbench-preload", daemon=True).start()
        return _done


def later(*work: Callable[[], None]) -> threading.Thread:
    """Do this work in a background thread now (the judge calls are out, the loop mostly waits),
    not when the batch is done and it is needed on the way out; join() the thread before relying
    on it. A step that fails is left for the caller's own use of it to report."""

    def run() -> None:
        for step in work:
            try:
                step()
            except Exception:  # the caller meets the error itself, later
                continue

    thread = threading.Thread(target=run, name="clawbench-preload-later", daemon=True)
    thread.start()
    return thread


__all__ = ["later", "start"]
