"""What a sandbox batch lacks: the streak of model API failures that stops it starting runs,
and the one line that says what is incomplete and the commands that complete it
(scorer.completeness has the rule)."""

from __future__ import annotations

import threading
from pathlib import Path

from proxy_addon.records import BatchStatus, BatchSummary, Category, Ending, is_infra_category
from sandbox.runs import say
from scorer.completeness import (
    Incomplete,
    incomplete_line,
    incompleteness,
    run_name,
    score_command,
)
from scorer.scoring import ScoreResult


class ApiStreak:
    """Runs in a row (as they finish) whose model API failed; any run the model answered in
    ends the streak (another infra failure neither adds nor ends it)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.count = 0
        self.last: str | None = None
        self.halted = threading.Event()
        self._lock = threading.Lock()

    def add(self, ending: Ending) -> None:
        with self._lock:
            if ending.category == Category.MODEL_API_FAILURE:
                self.count, self.last = self.count + 1, ending.failure_reason
            elif not is_infra_category(ending.category):
                self.count = 0
            if self.limit and self.count >= self.limit and not self.halted.is_set():
                self.halted.set()
                say(f"STOP  {self.count} runs in a row ended model_api_failure ({self.last}); "
                    "starting no new run")  # fmt: skip


def incomplete_batch(
    batch_dir: Path,
    corpus: Path,
    summary: BatchSummary,
    result: ScoreResult | None,
    streak: ApiStreak,
    judge: str | None,
    models_yaml: Path | None,
) -> str | None:
    """The line that says what the batch lacks and how to complete it; None when complete."""
    found = incompleteness(result) if result is not None else Incomplete()
    if result is None:  # not scored: the runs' own statuses say which are infra failures
        for job in summary.jobs:
            if job.status is BatchStatus.ERROR:
                found.infra.append(run_name(job.model, summary.harness, job.case, job.run_dir))
                found.model_api += job.result_category == Category.MODEL_API_FAILURE
    resume = f"clawbench-sandbox batch {corpus} <the same options> --resume {batch_dir}"
    stopped = None
    if streak.halted.is_set():
        skipped = summary.totals.get(BatchStatus.SKIPPED, 0)
        stopped = (
            f"the batch stopped after {streak.count} runs in a row ended model_api_failure "
            f"({streak.last}) and started no more: {skipped} run(s) not started; fix the "
            f"model's key, quota or endpoint, then `{resume}`"
        )
    if not found and stopped is None:
        return None
    again = score_command(batch_dir, [judge] if judge else (), models_yaml)
    return incomplete_line(found, again, resume, stopped)


__all__ = ["ApiStreak", "incomplete_batch"]
