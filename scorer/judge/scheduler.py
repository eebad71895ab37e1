"""Judge a batch of calls: AIMD concurrency, retries, 429s re-queued (SPEC section 6).

A 429 frees the slot, waits Retry-After and queues the call again without spending its error
budget, up to a deadline. A 5xx, a timeout, a connection error or a blank reply spends one of
its tries (3, with exponential backoff). A 400 naming response_format retries once without JSON
mode; a refused key or an unknown model stops the batch (JudgeFatal). Each result is handed to
on_result as soon as it is known, so it can be saved before the next one arrives.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scorer.judge.client import JudgeCallError, JudgeClient
from scorer.judge.limiter import AimdLimiter
from scorer.judge.prompts import render
from scorer.judge.verdict import RAW_LIMIT, Verdict, parse_verdict


class JudgeFatal(RuntimeError):
    """The judge cannot serve this batch at all (key refused, no such model)."""


@dataclass
class JudgeJob:
    """One verdict to obtain: the inputs before rendering, and who asked (key)."""

    key: Any
    rubric: str
    instruction: str
    dump: str
    judge_context: dict[str, Any] | None


@dataclass
class JudgeResult:
    job: JudgeJob
    verdict: Verdict
    raw: str | None = None
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float | None = None


@dataclass
class EngineStats:
    calls: int = 0
    throttled: int = 0
    failed_calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    json_mode: bool = True
    cuts: int = 0
    min_limit: float = 0.0
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)


class Engine:
    """Runs JudgeJobs through one JudgeClient."""

    def __init__(
        self,
        client: JudgeClient,
        concurrency: int,
        *,
        tries: int = 3,
        backoff: float = 0.5,
        rate_deadline: float = 600.0,
    ) -> None:
        self.client = client
        self.limiter = AimdLimiter(concurrency)
        self.tries = tries
        self.backoff = backoff
        self.rate_deadline = rate_deadline
        self.stats = EngineStats()
        self._min_limit = float(concurrency)

    def _backoff(self, spent: int) -> float:
        return self.backoff * 2 ** (spent - 1) * (1 + random.random() / 4)

    async def _judge(self, job: JudgeJob) -> JudgeResult:
        res = JudgeResult(job, Verdict(None, "", "not judged"))
        first = time.monotonic()
        spent = 0
        format_retried = False
        while True:
            started = await self.limiter.acquire()
            res.attempts += 1
            self.stats.calls += 1
            system, user = render(job.rubric, job.instruction, job.dump, job.judge_context)
            try:
                reply = await self.client.complete(system, user)
            except JudgeCallError as e:
                if e.kind == "rate_limited":
                    self.limiter.throttled(started, e.retry_after)
                    self.stats.throttled += 1
                    self._min_limit = min(self._min_limit, self.limiter.limit)
                    wait = e.retry_after * (1 + random.random() / 10)
                    if time.monotonic() + wait - first > self.rate_deadline:
                        res.verdict = Verdict(
                            None, "", f"still rate limited after {self.rate_deadline:g} s"
                        )
                        return res
                    await asyncio.sleep(wait)
                    continue
                self.limiter.failed()
                self.stats.failed_calls += 1
                if e.kind == "fatal":
                    raise JudgeFatal(str(e)) from None
                if e.kind == "format" and not format_retried:
                    format_retried = True
                    if self.client.json_mode:
                        self.client.json_mode = False
                        self.stats.notes.append(f"JSON mode off after: {e}")
                    continue
                spent += 1
                if e.kind in ("permanent", "format") or spent >= self.tries:
                    tries = f" after {spent} tries" if spent > 1 else ""
                    res.verdict = Verdict(None, "", f"{e}{tries}")
                    return res
                await asyncio.sleep(self._backoff(spent))
                continue
            except Exception as e:  # a bug of ours, never a lost run: an error verdict instead
                self.limiter.failed()
                self.stats.failed_calls += 1
                why = self.client.scrub(f"{type(e).__name__}: {e}")[:300]
                res.verdict = Verdict(None, "", f"internal error in the judge call: {why}")
                return res
            self.limiter.success(reply.latency_s)
            res.input_tokens += reply.input_tokens
            res.output_tokens += reply.output_tokens
            res.latency_s = round(reply.latency_s, 4)
            if reply.text is None or not reply.text.strip():
                spent += 1
                if spent >= self.tries:
                    res.raw = reply.text
                    res.verdict = Verdict(None, "", f"blank reply after {spent} tries")
                    return res
                await asyncio.sleep(self._backoff(spent))
                continue
            res.raw = self.client.scrub(reply.text)[:RAW_LIMIT]
            verdict = parse_verdict(reply.text)
            res.verdict = Verdict(
                verdict.match,
                self.client.scrub(verdict.reason),
                self.client.scrub(verdict.error) if verdict.error else None,
            )
            return res

    def start(self, on_result: Callable[[JudgeResult], None]) -> None:
        """Begin a session: submit() jobs (from the running loop), then await join()."""
        self._on_result = on_result
        self._tasks: set[asyncio.Task[None]] = set()
        self._fatal: JudgeFatal | None = None
        self._started = time.monotonic()

    def submit(self, job: JudgeJob) -> None:
        """Queue one job; it starts as soon as the limiter gives it a slot."""
        task = asyncio.create_task(self._one(job))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _one(self, job: JudgeJob) -> None:
        try:
            res = await self._judge(job)
        except JudgeFatal as e:
            if self._fatal is None:
                self._fatal = e
                for task in list(self._tasks):
                    if task is not asyncio.current_task():
                        task.cancel()
            return
        if res.verdict.match is None:
            self.stats.errors += 1
        self.stats.input_tokens += res.input_tokens
        self.stats.output_tokens += res.output_tokens
        self._on_result(res)

    async def join(self) -> EngineStats:
        """Wait for every submitted job; JudgeFatal if the judge cannot serve the batch."""
        try:
            while self._tasks and self._fatal is None:
                await asyncio.wait(set(self._tasks))
        finally:
            for task in list(self._tasks):
                task.cancel()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            self.stats.json_mode = self.client.json_mode
            self.stats.cuts = self.limiter.cuts
            self.stats.min_limit = self._min_limit
            self.stats.wall_s = time.monotonic() - self._started
        if self._fatal is not None:
            raise self._fatal
        return self.stats

    async def run(
        self, jobs: Sequence[JudgeJob], on_result: Callable[[JudgeResult], None]
    ) -> EngineStats:
        """Judge every job (on_result as each one ends); JudgeFatal stops them all."""
        self.start(on_result)
        for job in jobs:
            self.submit(job)
        return await self.join()


__all__ = ["Engine", "EngineStats", "JudgeFatal", "JudgeJob", "JudgeResult"]
