"""scorer.compare: paired counts by hand, and a published paired table end to end."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

import scorer.compare as compare_module
from scorer.compare import Comparison, Flip, compare, render_comparison


def test_exports() -> None:
    assert sorted(compare_module.__all__) == ["Comparison", "Flip", "compare", "render_comparison"]


def _batches(n11: int, n10: int, n01: int, n00: int) -> tuple[dict[str, bool], dict[str, bool]]:
    cells = [(True, True)] * n11 + [(True, False)] * n10 + [(False, True)] * n01
    cells += [(False, False)] * n00
    a = {f"task-{i:03d}": x for i, (x, _) in enumerate(cells)}
    b = {f"task-{i:03d}": y for i, (_, y) in enumerate(cells)}
    return a, b


def test_counts_by_hand() -> None:
    a = {"t1": True, "t2": False, "t3": None, "t4": True, "t5": True, "t6": False, "x": True}
    b = {"t1": True, "t2": True, "t3": False, "t4": False, "t5": None, "t6": None, "y": False}
    c = compare(a, b, "A", "B")
    assert (c.n_paired, c.a_pass, c.b_pass) == (6, 3, 2)
    assert (c.won, c.lost, c.tied_pass, c.tied_fail) == (2, 1, 1, 2)
    # None is not passed, and counted apart: t3 for A; t5 and t6 for B
    assert (c.a_uncertain, c.b_uncertain) == (1, 2)
    assert (c.rate_a, c.rate_b, c.difference) == (0.5, pytest.approx(1 / 3), pytest.approx(1 / 6))
    assert c.flipped == [
        Flip(task="t2", a=False, b=True),
        Flip(task="t4", a=True, b=False),
        Flip(task="t5", a=True, b=None),
    ]
    assert (c.only_a, c.only_b) == (["x"], ["y"])
    # discordant 2 against 1: every sequence of 3 is at least that lopsided
    assert c.mcnemar_p == 1.0
    assert c.difference_ci_low < c.difference < c.difference_ci_high


def test_published_paired_table_end_to_end() -> None:
    # Cavo et al. (2012) as in Fagerland, Lydersen & Laake (2017), ch. 8: 161 pairs
    # (59, 6, 16, 80); difference -0.0621 (95% CI -0.1186 to -0.0046); exact McNemar 0.052.
    a, b = _batches(59, 6, 16, 80)
    c = compare(a, b, "before", "after")
    assert (c.n_paired, c.won, c.lost, c.tied_pass, c.tied_fail) == (161, 6, 16, 59, 80)
    assert round(c.difference, 4) == -0.0621
    assert (round(c.difference_ci_low, 4), round(c.difference_ci_high, 4)) == (-0.1186, -0.0046)
    assert round(c.mcnemar_p, 3) == 0.052
    assert len(c.flipped) == 22


def test_swapping_sides_mirrors() -> None:
    a, b = _batches(10, 7, 2, 11)
    ab, ba = compare(a, b, "A", "B"), compare(b, a, "B", "A")
    assert (ba.won, ba.lost) == (ab.lost, ab.won)
    assert ba.difference == pytest.approx(-ab.difference)
    assert (ba.difference_ci_low, ba.difference_ci_high) == pytest.approx(
        (-ab.difference_ci_high, -ab.difference_ci_low)
    )
    assert ba.mcnemar_p == ab.mcnemar_p


def test_nothing_in_common() -> None:
    c = compare({}, {"q": True}, "A", "B")
    assert (c.n_paired, c.rate_a, c.rate_b, c.difference) == (0, 0.0, 0.0, 0.0)
    assert (c.difference_ci_low, c.difference_ci_high, c.mcnemar_p) == (-1.0, 1.0, 1.0)
    assert c.only_b == ["q"]
    assert "no task in common" in render_comparison(c)


def test_frozen_and_json() -> None:
    c = compare({"t": True}, {"t": False}, "A", "B")
    with pytest.raises(ValidationError):
        c.won = 3  # type: ignore[misc]
    dumped = json.loads(json.dumps(c.model_dump()))
    assert dumped["flipped"] == [{"task": "t", "a": True, "b": False}]
    assert Comparison.model_validate(dumped) == c
    with pytest.raises(ValidationError):
        Comparison.model_validate({**dumped, "surprise": 1})


def test_render() -> None:
    a, b = _batches(1, 2, 1, 0)
    a["only-here"] = True
    b["task-003"] = None
    text = render_comparison(compare(a, b, "batch-1", "batch-2"))
    assert text.startswith("A: batch-1\nB: batch-2\n")
    assert "paired tasks: 4 (only in A: 1, only in B: 0)" in text
    assert "pass rate: A 75.0% (3/4), B 25.0% (1/4)" in text
    assert "difference A - B: +50.0 points, 95% CI" in text
    assert "won 2, lost 0, tied 1 passed + 1 not passed" in text
    assert "judge uncertain, counted as not passed: A 0, B 1" in text
    assert "  + task-001  A passed, B failed\n" in text
    assert "  + task-002  A passed, B failed\n" in text
    assert "only in A (1): only-here" in text
