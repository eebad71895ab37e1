"""Import the openai package in a background thread, once, so the first judge call waits less.

It takes most of a second to import; started as soon as the first run that needs the judge is
found, it overlaps the reading of the batch (a batch whose verdicts are all saved never pays it).
"""

from __future__ import annotations

import importlib
import threading

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


__all__ = ["start"]
