"""scorer.agreement: judges that agree and disagree in known ways; kappas worked by hand."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

import scorer.agreement as agreement_module
from proxy_addon.records import JudgeVerdict
from scorer.agreement import (
    Agreement,
    Disagreement,
    RankingAgreement,
    agreement,
    ranking_agreement,
    render_agreement,
    render_ranking_agreement,
)

Y, NO, CT = JudgeVerdict.MATCH, JudgeVerdict.NO_MATCH, JudgeVerdict.CANNOT_TELL


def test_exports() -> None:
    assert sorted(agreement_module.__all__) == [
        "Agreement",
        "Disagreement",
        "JudgeRanking",
        "JudgeStats",
        "PairAgreement",
        "RankPair",
        "RankedModel",
        "RankingAgreement",
        "agreement",
        "ranking_agreement",
        "render_agreement",
        "render_ranking_agreement",
    ]


def _two_judges(tt: int, tf: int, ft: int, ff: int) -> dict[str, dict[str, JudgeVerdict | None]]:
    cells = [(Y, Y)] * tt + [(Y, NO)] * tf + [(NO, Y)] * ft + [(NO, NO)] * ff
    return {f"run-{i:03d}": {"j1": x, "j2": y} for i, (x, y) in enumerate(cells)}


def test_two_judges_cohen_worked_example() -> None:
    # Wikipedia's Cohen's kappa example (20, 5, 10, 15): agreement 0.7, kappa 0.4
    a = agreement(_two_judges(20, 5, 10, 15))
    (pair,) = a.pairs
    assert (pair.judge_a, pair.judge_b, pair.n) == ("j1", "j2", 50)
    assert pair.agreement == pytest.approx(0.7)
    assert pair.kappa == pytest.approx(0.4)
    assert [(s.judge, s.n_judged, s.n_pass, s.pass_rate) for s in a.per_judge] == [
        ("j1", 50, 25, 0.5),
        ("j2", 50, 30, 0.6),
    ]
    assert len(a.disagreements) == 15


def test_nulls_are_no_verdict() -> None:
    verdicts = _two_judges(4, 1, 1, 4)  # po 0.8, pe 0.5: kappa 0.6
    verdicts["run-err"] = {"j1": Y, "j2": None}  # j2 failed to answer: left out of the pair
    verdicts["run-half"] = {"j1": NO}  # j2 never asked
    a = agreement(verdicts)
    (pair,) = a.pairs
    assert (pair.n, pair.kappa) == (10, pytest.approx(0.6))
    j1, j2 = a.per_judge
    assert (j1.n_runs, j1.n_judged, j1.n_uncertain, j1.n_pass) == (12, 12, 0, 6)
    assert (j2.n_runs, j2.n_judged, j2.n_uncertain, j2.n_pass) == (11, 10, 1, 5)
    assert j2.pass_rate == 0.5  # of the non-null verdicts only
    assert a.n_runs == 12
    assert a.n_all_judged == 10
    assert [d.run for d in a.disagreements] == ["run-004", "run-005"]


def test_three_judges_fleiss_by_hand() -> None:
    verdicts: dict[str, dict[str, JudgeVerdict | None]] = {
        "r1": {"a": Y, "b": Y, "c": Y},
        "r2": {"a": NO, "b": NO, "c": NO},
        "r3": {"a": Y, "b": Y, "c": NO},
        "r4": {"a": Y, "b": NO, "c": NO},
        "r5": {"a": Y, "b": None, "c": NO},  # not all judged: out of Fleiss, still split
        "r6": {"a": None, "b": Y, "c": None},  # one verdict: nothing to disagree with
    }
    a = agreement(verdicts)
    # Per-run agreement P_i: 1, 1, 1/3, 1/3 -> P = 2/3; 6 of 12 verdicts true -> Pe = 1/2;
    # kappa = (2/3 - 1/2) / (1 - 1/2) = 1/3.
    assert a.n_all_judged == 4
    assert a.fleiss_kappa == pytest.approx(1 / 3)
    assert [(p.judge_a, p.judge_b, p.n) for p in a.pairs] == [
        ("a", "b", 4),
        ("a", "c", 5),
        ("b", "c", 4),
    ]
    # a vs c over r1..r5: (T,T) (F,F) (T,F) (T,F) (T,F): po 2/5, pe 4/5*1/5 + 1/5*4/5 = 8/25
    assert a.pairs[1].kappa == pytest.approx((2 / 5 - 8 / 25) / (1 - 8 / 25))
    assert a.disagreements == [
        Disagreement(run="r3", verdicts={"a": Y, "b": Y, "c": NO}),
        Disagreement(run="r4", verdicts={"a": Y, "b": NO, "c": NO}),
        Disagreement(run="r5", verdicts={"a": Y, "b": None, "c": NO}),
    ]
    text = render_agreement(a)
    assert "Fleiss' kappa 0.333 over 4 runs" in text
    assert "  r5: a match, b error, c no_match\n" in text


def test_judge_order_and_selection() -> None:
    verdicts: dict[str, dict[str, JudgeVerdict | None]] = {
        "r1": {"late": Y, "early": Y, "extra": NO},
        "r2": {"early": NO, "late": Y},
    }
    assert agreement(verdicts).judges == ["late", "early", "extra"]
    chosen = agreement(verdicts, judges=["early", "late"])
    assert chosen.judges == ["early", "late"]
    assert [d.run for d in chosen.disagreements] == ["r2"]  # "extra" ignored on r1
    assert chosen.disagreements[0].verdicts == {"early": NO, "late": Y}


def test_degenerate() -> None:
    # both judges said true every time: kappa is undefined, the agreement is still 100%
    a = agreement(_two_judges(5, 0, 0, 0))
    assert (a.pairs[0].kappa, a.pairs[0].agreement, a.fleiss_kappa) == (None, 1.0, None)
    assert "Cohen's kappa n/a, agree 100.0% of 5" in render_agreement(a)
    one = agreement({"r1": {"j": Y}, "r2": {"j": None}})
    assert (one.pairs, one.fleiss_kappa, one.disagreements) == ([], None, [])
    assert one.per_judge[0].pass_rate == 1.0
    render_agreement(one)
    empty = agreement({})
    assert (empty.judges, empty.n_runs, empty.per_judge) == ([], 0, [])
    assert render_agreement(empty) == "judge agreement over 0 runs, 0 judges\n"
    none_judged = agreement({"r1": {"j1": None, "j2": None}})
    assert none_judged.per_judge[0].pass_rate is None
    assert (none_judged.pairs[0].n, none_judged.pairs[0].agreement) == (0, None)


def test_cannot_tell_is_a_verdict_of_its_own() -> None:
    verdicts = {
        "r1": {"a": Y, "b": Y},
        "r2": {"a": CT, "b": CT},
        "r3": {"a": CT, "b": NO},
        "r4": {"a": NO, "b": NO},
        "r5": {"a": None, "b": CT},  # a judge error is still no verdict
    }
    a = agreement(verdicts)
    (pair,) = a.pairs
    # over r1..r4, three categories: po 3/4; a = (Y, CT, CT, NO), b = (Y, CT, NO, NO):
    # pe = 1/4*1/4 + 2/4*1/4 + 1/4*2/4 = 5/16
    assert pair.n == 4 and pair.kappa == pytest.approx((3 / 4 - 5 / 16) / (1 - 5 / 16))
    ja, jb = a.per_judge
    assert (ja.n_judged, ja.n_cannot_tell, ja.n_uncertain, ja.n_pass) == (4, 2, 1, 1)
    assert jb.pass_rate == pytest.approx(1 / 5)  # cannot_tell is judged, never a pass
    assert [d.run for d in a.disagreements] == ["r3"]
    assert "a 25.0%" not in render_agreement(a) and "2 cannot tell, 1 errors" in render_agreement(a)


def test_an_earlier_summary_s_boolean_verdicts_still_read() -> None:
    d = Disagreement.model_validate({"run": "r", "verdicts": {"a": True, "b": False, "c": None}})
    assert d.verdicts == {"a": Y, "b": NO, "c": None}


def test_frozen_and_json() -> None:
    a = agreement(_two_judges(3, 1, 0, 2))
    with pytest.raises(ValidationError):
        a.n_runs = 1  # type: ignore[misc]
    assert Agreement.model_validate(json.loads(json.dumps(a.model_dump()))) == a


# --- ranking ----------------------------------------------------------------------------------


def test_rankings_share_ties() -> None:
    r = ranking_agreement({"j": {"b": 0.3, "a": 0.5, "d": 0.1, "c": 0.5}})
    (jr,) = r.rankings
    assert [(m.model, m.rank) for m in jr.ranking] == [("a", 1), ("c", 1), ("b", 3), ("d", 4)]
    assert r.pairs == []
    text = render_ranking_agreement(r)
    assert text.splitlines() == [
        "ranking by j:",
        "    1. a  50.0%",
        "    1. c  50.0%",
        "    3. b  30.0%",
        "    4. d  10.0%",
    ]


def test_kendall_between_judges() -> None:
    rates = {
        "j1": {"m1": 0.3, "m2": 0.3, "m3": 0.1},
        "j2": {"m1": 0.2, "m2": 0.4, "m3": 0.1, "m4": 0.5},  # m4 only here: not compared
        "j3": {"m1": 0.1, "m2": 0.2, "m3": 0.3},
        "j4": {"m9": 0.5},
    }
    r = ranking_agreement(rates)
    tau = {(p.judge_a, p.judge_b): (p.n_models, p.tau_b) for p in r.pairs}
    # j1 vs j2 over m1..m3: one pair tied in j1, two concordant: 2 / sqrt(2 * 3)
    assert tau["j1", "j2"] == (3, pytest.approx(2 / 6**0.5))
    assert tau["j2", "j3"] == (3, pytest.approx(-1 / 3))  # concordant 1, discordant 2
    assert tau["j1", "j3"] == (3, pytest.approx(-2 / 6**0.5))
    assert tau["j1", "j4"] == (0, None)
    assert "j1 vs j4: Kendall's tau-b n/a over 0 models" in render_ranking_agreement(r)
    assert RankingAgreement.model_validate(r.model_dump()) == r
