"""Two batches compared task by task: won, lost, tied, the paired difference and McNemar's test.

Pure: the caller reads the batches and hands in final_pass per task id. None (judge error,
uncertain) counts as not passed, as it does in the score, and is counted apart so a reader can
see how much of a difference rests on judge errors. Tasks that only one side ran are listed and
left out of the paired numbers: a paired comparison needs both halves of a pair.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from scorer.stats import mcnemar_exact, paired_difference_interval

_FROZEN = ConfigDict(extra="forbid", frozen=True)


class Flip(BaseModel):
    """A task that one side passed and the other did not, with both sides' final_pass."""

    model_config = _FROZEN

    task: str
    a: bool | None
    b: bool | None


class Comparison(BaseModel):
    """A against B over the tasks both ran; rates are fractions, difference = rate_a - rate_b."""

    model_config = _FROZEN

    label_a: str
    label_b: str
    n_paired: int
    a_pass: int
    b_pass: int
    a_uncertain: int
    b_uncertain: int
    won: int
    lost: int
    tied_pass: int
    tied_fail: int
    rate_a: float
    rate_b: float
    difference: float
    difference_ci_low: float
    difference_ci_high: float
    mcnemar_p: float
    flipped: list[Flip]
    only_a: list[str]
    only_b: list[str]


def compare(
    a: Mapping[str, bool | None], b: Mapping[str, bool | None], label_a: str, label_b: str
) -> Comparison:
    """Pair two batches' final_pass by task id (None = uncertain, counted as not passed)."""
    paired = sorted(a.keys() & b.keys())
    n11 = n10 = n01 = n00 = 0
    flipped = []
    for task in paired:
        pa, pb = a[task] is True, b[task] is True
        n11 += pa and pb
        n10 += pa and not pb
        n01 += pb and not pa
        n00 += not (pa or pb)
        if pa != pb:
            flipped.append(Flip(task=task, a=a[task], b=b[task]))
    n = len(paired)
    difference, low, high = paired_difference_interval(n11, n10, n01, n00)
    return Comparison(
        label_a=label_a,
        label_b=label_b,
        n_paired=n,
        a_pass=n11 + n10,
        b_pass=n11 + n01,
        a_uncertain=sum(a[t] is None for t in paired),
        b_uncertain=sum(b[t] is None for t in paired),
        won=n10,
        lost=n01,
        tied_pass=n11,
        tied_fail=n00,
        rate_a=(n11 + n10) / n if n else 0.0,
        rate_b=(n11 + n01) / n if n else 0.0,
        difference=difference,
        difference_ci_low=low,
        difference_ci_high=high,
        mcnemar_p=mcnemar_exact(n10, n01),
        flipped=flipped,
        only_a=sorted(a.keys() - b.keys()),
        only_b=sorted(b.keys() - a.keys()),
    )


def _verdict(value: bool | None) -> str:
    return {True: "passed", False: "failed", None: "uncertain"}[value]


def _points(fraction: float) -> str:
    return f"{100 * fraction:+.1f}"


def render_comparison(c: Comparison) -> str:
    """The comparison as a short plain-text block (percentages; --json has the fractions)."""
    lines = [f"A: {c.label_a}", f"B: {c.label_b}"]
    lines.append(
        f"paired tasks: {c.n_paired} (only in A: {len(c.only_a)}, only in B: {len(c.only_b)})"
    )
    if c.n_paired == 0:
        lines.append("no task in common: nothing to compare")
    else:
        lines += [
            f"pass rate: A {100 * c.rate_a:.1f}% ({c.a_pass}/{c.n_paired}),"
            f" B {100 * c.rate_b:.1f}% ({c.b_pass}/{c.n_paired})",
            f"difference A - B: {_points(c.difference)} points, 95% CI"
            f" {_points(c.difference_ci_low)} to {_points(c.difference_ci_high)}"
            " (Newcombe, paired)",
            f"won {c.won}, lost {c.lost}, tied {c.tied_pass} passed + {c.tied_fail} not passed",
            f"McNemar exact p = {c.mcnemar_p:.4g}",
        ]
        if c.a_uncertain or c.b_uncertain:
            lines.append(
                f"judge uncertain, counted as not passed: A {c.a_uncertain}, B {c.b_uncertain}"
            )
    if c.flipped:
        lines.append(f"flipped ({len(c.flipped)}):")
        width = max(len(f.task) for f in c.flipped)
        for f in c.flipped:
            sign = "+" if f.a is True else "-"
            lines.append(f"  {sign} {f.task:<{width}}  A {_verdict(f.a)}, B {_verdict(f.b)}")
    for side, tasks in (("A", c.only_a), ("B", c.only_b)):
        if tasks:
            lines.append(f"only in {side} ({len(tasks)}): {', '.join(tasks)}")
    return "\n".join(lines) + "\n"


__all__ = ["Comparison", "Flip", "compare", "render_comparison"]
