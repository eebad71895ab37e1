"""AIMD concurrency for judge calls: halve on 429, +1 per success up to the cap.

A cut happens at most once per window (only for a call started after the previous cut), so one
burst of 429s halves once. After a cut the limit climbs +1 per success back to the last level the
judge carried, then probes above it gently (+1 per window, TCP's congestion avoidance), and not
before Retry-After has passed since the last cut (the judge said how long to back off). A probe
that draws a 429 returns the limit to the level the judge carried, without halving: that level
was not what failed, and halving it would idle half the judge's slots after every probe. A 429 at
or below that level (the judge carries less than it did) halves. A probe that draws a 429 parks
a call for Retry-After, so probing only while enough work is queued to cover that wait keeps the
batch from ending on a parked call.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque


class AimdLimiter:
    """An asyncio semaphore whose size adapts: acquire() a slot, then one of the release calls."""

    def __init__(self, cap: int) -> None:
        if cap < 1:
            raise ValueError("concurrency must be at least 1")
        self.cap = cap
        self.limit = float(cap)
        self.threshold = float(cap)
        self.in_flight = 0
        self.throttles = 0
        self.cuts = 0
        self.retry_after = 1.0
        self.latency: float | None = None
        self._last_cut = -math.inf
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def slots(self) -> int:
        return max(1, int(self.limit))

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    async def acquire(self) -> float:
        """Wait for a slot (FIFO); return the start time to pass back on a 429."""
        if self.in_flight < self.slots and not self._waiters:
            self.in_flight += 1
            return time.monotonic()
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(fut)
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self._release()  # granted just as we were cancelled: give it back
            elif fut in self._waiters:  # else _wake already dropped it, cancelled
                self._waiters.remove(fut)
            raise
        return time.monotonic()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.slots:
            fut = self._waiters.popleft()
            if not fut.done():
                self.in_flight += 1
                fut.set_result(None)

    def _release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _worth_probing(self) -> bool:
        if not self.throttles or not self.latency:
            return True
        if time.monotonic() - self._last_cut < self.retry_after:
            return False  # the judge asked for Retry-After seconds: no probe before they pass
        return self.waiting > self.limit * self.retry_after / self.latency

    def success(self, latency: float) -> None:
        """A call finished (any reply but a 429): grow, then free its slot."""
        self.latency = latency if self.latency is None else 0.8 * self.latency + 0.2 * latency
        if self.limit < self.threshold:
            self.limit = min(self.threshold, self.limit + 1)
        elif self.limit < self.cap and self._worth_probing():
            self.limit = min(float(self.cap), self.limit + 1 / self.limit)
        self._release()

    def throttled(self, started: float, retry_after: float) -> None:
        """A call drew a 429: cut once per window, then free its slot."""
        self.throttles += 1
        self.retry_after = retry_after
        if started >= self._last_cut:
            if self.limit > self.threshold:  # a probe above the carried level failed
                self.limit = self.threshold
            else:
                self.threshold = max(1.0, min(self.limit, float(self.in_flight)) - 1)
                self.limit = max(1.0, self.limit / 2)
            self._last_cut = time.monotonic()
            self.cuts += 1
        self._release()

    def failed(self) -> None:
        """A call failed without a verdict on the load (timeout, 5xx): just free its slot."""
        self._release()


__all__ = ["AimdLimiter"]
