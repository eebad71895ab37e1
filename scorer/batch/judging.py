"""Judge the planned runs that need it, and record every verdict the moment it arrives.

A run is judged when it counts (the newest of its task, inside the corpus) and --limit leaves
room; any other run is settled at once with the verdicts already on disk. Each verdict is
written to its judge file, and the run's run-meta.json once its last verdict is in, so an
interrupted batch resumes from what it received. A judge error never erases a saved verdict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from scorer.batch.runplan import JudgeSpec, Plan, finish
from scorer.batch.scored_run import RubricVerdict
from scorer.batch.writer import Files, Writer, judge_record, meta_file, verdict_file
from scorer.judge.client import JudgeClient
from scorer.judge.scheduler import CallStats, JudgeResult, Scheduler


class Progress(Protocol):
    """What a caller may watch: jobs queued, each result, the end."""

    def queued(self, n: int) -> None: ...

    def judged(self, result: JudgeResult) -> None: ...

    def done(self) -> None: ...


class NoProgress:
    """Progress that shows nothing."""

    def queued(self, n: int) -> None: ...

    def judged(self, result: JudgeResult) -> None: ...

    def done(self) -> None: ...


@dataclass
class Tally:
    """What this invocation did with the verdicts."""

    to_judge: int = 0  # verdicts asked of the judge
    cached: int = 0  # read from our judge files
    reused_priors: int = 0  # the reference's verdicts reused
    pending_left: int = 0  # verdicts a re-run would still ask for (errors, --limit)
    kept_on_error: int = 0  # --force calls that failed: the saved verdict stands


@dataclass(frozen=True)
class CallSettings:
    """How the judge is called: slots, per-call timeout, backoff, the 429 deadline."""

    concurrency: int = 16
    timeout: float = 60.0
    backoff: float = 0.5
    rate_deadline: float = 600.0


class Judging:
    """One invocation's judging: settle, judge, record."""

    def __init__(self, spec: JudgeSpec | None, writer: Writer, progress: Progress) -> None:
        self.spec = spec
        self.writer = writer
        self.progress = progress
        self.tally = Tally()
        self._plans: dict[int, Plan] = {}

    def select(self, plans: Sequence[tuple[Plan, bool]], limit: int | None) -> list[Plan]:
        """The plans to judge now (counted, under --limit); every other one is settled."""
        chosen: list[Plan] = []
        for plan, counted in plans:
            if plan.pending and counted and (limit is None or len(chosen) < limit):
                chosen.append(plan)
            else:
                self.settle(plan, counted)
            verdicts = plan.scored.verdicts.values()
            self.tally.cached += sum(v.cached for v in verdicts)
            self.tally.reused_priors += sum(v.source.startswith("reference") for v in verdicts)
        return chosen

    def settle(self, plan: Plan, counted: bool) -> None:
        """Finish a run not judged this time: the verdicts on disk stand."""
        if plan.pending and counted:
            self.tally.pending_left += len(plan.pending)  # left by --limit
        for rubric, pending in plan.pending.items():
            if pending.saved is not None:
                plan.scored.verdicts[rubric] = pending.saved
        plan.pending.clear()  # or a superseded re-run, or a task outside the corpus
        finish(plan.scored)
        self.writer.write(meta_file(plan))

    def judge(self, plans: list[Plan], calls: CallSettings) -> CallStats | None:
        """Ask the judge for every pending verdict of these plans; JudgeFatal stops them all."""
        if not plans or self.spec is None:
            return None
        jobs = [p.job for plan in plans for p in plan.pending.values()]
        self._plans = {id(plan): plan for plan in plans}
        self.tally.to_judge += len(jobs)
        self.progress.queued(len(jobs))
        return asyncio.run(self._run(jobs, calls))

    async def _run(self, jobs: list, calls: CallSettings) -> CallStats:
        assert self.spec is not None
        client = JudgeClient(self.spec.config, calls.timeout)
        scheduler = Scheduler(
            client, calls.concurrency, backoff=calls.backoff, rate_deadline=calls.rate_deadline
        )
        try:
            return await scheduler.run(jobs, self.record)
        finally:
            self.progress.done()
            await client.close()

    def record(self, res: JudgeResult) -> None:
        """One verdict arrived: into the scored run and its judge file (run-meta.json last)."""
        plan = self._plans[res.job.key[0]]
        rubric, v = res.job.rubric, res.verdict
        pending = plan.pending.pop(rubric)
        saved = pending.saved
        files: Files = []
        if v.match is None and saved is not None and saved.match is not None:
            # --force and the judge failed: the verdict on disk stands (an error never erases)
            plan.scored.verdicts[rubric] = saved
            plan.scored.notes.append(f"{rubric}: judge error ({v.error}); the saved verdict stands")
            self.tally.kept_on_error += 1
        else:
            assert self.spec is not None
            record = judge_record(self.spec, plan, pending, res)
            plan.scored.verdicts[rubric] = RubricVerdict(
                v.match, v.reason, "judge", v.error, res.input_tokens, res.output_tokens
            )
            if v.match is None:
                self.tally.pending_left += 1  # a re-run asks again
            files = verdict_file(record, plan)
        if not plan.pending:
            finish(plan.scored)
            files += meta_file(plan)
        self.writer.write(files)
        self.progress.judged(res)


__all__ = ["CallSettings", "Judging", "NoProgress", "Progress", "Tally"]
