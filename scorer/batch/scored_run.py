"""Stage 1 and the result category of one run (docs/formats.md, "run-meta.json":
result_category), as pure functions.

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

from proxy_addon.records import (
    AgentUsage,
    AnyCategory,
    Category,
    JudgeVerdict,
    Tokens,
    is_infra_category,
    is_infra_stop,
    scored_category,
)
from scorer.batch.recheck import SKIPPED, Recheck
from scorer.batch.rundir import RunRecord

Decide = Literal["first", "majority", "unanimous"]
"""Which judges decide final_pass (--decide)."""
DECIDE_RULES: tuple[str, ...] = ("first", "majority", "unanimous")


def runner_category(rec: RunRecord) -> AnyCategory | None:
    """The category the runner wrote, before any scoring overwrote result_category."""
    return rec.meta.runner_said if rec.meta is not None else None


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
        why = meta.failure_reason or "the model API failed"
        return Stage1(False, f"{runner}: {why}", ref, model_api=True)
    if is_infra_category(runner):
        return Stage1(False, f"runner category: {runner}", ref)
    if meta.infra_failure is True:
        return Stage1(False, "run-meta.json: infra_failure is true", ref)
    ours = "egress_blocked" in meta.model_fields_set  # a run of our runner's: a proxy ran
    if ours and not (rec.dir / "data" / ".proxy-ready").exists():
        return Stage1(False, "proxy never ready: data/.proxy-ready is missing", ref)
    return Stage1(False, None, ref)


def result_category(
    stage: Stage1, judged: bool, verdict: JudgeVerdict | None
) -> tuple[Category, bool]:
    """(result_category, final_pass): final_pass = intercepted AND the verdict is match."""
    category, final = scored_category(
        infra=bool(stage.infra),
        intercepted=stage.intercepted,
        judged=judged,
        verdict=verdict,
        model_api=stage.model_api,
    )
    return category, final


@dataclass
class RubricVerdict:
    """One rubric's verdict for a run, wherever it came from."""

    verdict: JudgeVerdict | None  # None: no verdict (a judge error)
    reason: str = ""
    source: str = "judge"  # judge (ours, data/judge*.json) | reference:<file>
    error: str | None = None
    tokens: Tokens = field(default_factory=Tokens)
    cached: bool = False  # read from a judge file, not asked this time
    missing: str = ""  # cannot_tell: what the judge could not see


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
    result_category: Category = Category.MODEL_NOT_INTERCEPTED
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

    def deciding_verdicts(self) -> dict[str, JudgeVerdict | None]:
        """Each judge's verdict on the deciding rubric (judges not asked left out)."""
        rubric = self.deciding
        return {j: v[rubric].verdict for j, v in self.verdicts.items() if rubric in v}

    def decision(self) -> tuple[bool, JudgeVerdict | None]:
        """(judged, verdict): judged once every judge the rule needs has answered (or erred)."""
        needed = self.judges[:1] if self.decide == "first" else self.judges
        given = self.deciding_verdicts()
        if not needed or any(j not in given for j in needed):
            return False, None
        return True, decide_verdict(self.decide, [given[j] for j in needed])


def decide_verdict(rule: Decide, verdicts: list[JudgeVerdict | None]) -> JudgeVerdict | None:
    """The verdict that decides final_pass from several judges' (None: a judge error).

    cannot_tell is an abstention: the judges that answered match or no_match decide, and
    cannot_tell stands only when every judge abstained. first: the first judge's verdict.
    majority: more than half of the judges that did not abstain agree (judge errors count
    against both sides), else None (a tie, or too many errors to tell). unanimous: no_match if
    any judge says so, match if every judge that did not abstain says match and none erred,
    else None.
    """
    if not verdicts:
        return None
    if rule == "first":
        return verdicts[0]
    voting = [v for v in verdicts if v is not JudgeVerdict.CANNOT_TELL]
    if not voting:
        return JudgeVerdict.CANNOT_TELL
    if rule == "majority":
        half = len(voting) / 2
        for side in (JudgeVerdict.MATCH, JudgeVerdict.NO_MATCH):
            if voting.count(side) > half:
                return side
        return None
    if JudgeVerdict.NO_MATCH in voting:
        return JudgeVerdict.NO_MATCH
    return JudgeVerdict.MATCH if all(v is JudgeVerdict.MATCH for v in voting) else None


__all__ = [
    "DECIDE_RULES",
    "Decide",
    "RubricVerdict",
    "RunKey",
    "ScoredRun",
    "Stage1",
    "decide_verdict",
    "result_category",
    "runner_category",
    "stage1",
]
