"""scorer.stats against published worked examples and against the same quantity reached by
another road (score-equation roots, enumeration of sign sequences, sign-matrix correlations)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

import scorer.stats as stats_module
from scorer.stats import (
    Z95,
    cohen_kappa,
    cohen_kappa_interval,
    fleiss_kappa,
    kendall_tau_b,
    mcnemar_exact,
    paired_difference_interval,
    wilson_interval,
)


def test_exports() -> None:
    assert sorted(stats_module.__all__) == [
        "Z95",
        "cohen_kappa",
        "cohen_kappa_interval",
        "fleiss_kappa",
        "kendall_tau_b",
        "mcnemar_exact",
        "paired_difference_interval",
        "wilson_interval",
    ]


# --- Wilson ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    [
        # Newcombe (1998a) Stat Med 17:857, Table I, method 3 (score, no continuity correction)
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
        # 5/10 is symmetric about 1/2
        (5, 10, 0.2366, 0.7634),
    ],
)
def test_wilson_published(x: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(x, n)
    assert got == pytest.approx((low, high), abs=5e-5)


@given(
    st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([1.0, 1.6448536269514722, Z95, 2.5758293035489004]),
)
def test_wilson_bounds_solve_the_score_equation(xn: tuple[int, int], z: float) -> None:
    # A Wilson bound is a root of (p - pi)^2 = z^2 pi (1 - pi) / n: where the score test sits at z.
    x, n = xn
    p = x / n
    for bound in wilson_interval(x, n, z):
        assert (p - bound) ** 2 == pytest.approx(z * z * bound * (1 - bound) / n, abs=1e-12)


def test_wilson_edges() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 7)[0] == 0.0
    assert wilson_interval(7, 7)[1] == 1.0
    # all failed: the upper bound is z^2 / (n + z^2) (the score equation at p = 0)
    assert wilson_interval(0, 5)[1] == pytest.approx(Z95**2 / (5 + Z95**2))
    for bad in [(-1, 3), (4, 3), (0, -1)]:
        with pytest.raises(ValueError, match="successes"):
            wilson_interval(*bad)


# --- McNemar --------------------------------------------------------------------------------


def _enumerated_p(b: int, c: int) -> float:
    """Every equally likely sequence of discordant pairs; count those at least as lopsided."""
    n = b + c
    observed = abs(b - c)
    extreme = sum(
        1 for seq in itertools.product((0, 1), repeat=n) if abs(n - 2 * sum(seq)) >= observed
    )
    return float(Fraction(extreme, 2**n))


@pytest.mark.parametrize(("b", "c"), [(b, c) for b in range(9) for c in range(9) if b + c <= 12])
def test_mcnemar_matches_enumeration(b: int, c: int) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(_enumerated_p(b, c), rel=1e-12)


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        # Fagerland, Lydersen & Laake (2013) BMC Med Res Methodol 13:91: exact conditional test
        (1, 7, 0.070),  # Bentur et al. (2009)
        (6, 16, 0.052),  # Cavo et al. (2012)
    ],
)
def test_mcnemar_published(b: int, c: int, p: float) -> None:
    assert round(mcnemar_exact(b, c), 3) == p


def test_mcnemar_edges() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(4, 4) == 1.0  # doubling would give more than 1: capped
    assert mcnemar_exact(0, 5) == 2 / 32
    assert mcnemar_exact(0, 1000) == pytest.approx(2.0**-999)
    assert mcnemar_exact(300, 700) == mcnemar_exact(700, 300)
    assert 0.0 < mcnemar_exact(300, 700) < 1e-30  # large n: exact, no overflow, no underflow
    with pytest.raises(ValueError, match="discordant"):
        mcnemar_exact(-1, 2)


# --- Paired difference (Newcombe method 10) ---------------------------------------------------


@pytest.mark.parametrize(
    ("table", "expected", "places"),
    [
        # Fagerland, Lydersen & Laake, Statistical Analysis of Contingency Tables (2017), ch. 8:
        # complete response before and after consolidation therapy (Cavo et al. 2012),
        # "Newcombe square-and-add": -0.0621 (95% CI -0.1186 to -0.0046). ad - bc > n/2 here,
        # so the phi correction is in play.
        ((59, 6, 16, 80), (-0.0621, -0.1186, -0.0046), 4),
        # same chapter: airway hyper-responsiveness (Bentur et al. 2009), ad - bc <= n/2: phi = 0
        ((1, 1, 7, 12), (-0.286, -0.507, -0.026), 3),
    ],
)
def test_paired_difference_published(
    table: tuple[int, int, int, int], expected: tuple[float, float, float], places: int
) -> None:
    got = paired_difference_interval(*table)
    assert tuple(round(v, places) for v in got) == expected


def test_paired_difference_by_hand() -> None:
    # Nobody changed, all failed: both margins are 0/n, phi is 0 (a zero margin), and each side
    # is the Wilson upper bound of 0/n: z^2 / (n + z^2).
    u = Z95**2 / (5 + Z95**2)
    assert paired_difference_interval(0, 0, 0, 5) == pytest.approx((0.0, -u, u))
    assert paired_difference_interval(5, 0, 0, 0) == pytest.approx((0.0, -u, u))
    # 10 pairs, first always passed, second 5 of 10: p1 = 1 has no room above, so the upper
    # distance is 1/2 - l(5/10) and the upper bound is 1 - l(5/10) = u(5/10).
    l5, u5 = wilson_interval(5, 10)
    low = 0.5 - ((1 - wilson_interval(10, 10)[0]) ** 2 + (u5 - 0.5) ** 2) ** 0.5
    assert paired_difference_interval(5, 5, 0, 0) == pytest.approx((0.5, low, u5))
    # Perfectly discordant (phi = -1): the square-and-add becomes a plain sum of distances.
    assert paired_difference_interval(0, 5, 5, 0) == pytest.approx(
        (0.0, -2 * (0.5 - l5), 2 * (u5 - 0.5))
    )


def test_paired_difference_edges() -> None:
    assert paired_difference_interval(0, 0, 0, 0) == (0.0, -1.0, 1.0)
    assert paired_difference_interval(0, 10, 0, 0)[2] == 1.0
    assert paired_difference_interval(0, 0, 10, 0)[1] == -1.0
    with pytest.raises(ValueError, match="cell counts"):
        paired_difference_interval(1, -1, 0, 0)


@given(st.tuples(*[st.integers(0, 40)] * 4).filter(lambda t: sum(t) > 0))
def test_paired_difference_properties(table: tuple[int, int, int, int]) -> None:
    a, b, c, d = table
    diff, low, high = paired_difference_interval(a, b, c, d)
    assert diff == pytest.approx((b - c) / sum(table))
    assert -1.0 <= low <= diff <= high <= 1.0
    # Swapping the two sides mirrors the interval.
    mirrored = paired_difference_interval(a, c, b, d)
    assert mirrored == pytest.approx((-diff, -high, -low))


# --- Cohen's kappa --------------------------------------------------------------------------


def _pairs(yy: int, yn: int, ny: int, nn: int) -> tuple[list[str], list[str]]:
    """Two raters' labels from a 2x2 table (rows: rater A yes/no; columns: rater B yes/no)."""
    cells = [("Y", "Y")] * yy + [("Y", "N")] * yn + [("N", "Y")] * ny + [("N", "N")] * nn
    return [x for x, _ in cells], [y for _, y in cells]


@pytest.mark.parametrize(
    ("table", "kappa"),
    [
        # Wikipedia, "Cohen's kappa": the worked example (po 0.7, pe 0.5) and the two tables of
        # its "same agreement, different kappa" discussion.
        ((20, 5, 10, 15), 0.4),
        ((45, 15, 25, 15), 0.1304),
        ((25, 35, 5, 35), 0.2593),
        # by hand: perfect agreement with variation; total disagreement on a balanced table
        ((3, 0, 0, 7), 1.0),
        ((0, 4, 4, 0), -1.0),
    ],
)
def test_cohen_kappa_tables(table: tuple[int, int, int, int], kappa: float) -> None:
    a, b = _pairs(*table)
    assert cohen_kappa(a, b) == pytest.approx(kappa, abs=5e-5)


def test_cohen_kappa_three_labels_by_hand() -> None:
    a = ["x", "x", "y", "y", "z", "z"]
    b = ["x", "y", "y", "y", "z", "x"]
    # po = 4/6; A's margins 2,2,2 and B's 2,3,1 give pe = (4 + 6 + 2) / 36 = 1/3
    assert cohen_kappa(a, b) == pytest.approx((4 / 6 - 1 / 3) / (1 - 1 / 3))


def test_cohen_kappa_undefined() -> None:
    assert cohen_kappa([], []) is None
    assert cohen_kappa([True] * 4, [True] * 4) is None  # pe = 1: no variation to measure
    assert cohen_kappa([True] * 4, [True, True, True, False]) == 0.0
    with pytest.raises(ValueError, match="different numbers"):
        cohen_kappa([True], [True, False])


# --- Fleiss' kappa --------------------------------------------------------------------------

# Wikipedia, "Fleiss' kappa", worked example: 10 subjects, 14 raters, 5 categories; kappa 0.210.
_WIKIPEDIA_COUNTS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_wikipedia() -> None:
    ratings = [[cat for cat, k in enumerate(row, 1) for _ in range(k)] for row in _WIKIPEDIA_COUNTS]
    assert round(fleiss_kappa(ratings), 3) == 0.210


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_fleiss_kappa_two_raters_is_scotts_pi(pairs: list[tuple[bool, bool]]) -> None:
    # With two raters Fleiss' kappa is Scott's pi: chance from the pooled margins.
    n = len(pairs)
    po = sum(x == y for x, y in pairs) / n
    yes = sum(x + y for x, y in pairs) / (2 * n)
    pe = yes**2 + (1 - yes) ** 2
    got = fleiss_kappa([list(p) for p in pairs])
    if pe == 1:
        assert got is None
    else:
        assert got == pytest.approx((po - pe) / (1 - pe))


def test_fleiss_kappa_by_hand_and_edges() -> None:
    # Scott's pi for the Cohen worked example above: pooled yes 55/100, pe = 0.505.
    a, b = _pairs(20, 5, 10, 15)
    assert fleiss_kappa(list(zip(a, b, strict=True))) == pytest.approx((0.7 - 0.505) / 0.495)
    assert fleiss_kappa([["a", "a", "a"], ["b", "b", "b"]]) == 1.0
    assert fleiss_kappa([]) is None
    assert fleiss_kappa([["a"], ["b"]]) is None  # one rater: nothing to agree with
    assert fleiss_kappa([["a", "a"], ["a", "a"]]) is None  # one label throughout
    with pytest.raises(ValueError, match="same number of raters"):
        fleiss_kappa([["a", "b"], ["a"]])


# --- Kendall's tau-b ------------------------------------------------------------------------


def _sign(v: float) -> int:
    return (v > 0) - (v < 0)


def _tau_b_by_signs(x: list[float], y: list[float]) -> float | None:
    """tau-b as the correlation of the pairwise sign matrices, over all ordered pairs."""
    idx = range(len(x))
    sx = [[_sign(x[i] - x[j]) for j in idx] for i in idx]
    sy = [[_sign(y[i] - y[j]) for j in idx] for i in idx]
    num = sum(sx[i][j] * sy[i][j] for i in idx for j in idx)
    vx = sum(sx[i][j] ** 2 for i in idx for j in idx)
    vy = sum(sy[i][j] ** 2 for i in idx for j in idx)
    return None if vx * vy == 0 else num / (vx * vy) ** 0.5


@pytest.mark.parametrize(
    ("x", "y", "tau"),
    [
        # the example in SciPy's kendalltau documentation (ties in both variables)
        ([12, 2, 1, 12, 2], [1, 4, 7, 1, 0], -0.47140452079103173),
        # by hand
        ([1, 2, 3, 4], [10, 20, 30, 40], 1.0),
        ([1, 2, 3, 4], [4, 3, 2, 1], -1.0),
        ([1, 2, 3], [1, 3, 2], 1 / 3),
        # one tie in x: n0 = 3, n1 = 1, concordant 2: 2 / sqrt(2 * 3)
        ([1, 1, 2], [1, 2, 3], 2 / 6**0.5),
    ],
)
def test_kendall_tau_b_examples(x: list[float], y: list[float], tau: float) -> None:
    assert kendall_tau_b(x, y) == pytest.approx(tau)


@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=12).map(
        lambda pairs: ([float(p) for p, _ in pairs], [float(q) for _, q in pairs])
    )
)
def test_kendall_tau_b_matches_sign_correlation(xy: tuple[list[float], list[float]]) -> None:
    x, y = xy
    expected = _tau_b_by_signs(x, y)
    got = kendall_tau_b(x, y)
    assert got is None if expected is None else got == pytest.approx(expected)


def test_kendall_tau_b_undefined() -> None:
    assert kendall_tau_b([], []) is None
    assert kendall_tau_b([0.3], [0.5]) is None
    assert kendall_tau_b([0.3, 0.3, 0.3], [0.1, 0.2, 0.3]) is None  # all tied
    with pytest.raises(ValueError, match="differ in length"):
        kendall_tau_b([1.0], [1.0, 2.0])


# --- Cohen's kappa with its interval -----------------------------------------------------------


def _raters(table: list[list[int]]) -> tuple[list[int], list[int]]:
    """Two raters' labels from a contingency table (rows: the first rater)."""
    a: list[int] = []
    b: list[int] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i] * count
            b += [j] * count
    return a, b


@pytest.mark.parametrize(
    ("table", "kappa", "se"),
    [
        # the SE statsmodels 0.15.0's cohens_kappa(table).std_kappa reports (Fleiss, Cohen and
        # Everitt 1969), computed outside this project
        ([[20, 5], [10, 15]], 0.4, 0.12699606293110033),
        ([[75, 1, 4], [5, 4, 1], [0, 0, 10]], 0.676470588235294, 0.08770295347521254),
        (
            [[40, 3, 2, 0], [4, 30, 5, 1], [1, 6, 20, 2], [0, 0, 3, 10]],
            0.701955671447197,
            0.05047183925575937,
        ),
    ],
)
def test_kappa_interval_is_the_large_sample_one(
    table: list[list[int]], kappa: float, se: float
) -> None:
    got = cohen_kappa_interval(*_raters(table))
    assert got is not None
    assert got == pytest.approx((kappa, kappa - Z95 * se, kappa + Z95 * se), abs=1e-12)


def test_kappa_interval_edges() -> None:
    assert cohen_kappa_interval([1, 1, 1], [1, 1, 1]) is None  # kappa undefined
    perfect = cohen_kappa_interval([0, 1, 0, 1], [0, 1, 0, 1])
    assert perfect == (1.0, 1.0, 1.0)  # no disagreement: the variance is 0
    # a label only one rater used (the judge's "error") never agrees and widens nothing odd
    got = cohen_kappa_interval([0, 0, 1, 1, 2, 2], [0, "e", 1, 1, 2, 2])
    assert got is not None and -1 <= got[1] <= got[0] <= got[2] <= 1
