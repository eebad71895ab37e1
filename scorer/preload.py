"""Import the openai package in a background thread, once, so the first judge call waits less.

It takes most of a second to import; started when a scoring that will judge begins, it overlaps
the scorer's own imports and the reading of the batch.
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
