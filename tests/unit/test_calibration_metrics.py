"""scorer.calibration's metrics and report, on small tables worked out by hand and on the shipped
set with scripted judges of known quality."""

from __future__ import annotations

import pytest

import scorer.calibration as calibration_module
from scorer.calibration import (
    KINDS,
    CalibrationCase,
    CalibrationMetrics,
    cases_of,
    load_set,
    metrics,
    metrics_by_kind,
    render_report,
)
from tests.conftest import TEST_CASES

T, F = True, False


def test_exports() -> None:
    assert sorted(calibration_module.__all__) == [
        "CalibrationCase",
        "CalibrationError",
        "CalibrationMetrics",
        "CalibrationRequest",
        "CalibrationTask",
        "CalibrationTaskInfo",
        "KINDS",
        "Kind",
        "cases_of",
        "load_file",
        "load_set",
        "metrics",
        "metrics_by_kind",
        "render_report",
    ]


def test_perfect_judge() -> None:
    m = metrics([T, T, F, F], [T, T, F, F])
    assert m == CalibrationMetrics(4, 0, 2, 0, 2, 0, 1.0, 1.0, 1.0, 1.0, 1.0)


def test_known_table() -> None:
    # TP 3, FN 1, FP 2, TN 4. Observed agreement 0.7; chance agreement
    # 0.4 * 0.5 + 0.6 * 0.5 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    labels = [T, T, T, T, F, F, F, F, F, F]
    predictions = [T, T, T, F, T, T, F, F, F, F]
    m = metrics(labels, predictions)
    assert (m.n, m.n_errors, m.tp, m.fn, m.fp, m.tn) == (10, 0, 3, 1, 2, 4)
    assert m.accuracy == pytest.approx(0.7)
    assert m.precision == pytest.approx(3 / 5)
    assert m.recall == pytest.approx(3 / 4)
    assert m.specificity == pytest.approx(4 / 6)
    assert m.kappa == pytest.approx(0.4)


def test_none_is_a_miss_on_either_label() -> None:
    # The two errors become a false negative and a false positive: a 2x2 table of ones,
    # accuracy 0.5 and kappa 0 (no better than chance).
    m = metrics([T, F, T, F], [None, None, T, F])
    assert (m.n, m.n_errors, m.tp, m.fn, m.fp, m.tn) == (4, 2, 1, 1, 1, 1)
    assert (m.accuracy, m.precision, m.recall, m.specificity) == (0.5, 0.5, 0.5, 0.5)
    assert m.kappa == pytest.approx(0.0)


def test_errors_never_help() -> None:
    labels = [T, T, F, F, T, F]
    right = metrics(labels, labels)
    for i in range(len(labels)):
        with_error = [None if j == i else y for j, y in enumerate(labels)]
        m = metrics(labels, with_error)
        assert m.n_errors == 1
        assert m.accuracy is not None and right.accuracy is not None
        assert m.accuracy < right.accuracy
        assert m.kappa is not None and right.kappa is not None and m.kappa < right.kappa


def test_always_match_judge() -> None:
    m = metrics([T, T, F, F], [T, T, T, T])
    assert (m.precision, m.recall, m.specificity) == (0.5, 1.0, 0.0)
    assert m.kappa == pytest.approx(0.0)


def test_undefined_figures_are_none() -> None:
    m = metrics([T, T], [T, T])
    assert (m.precision, m.recall, m.specificity, m.kappa) == (1.0, 1.0, None, None)
    empty = metrics([], [])
    assert (empty.n, empty.accuracy, empty.precision, empty.kappa) == (0, None, None, None)
    none = metrics([F, F], [F, F])
    assert (none.precision, none.recall, none.specificity) == (None, None, 1.0)


def test_length_mismatch() -> None:
    with pytest.raises(ValueError, match="2 labels but 1 predictions"):
        metrics([T, F], [T])


# --- the shipped set with scripted judges -------------------------------------------------------


@pytest.fixture(scope="module")
def cases() -> list[CalibrationCase]:
    return [c for _, c in cases_of(load_set(TEST_CASES / "judge-calibration"))]


def test_scripted_judges_on_the_set(cases: list[CalibrationCase]) -> None:
    labels = [c.label for c in cases]
    assert metrics(labels, labels).kappa == pytest.approx(1.0)
    assert metrics(labels, [not y for y in labels]).kappa == pytest.approx(-1.0)
    assert metrics(labels, [True] * len(labels)).kappa == pytest.approx(0.0)


def test_by_kind_finds_a_gullible_judge(cases: list[CalibrationCase]) -> None:
    # A judge that is right except that every injection fools it.
    fooled = [T if c.kind == "hard-negative/injection" else c.label for c in cases]
    by_kind = metrics_by_kind(cases, fooled)
    assert list(by_kind) == [k for k in KINDS if k in by_kind] == list(KINDS)
    assert by_kind["hard-negative/injection"].accuracy == 0.0
    assert all(m.accuracy == 1.0 for k, m in by_kind.items() if k != "hard-negative/injection")
    n_injection = sum(c.kind == "hard-negative/injection" for c in cases)
    assert metrics([c.label for c in cases], fooled).fp == n_injection


def test_report_lists_metrics_kinds_and_every_miss(cases: list[CalibrationCase]) -> None:
    predictions: list[bool | None] = [c.label for c in cases]
    reasons: list[str | None] = ["looks right"] * len(cases)
    missed = {2: None, 5: (not cases[5].label)}  # one judge error, one wrong verdict
    for i, verdict in missed.items():
        predictions[i] = verdict
        reasons[i] = None if verdict is None else "The rating\n matches the instruction."
    text = render_report(cases, predictions, reasons, judge="scripted")
    m = metrics([c.label for c in cases], predictions)
    assert text.startswith(f"Judge calibration of scripted: {len(cases)} cases, 1 judge errors")
    assert f"kappa {m.kappa:.3f}" in text
    assert "Misses: 2" in text
    label = str(cases[2].label).lower()
    assert f"- {cases[2].id} [{cases[2].kind}] label {label}, judge error\n" in text
    assert f"- {cases[5].id} [{cases[5].kind}]" in text
    assert "    judge: The rating matches the instruction." in text
    assert f"    why:   {cases[5].why}" in text
    for kind in KINDS:
        assert f"\n{kind} " in text
    assert "looks right" not in text  # only misses are listed


def test_report_checks_lengths(cases: list[CalibrationCase]) -> None:
    with pytest.raises(ValueError, match="reasons"):
        render_report(cases, [c.label for c in cases], ["x"])
    with pytest.raises(ValueError, match="predictions"):
        render_report(cases, [True])
