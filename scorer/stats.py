"""Small statistics for scores, paired comparisons and judge agreement, in the standard library.

Rates are fractions. Where a statistic is undefined (no data, or no variation for a
chance-corrected coefficient to correct) the function returns None rather than a number that
looks like a finding; the intervals instead return the widest possible interval.

References: Wilson (1927) score interval as given by Newcombe (1998a, Stat Med 17:857);
Newcombe (1998b, Stat Med 17:2635) method 10 for the difference of paired proportions; the exact
McNemar test is the two-sided binomial test on the discordant pairs; Cohen (1960); Fleiss (1971);
Kendall's tau-b (Kendall 1945).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from math import comb, sqrt

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for successes/n; (0.0, 1.0) when n is 0."""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # At 0 and n the bound is exactly 0 or 1; rounding could leave it a hair off.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: binomial(b + c, 1/2) on the discordant pairs."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(b, c) + 1))
    # Exact integers to the last step: int / int is correctly rounded even for large n.
    return min(1.0, 2 * tail / 2**n)


def paired_difference_interval(
    n11: int, n10: int, n01: int, n00: int, z: float = Z95
) -> tuple[float, float, float]:
    """(p1 - p2, low, high) for paired proportions by Newcombe's method 10.

    n10 counts pairs where the first succeeded and the second failed; p1 = (n11 + n10) / n and
    p2 = (n11 + n01) / n. With no pairs the difference is 0.0 and the interval (-1.0, 1.0).
    """
    if min(n11, n10, n01, n00) < 0:
        raise ValueError(f"cell counts must be >= 0, got {(n11, n10, n01, n00)}")
    n = n11 + n10 + n01 + n00
    if n == 0:
        return (0.0, -1.0, 1.0)
    p1, p2 = (n11 + n10) / n, (n11 + n01) / n
    l1, u1 = wilson_interval(n11 + n10, n, z)
    l2, u2 = wilson_interval(n11 + n01, n, z)
    phi = _corrected_phi(n11, n10, n01, n00)
    diff = (n10 - n01) / n  # exact where p1 - p2 would leave a rounding residue
    d1, e2 = p1 - l1, u2 - p2
    e1, d2 = u1 - p1, p2 - l2
    delta = sqrt(max(0.0, d1 * d1 - 2 * phi * d1 * e2 + e2 * e2))
    epsilon = sqrt(max(0.0, e1 * e1 - 2 * phi * e1 * d2 + d2 * d2))
    return (diff, max(-1.0, diff - delta), min(1.0, diff + epsilon))


def _corrected_phi(a: int, b: int, c: int, d: int) -> float:
    """Newcombe's continuity-corrected phi: a positive ad - bc shrinks by n/2, never below 0."""
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        return 0.0
    cross = a * d - b * c
    if cross > 0:
        cross = max(0.0, cross - (a + b + c + d) / 2)
    return cross / sqrt(margins)


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two raters' labels for the same items; None when undefined.

    Undefined means no items, or an expected agreement of 1: both raters gave one and the same
    label to every item, so there is no variation for kappa to measure. We return None there
    rather than 1.0 (observed agreement is then trivially 1; callers that want it report it).
    """
    if len(a) != len(b):
        raise ValueError(f"raters labelled different numbers of items: {len(a)} and {len(b)}")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[k] * count_b[k] for k in count_a) / (n * n)
    if expected >= 1.0:
        return None
    return (observed - expected) / (1 - expected)


def cohen_kappa_interval(
    a: Sequence[Hashable], b: Sequence[Hashable], z: float = Z95
) -> tuple[float, float, float] | None:
    """(kappa, low, high): Cohen's kappa with its large-sample 95% interval, kappa +- z * SE,
    the SE by Fleiss, Cohen and Everitt (1969, Psychol Bull 72:323), the variance statsmodels'
    cohens_kappa reports; the bounds clipped to [-1, 1]. None where kappa is undefined."""
    kappa = cohen_kappa(a, b)
    if kappa is None:
        return None
    n = len(a)
    cells = Counter(zip(a, b, strict=True))
    rows, cols = Counter(a), Counter(b)
    row = {k: v / n for k, v in rows.items()}
    col = {k: v / n for k, v in cols.items()}
    expected = sum(row[k] * col.get(k, 0.0) for k in row)
    diagonal = sum(
        (c / n) * (1 - (row[x] + col.get(x, 0.0)) * (1 - kappa)) ** 2
        for (x, y), c in cells.items()
        if x == y
    )
    off = (
        sum(
            (c / n) * (col.get(x, 0.0) + row.get(y, 0.0)) ** 2
            for (x, y), c in cells.items()
            if x != y
        )
        * (1 - kappa) ** 2
    )
    variance = (diagonal + off - (kappa - expected * (1 - kappa)) ** 2) / (n * (1 - expected) ** 2)
    half = z * sqrt(max(0.0, variance))
    return kappa, max(-1.0, kappa - half), min(1.0, kappa + half)


def fleiss_kappa(ratings: Sequence[Sequence[Hashable]]) -> float | None:
    """Fleiss' kappa: one row of labels per item, the same number (>= 2) of raters per item.

    None when undefined: no items, fewer than two raters, or every label the same (expected
    agreement 1, as for cohen_kappa).
    """
    if not ratings:
        return None
    raters = len(ratings[0])
    if any(len(row) != raters for row in ratings):
        sizes = sorted({len(row) for row in ratings})
        raise ValueError(f"every item needs the same number of raters, got {sizes}")
    if raters < 2:
        return None
    items = len(ratings)
    totals: Counter[Hashable] = Counter()
    agreement = 0.0
    for row in ratings:
        counts = Counter(row)
        totals.update(counts)
        agreement += (sum(k * k for k in counts.values()) - raters) / (raters * (raters - 1))
    observed = agreement / items
    expected = sum((t / (items * raters)) ** 2 for t in totals.values())
    if expected >= 1.0:
        return None
    return (observed - expected) / (1 - expected)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b, ties allowed in either; None when x or y has no two different values."""
    if len(x) != len(y):
        raise ValueError(f"x and y differ in length: {len(x)} and {len(y)}")
    n = len(x)
    concordant = discordant = ties_x = ties_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0:
                ties_x += 1
            if dy == 0:
                ties_y += 1
            if dx * dy > 0:
                concordant += 1
            elif dx * dy < 0:
                discordant += 1
    pairs = n * (n - 1) // 2
    denom = (pairs - ties_x) * (pairs - ties_y)
    if denom == 0:
        return None
    return (concordant - discordant) / sqrt(denom)


__all__ = [
    "Z95",
    "cohen_kappa",
    "cohen_kappa_interval",
    "fleiss_kappa",
    "kendall_tau_b",
    "mcnemar_exact",
    "paired_difference_interval",
    "wilson_interval",
]
