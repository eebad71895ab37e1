"""rescore-summary.json's model: the reference's keys first, ours after (docs/formats.md,
"rescore-summary.json").

The scorer writes it alone (batch.aggregate builds it; forbid unknown keys). The unit of a score
is an entry: one (model, harness) in a batch, with its leaderboard row. The file holds no clock
time, so a resumed run writes the same summary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from proxy_addon.records import AnyCategory, JudgeVerdict, ModelUsage, Tokens, read_verdicts

SUMMARY_FILE = "rescore-summary.json"
_FORBID = ConfigDict(extra="forbid")


class SummaryError(ValueError):
    """A batch's rescore-summary.json cannot be read; the message names it and the fix."""


NOT_JUDGED = "not judged"
"""The leaderboard row's judge when no judge gave verdicts (Stage 1 only)."""


class LeaderboardRow(BaseModel):
    """The reference's model,harness,dataset,passed,total,pass_rate,wall_hours, then the pass
    rate's Wilson 95% interval (all rates in percent, 2 decimals), the agents' tokens and cost
    ("" in rows written before, and where unknown), the intercepted count, the judge and the
    runs it could not decide.

    Without a judge nothing is passed: passed is None and the pass columns are empty, judge is
    NOT_JUDGED."""

    model_config = _FORBID

    model: str
    harness: str
    dataset: str
    passed: int | None
    total: int
    pass_rate: str
    wall_hours: str
    pass_rate_ci_low: str = ""
    pass_rate_ci_high: str = ""
    agent_input_tokens: str = ""  # "" when no run recorded usage
    agent_output_tokens: str = ""
    agent_cost_usd: str = ""  # 4 decimals; "" unless every run with usage is priced
    intercepted: int | None = None  # None in rows written before it was a column
    judge: str = ""  # the deciding judge, NOT_JUDGED for Stage 1 only; "" in rows written before
    judge_cannot_tell: str = ""  # counted runs the judge answered cannot_tell; "" not judged
    judge_input_tokens: str = ""  # the judges' own tokens; "" without a verdict of ours
    judge_output_tokens: str = ""
    judge_cost_usd: str = ""  # 4 decimals; "" unless every judge is priced

    @property
    def judged(self) -> bool:
        return self.passed is not None


class AgentUsageTotals(ModelUsage):
    """The agents' own model calls over runs (run-meta.json's agent_usage, counted by the proxy),
    priced with models.yaml's price_per_million_tokens. Every run counts, re-runs and extras
    included: it is what the batch spent."""

    model_config = _FORBID

    runs_with_usage: int = 0
    runs_without_usage: int = 0  # no agent_usage: not a harness run, or no call went out
    cost_usd: float | None = None  # None unless every run with usage is priced
    runs_unpriced: int = 0  # runs with usage whose models have no price in --models-yaml
    runs_usage_incomplete: int = 0  # runs whose agent also called a model API not counted


class JudgeUsageTotals(Tokens):
    """The judges' own calls over runs (each verdict's judge.json usage, re-used verdicts
    included), priced with the judge entries' price_per_million_tokens in models.yaml."""

    model_config = _FORBID

    verdicts: int = 0  # verdicts a judge of ours gave (the reference's cost nothing here)
    cost_usd: float | None = None  # None unless every judge that answered is priced
    unpriced: list[str] = Field(default_factory=list)  # judges without a price in --models-yaml


class Counts(BaseModel):
    model_config = _FORBID

    n_total: int = 0
    n_runs: int = 0
    n_intercepted: int = 0
    n_body_unverified: int = 0  # of n_intercepted: credited with a body the proxy could not read
    n_passed: int | None = 0  # None: not judged (Stage 1 only), so nothing is passed
    n_judge_match: int = 0
    n_judge_mismatch: int = 0
    n_judge_cannot_tell: int = 0  # the judge answered cannot_tell: not passed, not a mismatch
    n_judge_error: int = 0
    n_unjudged: int = 0
    n_model_not_intercepted: int = 0
    n_infra_failure: int = 0
    n_model_api_failure: int = 0  # of n_infra_failure: the model API failed the run's own calls
    n_missing: int = 0
    n_extra: int = 0
    n_rerun: int = 0
    n_recheck_failed: int = 0
    n_recheck_skipped: int = 0
    pass_rate_stage1_only: float = 0.0
    pass_rate_with_judge: float | None = None
    pass_rate_stage1_only_ci: list[float] | None = None  # Wilson 95%: [low, high] fractions
    pass_rate_with_judge_ci: list[float] | None = None
    agent_usage: AgentUsageTotals = Field(default_factory=AgentUsageTotals)
    judge_usage: JudgeUsageTotals = Field(default_factory=JudgeUsageTotals)


class Entry(Counts):
    """One (model, harness) of the batch."""

    model: str
    harness: str
    dataset: str
    wall_hours: float
    missing: list[str] = Field(default_factory=list)
    leaderboard: LeaderboardRow | None  # None: nobody to credit (runs no file or path names)
    judge_pass_rates: dict[str, float] = Field(default_factory=dict)  # per judge, several judges


class TaskRow(BaseModel):
    """One row of tasks[]: a run (counted, re-run or extra) or a missing corpus task."""

    model_config = _FORBID

    task_id: int | str | None = None
    test_case: str | None = None
    status: Literal["counted", "rerun", "extra", "missing"]
    intercepted: bool = False
    result_category: AnyCategory | None = None
    """Ours as a Category; a reference run's own word (`clawbench-report RUN_DIR`) as text."""
    final_pass: bool = False
    model: str | None = None
    harness: str | None = None
    run_dir: str | None = None
    match_strict: bool | None = None  # the reference's: true only for a match verdict
    verdict_strict: JudgeVerdict | None = None
    reason_strict: str | None = None
    match_lenient: bool | None = None
    verdict_lenient: JudgeVerdict | None = None
    reason_lenient: str | None = None
    verdict_source: str | None = None
    judge_error: str | None = None
    judge_missing: str | None = None  # cannot_tell: what the deciding judge could not see
    verdicts: dict[str, JudgeVerdict | None] | None = None  # per judge, the deciding rubric's

    _earlier = field_validator("verdicts", mode="before")(read_verdicts)

    recheck: dict[str, Any] | None = None
    reference_category: str | None = None
    infra_reason: str | None = None
    notes: list[str] = Field(default_factory=list)


class Summary(Counts):
    """<batch>/rescore-summary.json: the reference's keys first, ours after."""

    batch_dir: str
    n_match_strict: int | None = None
    n_mismatch_strict: int | None = None
    n_cannot_tell_strict: int | None = None
    n_judge_err_strict: int | None = None
    reward_pct_strict: float | None = None
    n_match_lenient: int | None = None
    n_mismatch_lenient: int | None = None
    n_cannot_tell_lenient: int | None = None
    n_judge_err_lenient: int | None = None
    reward_pct_lenient: float | None = None
    judge_model: str | None = None  # the first judge: its verdicts are in data/judge.json
    judges: list[str] = Field(default_factory=list)
    decide: str | None = None  # first | majority | unanimous: which judges decide final_pass
    agreement: dict[str, Any] | None = None  # scorer.agreement.Agreement, several judges
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
        """The file's content: per-rubric keys only for the rubrics that ran, judge agreement and
        per-judge rates only with several judges, per-task verdicts only when judged."""
        skip = {
            f"{k}_{r}"
            for r in ("strict", "lenient")
            if r not in self.rubrics
            for k in ("n_match", "n_mismatch", "n_cannot_tell", "n_judge_err", "reward_pct")
        }
        not_run = {
            f"{k}_{r}"
            for r in ("strict", "lenient")
            if r not in self.rubrics
            for k in ("match", "verdict", "reason")
        }
        if not self.judges:
            not_run.add("verdicts")
        several = len(self.judges) > 1
        if not several:
            skip.add("agreement")
        out = self.model_dump(mode="json", exclude=skip)
        per_judge = set() if several else {"judge_pass_rates"}
        out["entries"] = [e.model_dump(mode="json", exclude=per_judge) for e in self.entries]
        rows = [t.model_dump(mode="json", exclude=not_run) for t in self.tasks]
        out["tasks"] = rows
        return out


def _known(model: type[BaseModel], data: Any) -> Any:
    """data with only the keys model declares (a newer version's file carries more)."""
    if not isinstance(data, dict):
        return data
    return {k: v for k, v in data.items() if k in model.model_fields}


def parse_summary(data: Any, path: Path) -> Summary:
    """rescore-summary.json's content as a Summary: keys a newer version added are left out,
    so an older reader still reads it; SummaryError names the file and the key at fault."""
    if not isinstance(data, dict):
        raise SummaryError(f"{path}: expected a JSON object, got {type(data).__name__}")
    known = _known(Summary, data)
    nested = {
        "leaderboard": LeaderboardRow,
        "agent_usage": AgentUsageTotals,
        "judge_usage": JudgeUsageTotals,
        "tokens": Tokens,
    }
    entries = known.get("entries")
    if isinstance(entries, list):
        entries = known["entries"] = [_known(Entry, e) for e in entries]
    if isinstance(known.get("tasks"), list):
        known["tasks"] = [_known(TaskRow, t) for t in known["tasks"]]
    for part in [known, *(entries if isinstance(entries, list) else [])]:
        if isinstance(part, dict):
            part.update({k: _known(m, part[k]) for k, m in nested.items() if k in part})
    try:
        return Summary.model_validate(known)
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        batch = path.parent
        why = f"{first['msg']}; score the batch again: clawbench-score {batch}"
        raise SummaryError(f"{path}: {where}: {why}") from e


def read_summary(batch_dir: Path) -> Summary:
    """The batch's rescore-summary.json; SummaryError when it is missing or not ours."""
    path = batch_dir / SUMMARY_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        why = f"{path}: missing; score the batch first: clawbench-score {batch_dir}"
        raise SummaryError(why) from None
    except OSError as e:
        raise SummaryError(f"{path}: cannot read: {e.strerror or e}") from e
    try:
        data = json.loads(raw)
    except ValueError as e:
        why = f"not JSON ({e}); score the batch again: clawbench-score {batch_dir}"
        raise SummaryError(f"{path}: {why}") from e
    return parse_summary(data, path)


__all__ = [
    "SUMMARY_FILE",
    "AgentUsageTotals",
    "Counts",
    "Entry",
    "JudgeUsageTotals",
    "LeaderboardRow",
    "Summary",
    "SummaryError",
    "TaskRow",
    "parse_summary",
    "read_summary",
]
