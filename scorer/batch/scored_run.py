"""Stage 1 and the result category of one run (SPEC section 7), as pure functions.

Stage 1 comes from data/interception.json (the proxy's record), not from run-meta.json. A run is
an infra failure when its files cannot be read, when it has no data, when it stopped for an infra
reason (proxy or container failed, the proxy never became ready), or when the runner classified
it so; the reference's own categories (api_or_credit, task_data, build_instruction,
browser_runtime_*) map to infra_failure and stay visible as reference_category. An interception
outranks all of these: the agent did commit the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from proxy_addon.records.outcome import (
    Category,
    is_infra_category,
    is_infra_stop,
    scored_category,
)
from proxy_addon.records.usage import AgentUsage
from scorer.batch.recheck import SKIPPED, Recheck
from scorer.batch.rundir import RunRecord

Decide = Literal["first", "majority", "unanimous"]
"""Which judges decide final_pass (--decide)."""
DECIDE_RULES: tuple[str, ...] = ("first", "majority", "unanimous")


def runner_category(rec: RunRecord) -> str | None:
    """The category the runner wrote, before any scoring overwrote result_category."""
    raw = rec.meta_raw or {}
    if "runner_category" in raw:
        return raw["runner_category"]
    return raw.get("result_category")


@dataclass(frozen=True, slots=True)
class Stage1:
    intercepted: bool
    infra: str | None = None
    reference_category: str | None = None
    body_unverified: bool = False  # credited, but the proxy could not read the body
    model_api: bool = False  # the infra failure is the runner's model_api_failure


def stage1(rec: RunRecord) -> Stage1:
    """Did the proxy credit an interception, and is the run an infra failure?"""
    runner = runner_category(rec)
    ref = runner if is_infra_category(runner) and runner not in tuple(Category) else None
    if rec.problems:
        return Stage1(False, "; ".join(rec.problems), ref)
    meta = rec.meta
    assert meta is not None  # no problems means run-meta.json was read
    view = rec.interception
    if view is None:
        if meta.intercepted:
            why = "run-meta.json says intercepted but data/interception.json is missing"
        else:
            why = "no data: data/interception.json is missing"
        return Stage1(False, why, ref)
    if view.intercepted:
        unread = bool((view.request or {}).get("body_unverified"))
        return Stage1(True, None, ref, unread)
    stop = view.stop_reason or meta.stop_reason
    if is_infra_stop(stop):
        return Stage1(False, f"stopped: {stop}", ref)
    if runner == Category.MODEL_API_FAILURE:
        why = (rec.meta_raw or {}).get("failure_reason") or "the model API failed"
        return Stage1(False, f"{runner}: {why}", ref, model_api=True)
    if is_infra_category(runner):
        return Stage1(False, f"runner category: {runner}", ref)
    raw = rec.meta_raw or {}
    if raw.get("infra_failure") is True:
        return Stage1(False, "run-meta.json: infra_failure is true", ref)
    if "egress_blocked" in raw and not (rec.dir / "data" / ".proxy-ready").exists():
        return Stage1(False, "proxy never ready: data/.proxy-ready is missing", ref)
    return Stage1(False, None, ref)


def result_category(stage: Stage1, judged: bool, match: bool | None) -> tuple[str, bool]:
    """(result_category, final_pass): final_pass = intercepted AND judge_match is True."""
    category, final = scored_category(
        infra=bool(stage.infra),
        intercepted=stage.intercepted,
        judged=judged,
        match=match,
        model_api=stage.model_api,
    )
    return str(category), final


@dataclass
class RubricVerdict:
    """One rubric's verdict for a run, wherever it came from."""

    match: bool | None
    reason: str = ""
    source: str = "judge"  # judge (ours, data/judge*.json) | reference:<file>
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached: bool = False  # read from a judge file, not asked this time


@dataclass(kw_only=True)
class RunKey:
    """What decides which task a run counts for, and whether it is the newest of its task: known
    from run-meta.json alone, before the run is read in full."""

    run_dir: Path
    model: str | None
    harness: str | None
    test_case: str | None
    timestamp: str | None
    corpus_slug: str | None = None  # with --tasks: the corpus task this run ran


@dataclass(kw_only=True)
class ScoredRun(RunKey):
    """One run, scored."""

    task_id: Any
    duration_s: float | None
    stage: Stage1
    credited: bool  # Stage 1 after --enforce-recheck
    recheck: Recheck = SKIPPED
    judges: tuple[str, ...] = ()  # in order: the first one's verdicts are data/judge.json
    decide: Decide = "first"
    verdicts: dict[str, dict[str, RubricVerdict]] = field(default_factory=dict)  # judge, rubric
    result_category: str = "model_not_intercepted"
    final_pass: bool = False
    notes: list[str] = field(default_factory=list)
    identified: bool = True  # False: neither run-meta.json nor the path says who ran it
    deciding: str | None = None  # the rubric that decides final_pass: strict, unless lenient only
    agent_usage: AgentUsage | None = None  # the agent's model calls, as the proxy counted them

    @property
    def first(self) -> dict[str, RubricVerdict]:
        """The first judge's verdicts by rubric (the reference's judge.json and judge_llm.json)."""
        return self.verdicts.get(self.judges[0], {}) if self.judges else {}

    @property
    def primary(self) -> RubricVerdict | None:
        """The first judge's verdict on the deciding rubric (a lenient verdict never stands in
        for a strict one that was not asked this time)."""
        return self.first.get(self.deciding) if self.deciding is not None else None

    def deciding_verdicts(self) -> dict[str, bool | None]:
        """Each judge's verdict on the deciding rubric (judges not asked left out)."""
        rubric = self.deciding
        return {j: v[rubric].match for j, v in self.verdicts.items() if rubric in v}

    def decision(self) -> tuple[bool, bool | None]:
        """(judged, judge_match): judged once every judge the rule needs has a verdict."""
        needed = self.judges[:1] if self.decide == "first" else self.judges
        given = self.deciding_verdicts()
        if not needed or any(j not in given for j in needed):
            return False, None
        return True, decide_match(self.decide, [given[j] for j in needed])


def decide_match(rule: Decide, verdicts: list[bool | None]) -> bool | None:
    """final_pass's verdict from several judges' (None: no verdict, a judge error).

    first: the first judge's. majority: more than half of all judges agree, else None (a tie,
    or too many errors to tell). unanimous: False if any judge says False, True if all say
    True, else None.
    """
    if not verdicts:
        return None
    if rule == "first":
        return verdicts[0]
    if rule == "majority":
        half = len(verdicts) / 2
        if verdicts.count(True) > half:
            return True
        return False if verdicts.count(False) > half else None
    if False in verdicts:
        return False
    return True if all(v is True for v in verdicts) else None


__all__ = [
    "DECIDE_RULES",
    "Decide",
    "RubricVerdict",
    "RunKey",
    "ScoredRun",
    "Stage1",
    "decide_match",
    "result_category",
    "runner_category",
    "stage1",
]
