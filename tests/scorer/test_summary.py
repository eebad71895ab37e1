"""Scores (docs/formats.md, "rescore-summary.json"): result categories, N, missing/extra/re-runs,
rates, leaderboard rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy_addon.records import JudgeVerdict, Tokens
from scorer.batch import SummaryOptions, summarize
from scorer.batch.runplan import finish
from scorer.batch.scored_run import RubricVerdict, ScoredRun, Stage1, result_category

ROOT = Path(__file__).resolve().parents[2]

BATCH = Path("/b/batch-20260101-000000")
Y, NO, CT = JudgeVerdict.MATCH, JudgeVerdict.NO_MATCH, JudgeVerdict.CANNOT_TELL


@pytest.mark.parametrize(
    ("stage", "judged", "verdict", "category", "final"),
    [
        (Stage1(True), True, Y, "passed", True),
        (Stage1(True), True, NO, "judge_mismatch", False),
        (Stage1(True), True, CT, "judge_cannot_tell", False),
        (Stage1(True), True, None, "judge_error", False),
        (Stage1(True), False, None, "intercepted", False),
        (Stage1(False), False, None, "model_not_intercepted", False),
        (Stage1(False, "stopped: proxy_failed"), False, None, "infra_failure", False),
        (
            Stage1(False, "runner category: api_or_credit", "api_or_credit"),
            False,
            None,
            "infra_failure",
            False,
        ),
    ],
)
def test_result_category_and_final_pass(
    stage: Stage1, judged: bool, verdict: JudgeVerdict | None, category: str, final: bool
) -> None:
    assert result_category(stage, judged, verdict) == (category, final)


def run(
    case: str | None,
    *,
    intercepted: bool = True,
    match: JudgeVerdict | None = Y,
    judged: bool = True,
    infra: str | None = None,
    ts: str = "20260101-120000",
    model: str = "m",
    harness: str = "h",
    slug: str | None = None,
    duration: float = 360.0,
) -> ScoredRun:
    o = ScoredRun(
        run_dir=BATCH / model / f"{harness}-{case}-{model}-{ts}",
        test_case=case,
        task_id=None,
        model=model,
        harness=harness,
        timestamp=ts,
        duration_s=duration,
        stage=Stage1(intercepted, infra),
        credited=intercepted,
        corpus_slug=slug,
        judges=("j",),
        deciding="strict",
    )
    if intercepted and judged:
        verdict = RubricVerdict(match, "r", tokens=Tokens(input_tokens=100, output_tokens=10))
        o.verdicts["j"] = {"strict": verdict}
    finish(o)
    return o


def opts(**kw: object) -> SummaryOptions:
    return SummaryOptions(judge_model="j", prompt_versions={"strict": "v"}, **kw)  # type: ignore[arg-type]


def test_counts_without_a_corpus_hand_computed() -> None:
    outcomes = [
        run("a", match=Y),
        run("b", match=NO),
        run("c", match=None),
        run("d", intercepted=False),
        run("e", intercepted=False, infra="no data"),
        run("f", judged=False),
        run("g", match=CT),
        # a re-run of a: the newer one counts (a mismatch), the older pass does not
        run("a", match=NO, ts="20260102-090000"),
    ]
    s = summarize(BATCH, outcomes, opts())
    assert s.n_total == 7 and s.n_runs == 8 and s.n_rerun == 1
    assert (s.n_intercepted, s.n_passed) == (5, 0)
    assert (s.n_judge_match, s.n_judge_mismatch, s.n_judge_error) == (0, 2, 1)
    assert s.n_judge_cannot_tell == 1  # apart from mismatches and errors, not passed
    assert (s.n_unjudged, s.n_model_not_intercepted, s.n_infra_failure) == (1, 1, 1)
    assert s.pass_rate_stage1_only == pytest.approx(5 / 7)
    assert s.pass_rate_with_judge == 0.0
    # the reference's per-rubric keys: err counts every credited run without a verdict
    assert (s.n_match_strict, s.n_mismatch_strict, s.n_judge_err_strict) == (0, 2, 2)
    assert s.n_cannot_tell_strict == 1
    assert s.tokens.input_tokens == 500  # every verdict, re-runs' included: all cost tokens
    g = next(t for t in s.tasks if t.test_case == "g")
    assert (g.result_category, g.match_strict, g.verdict_strict) == ("judge_cannot_tell", False, CT)
    assert s.entries[0].leaderboard.judge_cannot_tell == "1"
    rows = {(t.test_case, t.status) for t in s.tasks}
    assert ("a", "rerun") in rows and ("a", "counted") in rows
    counted_a = next(t for t in s.tasks if t.test_case == "a" and t.status == "counted")
    assert counted_a.run_dir.endswith("20260102-090000") and counted_a.match_strict is False


def test_corpus_sets_n_lists_missing_and_leaves_extra_out() -> None:
    outcomes = [
        run("a", slug="a"),
        run("b", slug="b", match=NO),
        run("zzz", slug=None),  # not in the corpus
    ]
    s = summarize(BATCH, outcomes, opts(corpus_slugs=["a", "b", "c", "d"], dataset="v9"))
    assert s.n_total == 4 and s.n_missing == 2 and s.n_extra == 1
    assert s.n_passed == 1 and s.pass_rate_with_judge == 0.25
    assert s.entries[0].missing == ["c", "d"]
    assert {t.test_case for t in s.tasks if t.status == "missing"} == {"c", "d"}
    assert [t.test_case for t in s.tasks if t.status == "extra"] == ["zzz"]
    row = s.entries[0].leaderboard
    assert (row.passed, row.total, row.pass_rate, row.dataset) == (1, 4, "25.00", "v9")
    # --n-total reproduces a published N
    s = summarize(BATCH, outcomes, opts(corpus_slugs=["a", "b", "c", "d"], n_total=5))
    assert s.n_total == 5 and s.entries[0].leaderboard.pass_rate == "20.00"


def test_entries_per_model_and_harness_and_wall_hours() -> None:
    outcomes = [run("a", model="m1"), run("b", model="m1"), run("a", model="m2", match=NO)]
    s = summarize(BATCH, outcomes, opts())
    assert [(e.model, e.n_total, e.n_passed) for e in s.entries] == [("m1", 2, 2), ("m2", 1, 0)]
    assert s.n_total == 3 and s.n_passed == 2
    assert s.entries[0].leaderboard.wall_hours == "0.20"  # 2 x 360 s
    single = summarize(BATCH, outcomes[:2], opts(batch_elapsed_s=5400))
    assert single.entries[0].leaderboard.wall_hours == "1.50"  # batch-summary.json's elapsed


def test_no_judge_is_stage_1_only() -> None:
    outcomes = [run("a", judged=False), run("b", intercepted=False)]
    s = summarize(BATCH, outcomes, SummaryOptions(judged=False, rubrics=(), rubric=None))
    assert s.pass_rate_with_judge is None and s.pass_rate_stage1_only == 0.5
    board = s.entries[0].leaderboard
    assert s.n_unjudged == 1 and s.n_passed is None and board is not None
    assert (board.passed, board.pass_rate, board.intercepted) == (None, "", 1)
    assert board.judge == "not judged" and not board.judged
    data = s.to_json()
    assert "n_match_strict" not in data and "match_strict" not in data["tasks"][0]


def test_rubric_keys_only_for_the_rubrics_that_ran() -> None:
    data = summarize(BATCH, [run("a")], opts()).to_json()
    assert data["n_match_strict"] == 1 and "n_match_lenient" not in data
    assert data["tasks"][0]["match_strict"] is True and "match_lenient" not in data["tasks"][0]
    for key in (
        "batch_dir",
        "n_total",
        "n_intercepted",
        "n_judge_match",
        "n_judge_mismatch",
        "n_judge_error",
        "pass_rate_stage1_only",
        "pass_rate_with_judge",
        "tasks",
    ):
        assert key in data  # the reference's keys


outcome_args = st.fixed_dictionaries(
    {
        "case": st.sampled_from(["a", "b", "c", "d", "e"]),
        "intercepted": st.booleans(),
        "match": st.sampled_from([Y, NO, CT, None]),
        "judged": st.booleans(),
        "infra": st.sampled_from([None, None, "no data"]),
        "ts": st.sampled_from(["20260101-000000", "20260102-000000", "20260103-000000"]),
        "model": st.sampled_from(["m1", "m2"]),
    }
)


@settings(max_examples=200, deadline=None)
@given(st.lists(outcome_args, max_size=25), st.sampled_from([None, ["a", "b", "c", "x"]]))
def test_every_task_of_n_is_counted_exactly_once(
    args: list[dict], corpus: list[str] | None
) -> None:
    outcomes = []
    for i, a in enumerate(args):
        a = dict(a)
        slug = a["case"] if corpus is not None and a["case"] in corpus else None
        o = run(a.pop("case"), slug=slug, **a)
        o.run_dir = o.run_dir.with_name(f"{o.run_dir.name}-{i}")  # distinct dirs, same ts
        outcomes.append(o)
    s = summarize(BATCH, outcomes, opts(corpus_slugs=corpus))
    for c in [*s.entries, s]:
        parts = (
            c.n_passed,
            c.n_judge_mismatch,
            c.n_judge_cannot_tell,
            c.n_judge_error,
            c.n_unjudged,
            c.n_model_not_intercepted,
            c.n_infra_failure,
            c.n_missing,
        )
        assert sum(parts) == c.n_total
        assert c.n_runs == (c.n_total - c.n_missing) + c.n_extra + c.n_rerun
        assert 0 <= c.pass_rate_with_judge <= c.pass_rate_stage1_only <= 1
