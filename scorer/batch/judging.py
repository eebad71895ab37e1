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
from scorer.judge import CallSettings, CallStats, JudgeFatal, JudgeJob, JudgeResult, run_judge


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
            verdicts = [
                v for by_rubric in plan.scored.verdicts.values() for v in by_rubric.values()
            ]
            self.tally.cached += sum(v.cached for v in verdicts)
            self.tally.reused_priors += sum(v.source.startswith("reference") for v in verdicts)
        return chosen

    def settle(self, plan: Plan, counted: bool) -> None:
        """Finish a run not judged this time: the verdicts on disk stand."""
        if plan.pending and counted:
            self.tally.pending_left += len(plan.pending)  # left by --limit
        for (judge, rubric), pending in plan.pending.items():
            if pending.saved is not None:
                plan.scored.verdicts[judge][rubric] = pending.saved
        plan.pending.clear()  # or a superseded re-run, or a task outside the corpus
        finish(plan.scored)
        self.writer.write(meta_file(plan))

    def expect(self, plan: Plan) -> None:
        """Verdicts for this plan may come to `record` (a caller with its own scheduler)."""
        self._plans[id(plan)] = plan

    def judge(self, plans: list[Plan], calls: CallSettings) -> dict[str, CallStats]:
        """Ask the judges for every pending verdict of these plans (each judge its own client and
        limiter, all at once); JudgeFatal from any stops them all. The call counts per judge."""
        if not plans or self.spec is None:
            return {}
        self._plans = {id(plan): plan for plan in plans}
        jobs: dict[str, list[JudgeJob]] = {}
        for plan in plans:
            for pending in plan.pending.values():
                jobs.setdefault(pending.job.judge, []).append(pending.job)
        self.tally.to_judge += sum(len(j) for j in jobs.values())
        self.progress.queued(sum(len(j) for j in jobs.values()))
        return asyncio.run(self._run(jobs, calls))

    async def _run(
        self, jobs: dict[str, list[JudgeJob]], calls: CallSettings
    ) -> dict[str, CallStats]:
        assert self.spec is not None
        configs = [c for c in self.spec.configs if c.name in jobs]
        try:
            async with asyncio.TaskGroup() as group:
                runs = [
                    group.create_task(run_judge(c, jobs[c.name], self.record, calls))
                    for c in configs
                ]
        except* JudgeFatal as failed:
            raise failed.exceptions[0] from None
        finally:
            self.progress.done()
        return {c.name: run.result() for c, run in zip(configs, runs, strict=True)}

    def record(self, res: JudgeResult) -> None:
        """One verdict arrived: into the scored run and its judge file (run-meta.json last)."""
        plan = self._plans[res.job.key[0]]
        judge, rubric, v = res.job.judge, res.job.rubric, res.reply
        pending = plan.pending.pop((judge, rubric))
        verdicts = plan.scored.verdicts[judge]
        saved = pending.saved
        files: Files = []
        if v.verdict is None and saved is not None and saved.verdict is not None:
            # --force and the judge failed: the verdict on disk stands (an error never erases)
            verdicts[rubric] = saved
            note = f"{judge} {rubric}: judge error ({v.error}); the saved verdict stands"
            plan.scored.notes.append(note)
            self.tally.kept_on_error += 1
        else:
            assert self.spec is not None
            record = judge_record(self.spec, plan, pending, res)
            verdicts[rubric] = RubricVerdict(
                v.verdict,
                v.reason,
                "judge",
                v.error,
                res.tokens,
                missing=v.missing,
            )
            if v.verdict is None:
                self.tally.pending_left += 1  # a re-run asks again
            files = verdict_file(record, pending)
        if not plan.pending:
            finish(plan.scored)
            files += meta_file(plan)
        self.writer.write(files)
        self.progress.judged(res)


__all__ = ["Judging", "NoProgress", "Progress", "Tally"]
