"""Many judge calls through one client: AIMD concurrency, retries, 429s re-queued (docs/formats.md,
"The judge's calls").

A 429 frees the slot, waits Retry-After and queues the call again without spending its error
budget, up to a deadline. A 5xx, a timeout, a connection error or a blank reply spends one of
its tries (3, with exponential backoff). A 400 naming response_format retries once without JSON
mode; a refused key or an unknown model stops every call (JudgeFatal). Each result is handed to
on_result as soon as it is known, so it can be saved before the next one arrives.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from proxy_addon.records import Tokens
from scorer.judge.client import Completion, JudgeCallError, JudgeClient
from scorer.judge.evidence import JudgeInput
from scorer.judge.limiter import AimdLimiter
from scorer.judge.prompts import render
from scorer.judge.verdict import RAW_LIMIT, Reply, parse_reply

if TYPE_CHECKING:  # annotations only: models_yaml imports the judge's providers
    from scorer.models_yaml import JudgeConfig


class JudgeFatal(RuntimeError):
    """The judge cannot serve this batch at all (key refused, no such model)."""


@dataclass
class JudgeJob:
    """One verdict to obtain: the inputs before rendering, who asks (key), of which judge."""

    key: Any
    rubric: str
    input: JudgeInput
    judge: str = ""  # the judge's name (its entry in models.yaml)


@dataclass
class JudgeResult:
    job: JudgeJob
    reply: Reply
    raw: str | None = None
    attempts: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    latency_s: float | None = None


@dataclass
class CallStats:
    calls: int = 0
    throttled: int = 0
    failed_calls: int = 0
    errors: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    json_mode: bool = True
    cuts: int = 0
    min_limit: float = 0.0
    wall_s: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CallSettings:
    """How a judge is called: slots at most, per-call timeout, backoff, the 429 deadline."""

    concurrency: int = 16
    timeout: float = 60.0
    backoff: float = 0.5
    rate_deadline: float = 600.0


@dataclass
class _Attempts:
    """One job's progress through its tries: when it began, tries spent, the format retry."""

    first: float
    spent: int = 0
    format_retried: bool = False


_DONE = None  # what a step returns when the job has its result


class Scheduler:
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
        self.stats = CallStats(min_limit=float(concurrency))

    def _backoff(self, spent: int) -> float:
        return self.backoff * 2 ** (spent - 1) * (1 + random.random() / 4)

    async def judge(self, job: JudgeJob) -> JudgeResult:
        """One verdict: call until a reply parses, the tries run out or the deadline passes."""
        res = JudgeResult(job, Reply(None, "", "not judged"))
        tries = _Attempts(time.monotonic())
        while True:
            started = await self.limiter.acquire()
            res.attempts += 1
            self.stats.calls += 1
            system, user = render(job.rubric, job.input)
            try:
                reply = await self.client.complete(system, user)
            except JudgeCallError as e:
                wait = self._after_error(e, started, res, tries)
            except Exception as e:  # a bug of ours, never a lost run: an error verdict instead
                self.limiter.failed()
                self.stats.failed_calls += 1
                why = self.client.scrub(f"{type(e).__name__}: {e}")[:300]
                res.reply = Reply(None, "", f"internal error in the judge call: {why}")
                return res
            else:
                wait = self._after_reply(reply, res, tries)
            if wait is _DONE:
                return res
            await asyncio.sleep(wait)

    def _after_error(
        self, e: JudgeCallError, started: float, res: JudgeResult, tries: _Attempts
    ) -> float | None:
        """Seconds to wait before the next try, or None when res holds the final verdict."""
        if e.kind == "rate_limited":
            self.limiter.throttled(started, e.retry_after)
            self.stats.throttled += 1
            self.stats.min_limit = min(self.stats.min_limit, self.limiter.limit)
            wait = e.retry_after * (1 + random.random() / 10)
            if time.monotonic() + wait - tries.first > self.rate_deadline:
                res.reply = Reply(None, "", f"still rate limited after {self.rate_deadline:g} s")
                return _DONE
            return wait
        self.limiter.failed()
        self.stats.failed_calls += 1
        if e.kind == "fatal":
            raise JudgeFatal(str(e)) from None
        if e.kind == "format" and not tries.format_retried:
            tries.format_retried = True
            if self.client.json_mode:
                self.client.json_mode = False
                self.stats.notes.append(f"JSON mode off after: {e}")
            return 0.0
        tries.spent += 1
        if e.kind in ("permanent", "format") or tries.spent >= self.tries:
            after = f" after {tries.spent} tries" if tries.spent > 1 else ""
            res.reply = Reply(None, "", f"{e}{after}")
            return _DONE
        return self._backoff(tries.spent)

    def _after_reply(self, reply: Completion, res: JudgeResult, tries: _Attempts) -> float | None:
        """Record a reply; a blank one spends a try (seconds to wait), else None: done."""
        self.limiter.success(reply.latency_s)
        res.tokens += reply.tokens
        res.latency_s = round(reply.latency_s, 4)
        if reply.text is None or not reply.text.strip():
            tries.spent += 1
            if tries.spent < self.tries:
                return self._backoff(tries.spent)
            res.raw = reply.text
            res.reply = Reply(None, "", f"blank reply after {tries.spent} tries")
            return _DONE
        scrub = self.client.scrub
        res.raw = scrub(reply.text)[:RAW_LIMIT]
        parsed = parse_reply(reply.text)
        res.reply = replace(
            parsed,
            reason=scrub(parsed.reason),
            error=scrub(parsed.error) if parsed.error else None,
            missing=scrub(parsed.missing),
            checks=tuple(
                c.model_copy(update={k: scrub(getattr(c, k)) for k in ("requirement", "value")})
                for c in parsed.checks
            ),
        )
        return _DONE

    async def run(
        self, jobs: Sequence[JudgeJob], on_result: Callable[[JudgeResult], None]
    ) -> CallStats:
        """Judge every job (on_result as each one ends); JudgeFatal cancels the rest."""
        started = time.monotonic()

        async def one(job: JudgeJob) -> None:
            res = await self.judge(job)
            if res.reply.verdict is None:
                self.stats.errors += 1
            self.stats.tokens += res.tokens
            on_result(res)

        try:
            async with asyncio.TaskGroup() as group:
                for job in jobs:
                    group.create_task(one(job))
        except* JudgeFatal as failed:
            raise failed.exceptions[0] from None
        finally:
            self.stats.json_mode = self.client.json_mode
            self.stats.cuts = self.limiter.cuts
            self.stats.wall_s = time.monotonic() - started
        return self.stats


async def run_judge(
    config: JudgeConfig,
    jobs: Sequence[JudgeJob],
    on_result: Callable[[JudgeResult], None],
    calls: CallSettings,
) -> CallStats:
    """Judge every job with one judge entry: its own client and limiter, closed at the end."""
    client = JudgeClient(config, calls.timeout)
    scheduler = Scheduler(
        client, calls.concurrency, backoff=calls.backoff, rate_deadline=calls.rate_deadline
    )
    try:
        return await scheduler.run(jobs, on_result)
    finally:
        await client.close()


__all__ = [
    "CallSettings",
    "CallStats",
    "JudgeFatal",
    "JudgeJob",
    "JudgeResult",
    "Scheduler",
    "run_judge",
]
