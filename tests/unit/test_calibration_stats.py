"""scorer.calibration_stats: a judge's figures against labels, on tables worked out by hand."""

from __future__ import annotations

from math import sqrt

import pytest

from proxy_addon.records import JudgeVerdict
from scorer.calibration import CalibrationCase, cases_of, load_set
from scorer.calibration_stats import (
    DEFAULT_GATES,
    bias,
    by_kind,
    figures,
    gates,
    pass_table,
    rate,
)
from scorer.stats import Z95, wilson_interval
from tests.conftest import TEST_CASES

Y, NO, CT = JudgeVerdict.MATCH, JudgeVerdict.NO_MATCH, JudgeVerdict.CANNOT_TELL


def test_a_perfect_judge() -> None:
    labels = [Y, Y, NO, NO, CT]
    f = figures(labels, labels)
    assert (f.n, f.n_errors, f.kappa, f.exact.value) == (5, 0, 1.0, 1.0)
    assert (f.passes.tp, f.passes.fn, f.passes.fp, f.passes.tn) == (2, 0, 0, 3)
    assert (f.recall.value, f.precision.value, f.specificity.value) == (1.0, 1.0, 1.0)
    assert f.cannot_tell.k == 1 and f.cannot_tell_found.value == 1.0
    assert f.confusion["cannot_tell"] == {"match": 0, "no_match": 0, "cannot_tell": 1, "error": 0}


def test_a_known_table() -> None:
    # labels:  Y Y Y Y NO NO NO NO CT CT
    # judge:   Y Y Y NO Y  NO NO CT CT Y
    labels = [Y, Y, Y, Y, NO, NO, NO, NO, CT, CT]
    judge = [Y, Y, Y, NO, Y, NO, NO, CT, CT, Y]
    f = figures(labels, judge)
    # pass level: TP 3, FN 1; FP: the NO judged Y and the CT judged Y = 2; TN 4
    assert (f.passes.tp, f.passes.fn, f.passes.fp, f.passes.tn) == (3, 1, 2, 4)
    assert f.recall == rate(3, 4) and f.precision == rate(3, 5) and f.specificity == rate(4, 6)
    assert f.false_positive_rate == rate(2, 6) and f.false_negative_rate == rate(1, 4)
    assert f.exact == rate(6, 10)
    assert f.cannot_tell == rate(2, 10) and f.cannot_tell_found == rate(1, 2)
    # kappa over three labels: po 0.6; label margins (.4,.4,.2), judge (.5,.3,.2):
    # pe = .2 + .12 + .04 = .36 -> kappa = (.6 - .36) / .64
    assert f.kappa == pytest.approx(0.24 / 0.64)
    assert f.kappa_low is not None and f.kappa_high is not None
    assert f.kappa_low < f.kappa < f.kappa_high


def test_an_error_is_the_wrong_answer_and_never_agrees() -> None:
    # on a labelled match an error is a false negative; on anything else a false positive
    assert pass_table([Y, NO, CT], [None, None, None]).model_dump() == {
        "tp": 0,
        "fn": 1,
        "fp": 2,
        "tn": 0,
    }
    labels = [Y, Y, NO, NO, CT, NO]
    right = figures(labels, labels)
    for i in range(len(labels)):
        erred = figures(labels, [None if j == i else x for j, x in enumerate(labels)])
        assert erred.n_errors == 1 and erred.confusion[str(labels[i])]["error"] == 1
        assert erred.exact.k == right.exact.k - 1
        assert erred.kappa is not None and right.kappa is not None and erred.kappa < right.kappa


def test_undefined_figures() -> None:
    f = figures([Y, Y], [Y, Y])
    assert f.kappa is None  # no variation
    assert f.specificity == rate(0, 0) and f.specificity.value is None
    assert figures([], []).exact.value is None
    with pytest.raises(ValueError, match="2 labels but 1 verdicts"):
        figures([Y, NO], [Y])


def test_rate_has_its_wilson_interval() -> None:
    r = rate(81, 263)
    assert (r.low, r.high) == pytest.approx(wilson_interval(81, 263))
    assert rate(0, 0).low is None


def test_bias_by_hand() -> None:
    fpr, fnr = rate(2, 10), rate(1, 10)
    b = bias(0.3, fpr, fnr)
    assert b is not None
    assert b.false_pass_points == pytest.approx(14.0)  # 0.7 * 0.2
    assert b.lost_pass_points == pytest.approx(3.0)  # 0.3 * 0.1
    assert b.net_points == pytest.approx(11.0)
    l1, u1 = wilson_interval(2, 10)
    l2, u2 = wilson_interval(1, 10)
    # MOVER for 0.7 FPR - 0.3 FNR from the two Wilson intervals
    low = 0.11 - sqrt((0.14 - 0.7 * l1) ** 2 + (0.3 * u2 - 0.03) ** 2)
    high = 0.11 + sqrt((0.7 * u1 - 0.14) ** 2 + (0.03 - 0.3 * l2) ** 2)
    assert (b.net_low, b.net_high) == pytest.approx((100 * low, 100 * high))
    assert (b.false_pass_low, b.false_pass_high) == pytest.approx((70 * l1, 70 * u1))
    # a perfect judge moves no score, though its interval says how sure that is
    perfect = bias(0.5, rate(0, 50), rate(0, 50))
    assert perfect is not None and perfect.net_points == 0.0 and perfect.net_high > 0
    assert bias(0.5, rate(0, 0), fnr) is None
    with pytest.raises(ValueError):
        bias(1.5, fpr, fnr)


def test_the_interval_narrows_with_more_cases() -> None:
    small = bias(0.5, rate(1, 10), rate(1, 10))
    large = bias(0.5, rate(10, 100), rate(10, 100))
    assert small is not None and large is not None
    assert small.net_points == pytest.approx(large.net_points)
    assert large.net_high - large.net_low < small.net_high - small.net_low


@pytest.fixture(scope="module")
def cases() -> list[CalibrationCase]:
    return [c for _, c in cases_of(load_set(TEST_CASES / "judge-calibration" / "v2"))]


def test_by_kind_and_the_injection_gate_find_a_gullible_judge(
    cases: list[CalibrationCase],
) -> None:
    fooled = [Y if c.kind == "injection" and c.label is NO else c.label for c in cases]
    overall = figures([c.label for c in cases], fooled)
    assert overall.kappa is not None and overall.kappa > 0.9  # kappa alone would pass it
    kinds = {k.kind: k for k in by_kind(cases, fooled, ["injection", "plain", "nowhere"])}
    assert set(kinds) == {"injection", "plain"}
    injection = kinds["injection"]
    n_bad = sum(c.kind == "injection" and c.label is NO for c in cases)
    assert injection.exact.k == injection.n - n_bad and kinds["plain"].exact.value == 1.0
    assert injection.precision.value is not None and injection.precision.value < 1.0
    (gate,) = gates(cases, fooled, {})
    assert (gate.kind, gate.minimum, gate.default, gate.passed) == ("injection", 1.0, True, False)
    assert DEFAULT_GATES == {"injection": 1.0}
    assert all(g.passed for g in gates(cases, [c.label for c in cases], {"plain": 1.0}))


def test_gates_name_kinds_and_v1_kinds_by_their_last_part() -> None:
    v1 = [c for _, c in cases_of(load_set(TEST_CASES / "judge-calibration" / "v1"))]
    fooled = [Y if c.kind == "hard-negative/injection" else c.label for c in v1]
    (gate,) = gates(v1, fooled, {})
    assert gate.n == sum(c.kind == "hard-negative/injection" for c in v1) and not gate.passed
    checked = {g.kind: g for g in gates(v1, fooled, {"hard-negative/date": 0.5, "nowhere": 0.9})}
    assert checked["hard-negative/date"].passed
    assert checked["nowhere"].observed is None and not checked["nowhere"].passed
    clean = [c for c in v1 if "injection" not in c.kind]
    default_only = gates(clean, [Y] * len(clean), {})
    assert default_only[0].observed is None and default_only[0].passed  # not applied


def test_z95() -> None:
    assert pytest.approx(1.96, abs=1e-3) == Z95
