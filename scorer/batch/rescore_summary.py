"""rescore-summary.json's model: the reference's keys first, ours after (SPEC section 7).

The scorer writes it alone (batch.aggregate builds it; forbid unknown keys). The unit of a score
is an entry: one (model, harness) in a batch, with its leaderboard row. The file holds no clock
time, so a resumed run writes the same summary.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

_FORBID = ConfigDict(extra="forbid")


class Tokens(BaseModel):
    model_config = _FORBID

    input_tokens: int = 0
    output_tokens: int = 0


class LeaderboardRow(BaseModel):
    """model,harness,dataset,passed,total,pass_rate,wall_hours (pass_rate in percent)."""

    model_config = _FORBID

    model: str
    harness: str
    dataset: str
    passed: int
    total: int
    pass_rate: str
    wall_hours: str


class Counts(BaseModel):
    model_config = _FORBID

    n_total: int = 0
    n_runs: int = 0
    n_intercepted: int = 0
    n_passed: int = 0
    n_judge_match: int = 0
    n_judge_mismatch: int = 0
    n_judge_error: int = 0
    n_unjudged: int = 0
    n_model_not_intercepted: int = 0
    n_infra_failure: int = 0
    n_missing: int = 0
    n_extra: int = 0
    n_rerun: int = 0
    n_recheck_failed: int = 0
    n_recheck_skipped: int = 0
    pass_rate_stage1_only: float = 0.0
    pass_rate_with_judge: float | None = None


class Entry(Counts):
    """One (model, harness) of the batch."""

    model: str
    harness: str
    dataset: str
    wall_hours: float
    missing: list[str] = Field(default_factory=list)
    leaderboard: LeaderboardRow | None  # None: nobody to credit (runs no file or path names)


class TaskRow(BaseModel):
    """One row of tasks[]: a run (counted, re-run or extra) or a missing corpus task."""

    model_config = _FORBID

    task_id: int | str | None = None
    test_case: str | None = None
    status: Literal["counted", "rerun", "extra", "missing"]
    intercepted: bool = False
    result_category: str | None = None
    final_pass: bool = False
    model: str | None = None
    harness: str | None = None
    run_dir: str | None = None
    match_strict: bool | None = None
    reason_strict: str | None = None
    match_lenient: bool | None = None
    reason_lenient: str | None = None
    verdict_source: str | None = None
    judge_error: str | None = None
    recheck: dict[str, Any] | None = None
    reference_category: str | None = None
    infra_reason: str | None = None
    notes: list[str] = Field(default_factory=list)


class Summary(Counts):
    """<batch>/rescore-summary.json: the reference's keys first, ours after."""

    batch_dir: str
    n_match_strict: int | None = None
    n_mismatch_strict: int | None = None
    n_judge_err_strict: int | None = None
    reward_pct_strict: float | None = None
    n_match_lenient: int | None = None
    n_mismatch_lenient: int | None = None
    n_judge_err_lenient: int | None = None
    reward_pct_lenient: float | None = None
    judge_model: str | None = None
    rubric: str | None = None
    rubrics: list[str] = Field(default_factory=list)
    prompt_version: str | None = None
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    tokens: Tokens = Field(default_factory=Tokens)
    dataset: str | None = None
    corpus: str | None = None
    enforce_recheck: bool = False
    entries: list[Entry] = Field(default_factory=list)
    tasks: list[TaskRow] = Field(default_factory=list)
    provenance: dict[str, str | None] = Field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The file's content: per-rubric keys only for the rubrics that ran."""
        skip = {
            f"{k}_{r}"
            for r in ("strict", "lenient")
            if r not in self.rubrics
            for k in ("n_match", "n_mismatch", "n_judge_err", "reward_pct")
        }
        not_run = {
            f"{k}_{r}"
            for r in ("strict", "lenient")
            if r not in self.rubrics
            for k in ("match", "reason")
        }
        rows = [t.model_dump(exclude=not_run) for t in self.tasks]
        out = self.model_dump(mode="json", exclude=skip | {"tasks"})
        out["tasks"] = rows
        return out


__all__ = ["Counts", "Entry", "LeaderboardRow", "Summary", "TaskRow", "Tokens"]
