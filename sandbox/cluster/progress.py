"""The Ray batch's progress line: done / running / failed / left and an estimate of the rest."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


@dataclass
class Progress:
    """Counts of the batch's runs; `line()` words them."""

    left: int
    done: int = 0
    """Came back, not an infra failure."""
    failed: int = 0
    """Infra failures (a lost run re-run counts here once and again when it comes back)."""
    running: int = 0
    _durations: list[float] = field(default_factory=list)
    _started: float = field(default_factory=time.monotonic)

    def start(self) -> None:
        self.left -= 1
        self.running += 1

    def requeue(self) -> None:
        self.left += 1

    def drop(self) -> None:
        self.left -= 1

    def end(self, *, infra: bool, seconds: float) -> None:
        self.running -= 1
        if infra:
            self.failed += 1
        else:
            self.done += 1
            self._durations.append(seconds)

    def eta(self, parallel: int) -> float | None:
        """Seconds until the last run is back at today's pace; None before any came back."""
        if not self._durations:
            return None
        mean = sum(self._durations) / len(self._durations)
        return (self.left + self.running) * mean / max(1, parallel)

    def line(self, parallel: int) -> str:
        eta = self.eta(parallel)
        when = f"ETA {_duration(eta)}" if eta is not None else "ETA after the first run"
        if self.left + self.running == 0:
            when = f"took {_duration(time.monotonic() - self._started)}"
        return (
            f"{self.done} done, {self.running} running, {self.failed} failed, "
            f"{self.left} left; {when}"
        )


__all__ = ["Progress"]
