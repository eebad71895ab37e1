"""Run a judge on a labelled calibration set (scorer.calibration) and score it against the labels.

Each case is judged with the prompt a real run gets: the task's instruction, the request dump
(url, method, body; secrets redacted, cut at the dump limit) and the task's judge_context. No
verdict is cached: a calibration measures the judge as it answers now.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from scorer.calibration import (
    CalibrationCase,
    CalibrationMetrics,
    cases_of,
    load_set,
    metrics,
    metrics_by_kind,
)
from scorer.judge.prompts import DUMP_LIMIT, request_dump
from scorer.judge.scheduler import CallSettings, CallStats, JudgeJob, JudgeResult, run_judge
from scorer.models_yaml import JudgeConfig


@dataclass
class CalibrationRun:
    """A judge's verdicts on every case of a set, and its figures against the labels."""

    judge: str
    rubric: str
    cases: list[CalibrationCase]
    predictions: list[bool | None]
    reasons: list[str | None]  # the judge's reason, or its error when it gave no verdict
    metrics: CalibrationMetrics
    calls: CallStats

    def misses(self) -> list[dict[str, Any]]:
        """Every case the judge got wrong (errors included), with its reason and the label's."""
        return [
            {"id": c.id, "kind": c.kind, "label": c.label, "judge": p, "reason": r, "why": c.why}
            for c, p, r in zip(self.cases, self.predictions, self.reasons, strict=True)
            if p != c.label
        ]

    def to_json(self) -> dict[str, Any]:
        """The run as --json prints it."""
        by_kind = metrics_by_kind(self.cases, self.predictions)
        return {
            "judge": self.judge,
            "rubric": self.rubric,
            "metrics": asdict(self.metrics),
            "by_kind": {k: asdict(m) for k, m in by_kind.items()},
            "misses": self.misses(),
        }


def calibrate(
    gold: Path,
    judge: JudgeConfig,
    rubric: str = "strict",
    calls: CallSettings | None = None,
    dump_limit: int = DUMP_LIMIT,
) -> CalibrationRun:
    """Judge every case of the set at gold (CalibrationError on a bad file; JudgeFatal when the
    judge cannot serve)."""
    pairs = cases_of(load_set(gold))
    jobs = []
    for i, (task, case) in enumerate(pairs):
        dump = request_dump(case.request.as_request(), dump_limit).text
        context = task.judge_context.model_dump(exclude_none=True) if task.judge_context else None
        jobs.append(JudgeJob(i, rubric, task.instruction, dump, context, judge=judge.name))
    results: dict[int, JudgeResult] = {}

    def keep(res: JudgeResult) -> None:
        results[res.job.key] = res

    stats = asyncio.run(run_judge(judge, jobs, keep, calls or CallSettings()))
    verdicts = [results[i].verdict for i in range(len(pairs))]
    cases = [case for _, case in pairs]
    predictions = [v.match for v in verdicts]
    reasons = [v.reason if v.match is not None else v.error for v in verdicts]
    scored = metrics([c.label for c in cases], predictions)
    return CalibrationRun(judge.name, rubric, cases, predictions, reasons, scored, stats)


__all__ = ["CalibrationRun", "calibrate"]
