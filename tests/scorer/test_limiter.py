"""AIMD concurrency (docs/formats.md, "The judge's calls"): halve on 429 once per window, +1 per
success, FIFO slots."""

from __future__ import annotations

import asyncio
import time

import pytest

from scorer.judge.limiter import AimdLimiter


def test_starts_at_the_cap_and_never_grows_past_it() -> None:
    async def go() -> None:
        lim = AimdLimiter(4)
        starts = [await lim.acquire() for _ in range(4)]
        assert lim.in_flight == 4 and lim.slots == 4
        for _ in starts:
            lim.success(0.2)
        assert lim.limit == 4 and lim.in_flight == 0

    asyncio.run(go())


def test_a_burst_of_429s_halves_once_then_successes_climb_back() -> None:
    async def go() -> None:
        lim = AimdLimiter(32)
        starts = [await lim.acquire() for _ in range(32)]
        for started in starts[:24]:  # one burst: every call started before the first cut
            lim.throttled(started, 1.0)
        assert lim.limit == 16 and lim.cuts == 1 and lim.throttles == 24
        later = await lim.acquire()  # started after the cut: its 429 cuts again
        lim.throttled(later, 1.0)
        assert lim.limit == 8 and lim.cuts == 2
        assert lim.threshold == pytest.approx(8.0)  # min(limit 16, in flight 9) - 1
        for _ in range(8):
            lim.success(0.2)
        assert lim.limit == 8  # back at the level the judge carried, not above
        lim.threshold = 4
        lim.limit = 2
        lim.success(0.2)
        lim.success(0.2)
        assert lim.limit == 4  # +1 per success up to the threshold

    asyncio.run(go())


def test_never_below_one_slot() -> None:
    async def go() -> None:
        lim = AimdLimiter(2)
        for _ in range(6):
            started = await lim.acquire()
            lim._last_cut = float("-inf")  # every 429 its own window
            lim.throttled(started, 0.1)
        assert lim.limit == 1 and lim.slots == 1

    asyncio.run(go())


def test_waiters_get_slots_in_order_and_a_cut_holds_new_starts() -> None:
    async def go() -> None:
        lim = AimdLimiter(2)
        order: list[int] = []
        first = [await lim.acquire(), await lim.acquire()]

        async def worker(i: int) -> None:
            await lim.acquire()
            order.append(i)

        tasks = [asyncio.create_task(worker(i)) for i in range(3)]
        await asyncio.sleep(0)
        assert lim.waiting == 3
        lim.throttled(first[0], 1.0)  # limit 2 → 1: the freed slot stays free (1 in flight)
        await asyncio.sleep(0)
        assert order == [] and lim.in_flight == 1
        lim.success(0.1)  # in flight 0, limit 1 → threshold... one waiter may start
        await asyncio.sleep(0)
        assert order == [0]
        lim.failed()
        await asyncio.sleep(0)
        assert order == [0, 1]
        for t in tasks:
            t.cancel()

    asyncio.run(go())


def test_a_cancelled_waiter_gives_back_nothing_it_did_not_get() -> None:
    async def go() -> None:
        lim = AimdLimiter(1)
        await lim.acquire()
        task = asyncio.create_task(lim.acquire())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert lim.waiting == 0 and lim.in_flight == 1
        lim.success(0.1)
        assert lim.in_flight == 0
        t0 = time.monotonic()
        await lim.acquire()
        assert time.monotonic() - t0 < 0.1

    asyncio.run(go())


def test_no_probe_above_the_carried_level_before_retry_after_has_passed() -> None:
    async def go() -> None:
        lim = AimdLimiter(16)
        starts = [await lim.acquire() for _ in range(9)]
        lim.throttled(starts[0], 0.2)  # the judge carried 8: threshold 8, limit 8
        assert (lim.limit, lim.threshold) == (8, 8)
        # plenty of work queued, so probing would be worth it
        lim._waiters.extend(asyncio.get_running_loop().create_future() for _ in range(100))
        lim.in_flight = 100  # nobody is woken: only the limit moves
        for _ in range(8):
            lim.success(0.05)
        assert lim.limit == 8  # within Retry-After of the cut: no probe
        await asyncio.sleep(0.25)
        for _ in range(8):
            lim.success(0.05)
        assert 8 < lim.limit <= 9  # +1 per window once it has passed

    asyncio.run(go())


def test_a_waiter_cancelled_before_its_turn_came_leaves_cleanly() -> None:
    async def go() -> None:
        lim = AimdLimiter(1)
        await lim.acquire()
        first = asyncio.create_task(lim.acquire())
        second = asyncio.create_task(lim.acquire())
        await asyncio.sleep(0)
        first.cancel()  # cancelled while waiting, its handler not run yet
        lim.success(0.1)  # the freed slot passes over the cancelled waiter to the next
        with pytest.raises(asyncio.CancelledError):
            await first
        await second
        assert lim.in_flight == 1 and lim.waiting == 0

    asyncio.run(go())


def test_a_failed_probe_returns_to_the_carried_level_and_a_429_below_it_halves() -> None:
    async def go() -> None:
        lim = AimdLimiter(16)
        starts = [await lim.acquire() for _ in range(9)]
        lim.throttled(starts[0], 0.0)  # the judge carried 8
        assert (lim.limit, lim.threshold) == (8, 8)
        lim._waiters.extend(asyncio.get_running_loop().create_future() for _ in range(100))
        lim.in_flight = 100  # nobody is woken: only the limit moves
        for _ in range(9):
            lim.success(0.05)
        assert lim.slots == 9  # probing one above
        probe = time.monotonic()
        lim.throttled(probe, 0.0)
        assert (lim.limit, lim.threshold, lim.cuts) == (8, 8, 2)  # back to 8, not 4.5
        lim.throttled(time.monotonic(), 0.0)  # a 429 at the carried level: the judge slowed
        assert lim.limit == 4 and lim.cuts == 3

    asyncio.run(go())
