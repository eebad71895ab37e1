"""How far several judges agree: on each run's verdict, and on the order of models they produce.

Pure: the caller collects verdicts (run id -> judge -> match / no_match / cannot_tell) and pass
rates (judge -> model -> rate). Coefficients are over the three verdicts (cannot_tell is a
verdict). A null verdict (judge error, unparseable reply) is no verdict: it is counted per judge
and left out of every coefficient, never read as a fail. Coefficients that are undefined (no runs in
common, or no variation, e.g. both judges said true every time) are None; the observed
agreement beside them still says how often the judges matched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

from pydantic import BaseModel, ConfigDict, field_validator

from proxy_addon.records import JudgeVerdict, read_verdicts
from scorer.stats import cohen_kappa, fleiss_kappa, kendall_tau_b

_FROZEN = ConfigDict(extra="forbid", frozen=True)


class JudgeStats(BaseModel):
    model_config = _FROZEN

    judge: str
    n_runs: int  # runs this judge was asked about
    n_judged: int  # of those, with a verdict (match, no_match or cannot_tell)
    n_uncertain: int  # with no verdict (a judge error)
    n_cannot_tell: int = 0  # of n_judged, cannot_tell
    n_pass: int
    pass_rate: float | None  # n_pass / n_judged


class PairAgreement(BaseModel):
    model_config = _FROZEN

    judge_a: str
    judge_b: str
    n: int  # runs both gave a verdict
    agreement: float | None  # observed share of those runs with the same verdict
    kappa: float | None  # Cohen's kappa over the same runs


Verdicts = Mapping[str, Mapping[str, JudgeVerdict | None]]
"""run id -> judge -> verdict (None: no verdict, a judge error)."""


class Disagreement(BaseModel):
    model_config = _FROZEN

    run: str
    verdicts: dict[str, JudgeVerdict | None]

    _earlier = field_validator("verdicts", mode="before")(read_verdicts)


class Agreement(BaseModel):
    """Per judge, per pair of judges, over all judges (Fleiss), and the runs they split on."""

    model_config = _FROZEN

    judges: list[str]
    n_runs: int
    per_judge: list[JudgeStats]
    pairs: list[PairAgreement]
    n_all_judged: int  # runs every judge gave a verdict: Fleiss' kappa's runs
    fleiss_kappa: float | None
    disagreements: list[Disagreement]


def agreement(verdicts: Verdicts, judges: Sequence[str] | None = None) -> Agreement:
    """Judge agreement over runs (run id -> judge -> verdict), over the three verdicts.

    Judges are taken in the order given (others are ignored), else in order of first appearance.
    """
    order = list(judges) if judges is not None else _first_seen(verdicts)
    runs = sorted(verdicts)
    per_judge = []
    for judge in order:
        given = [verdicts[r][judge] for r in runs if judge in verdicts[r]]
        judged = [v for v in given if v is not None]
        per_judge.append(
            JudgeStats(
                judge=judge,
                n_runs=len(given),
                n_judged=len(judged),
                n_uncertain=len(given) - len(judged),
                n_cannot_tell=judged.count(JudgeVerdict.CANNOT_TELL),
                n_pass=judged.count(JudgeVerdict.MATCH),
                pass_rate=judged.count(JudgeVerdict.MATCH) / len(judged) if judged else None,
            )
        )
    pairs = []
    for ja, jb in combinations(order, 2):
        both = [(verdicts[r][ja], verdicts[r][jb]) for r in runs if _known(verdicts[r], ja, jb)]
        pairs.append(
            PairAgreement(
                judge_a=ja,
                judge_b=jb,
                n=len(both),
                agreement=sum(x == y for x, y in both) / len(both) if both else None,
                kappa=cohen_kappa([x for x, _ in both], [y for _, y in both]),
            )
        )
    complete = [[verdicts[r][j] for j in order] for r in runs if _known(verdicts[r], *order)]
    shown = [{j: verdicts[r][j] for j in order if j in verdicts[r]} for r in runs]
    split = [
        Disagreement(run=r, verdicts=v)
        for r, v in zip(runs, shown, strict=True)
        if len({x for x in v.values() if x is not None}) > 1
    ]
    return Agreement(
        judges=order,
        n_runs=len(runs),
        per_judge=per_judge,
        pairs=pairs,
        n_all_judged=len(complete),
        fleiss_kappa=fleiss_kappa(complete),
        disagreements=split,
    )


def _first_seen(verdicts: Verdicts) -> list[str]:
    return list(dict.fromkeys(j for by_judge in verdicts.values() for j in by_judge))


def _known(by_judge: Mapping[str, JudgeVerdict | None], *judges: str) -> bool:
    return all(by_judge.get(j) is not None for j in judges)


def _num(value: float | None, spec: str = ".3f") -> str:
    return "n/a" if value is None else format(value, spec)


def render_agreement(a: Agreement) -> str:
    """Judge agreement as a short plain-text block."""
    lines = [f"judge agreement over {a.n_runs} runs, {len(a.judges)} judges"]
    width = max((len(j) for j in a.judges), default=0)
    for s in a.per_judge:
        rate = "n/a" if s.pass_rate is None else f"{100 * s.pass_rate:.1f}%"
        lines.append(
            f"  {s.judge:<{width}}  pass {rate} ({s.n_pass}/{s.n_judged} judged,"
            f" {s.n_cannot_tell} cannot tell, {s.n_uncertain} errors)"
        )
    for p in a.pairs:
        observed = "n/a" if p.agreement is None else f"{100 * p.agreement:.1f}%"
        lines.append(
            f"  {p.judge_a} vs {p.judge_b}: Cohen's kappa {_num(p.kappa)},"
            f" agree {observed} of {p.n}"
        )
    if len(a.judges) > 2:
        lines.append(f"  Fleiss' kappa {_num(a.fleiss_kappa)} over {a.n_all_judged} runs")
    if a.disagreements:
        lines.append(f"judges disagree on {len(a.disagreements)} runs:")
        for d in a.disagreements:
            shown = ", ".join(f"{j} {_verdict(v)}" for j, v in d.verdicts.items())
            lines.append(f"  {d.run}: {shown}")
    return "\n".join(lines) + "\n"


def _verdict(value: JudgeVerdict | None) -> str:
    return "error" if value is None else str(value)


class RankedModel(BaseModel):
    model_config = _FROZEN

    model: str
    rate: float
    rank: int  # 1 + the number of models with a higher rate: tied models share a rank


class JudgeRanking(BaseModel):
    model_config = _FROZEN

    judge: str
    ranking: list[RankedModel]  # best first; ties by model name


class RankPair(BaseModel):
    model_config = _FROZEN

    judge_a: str
    judge_b: str
    n_models: int  # models both judges rated
    tau_b: float | None  # Kendall's tau-b between their rates over those models


class RankingAgreement(BaseModel):
    """Each judge's order of models, and how far each pair of judges' orders agree."""

    model_config = _FROZEN

    judges: list[str]
    rankings: list[JudgeRanking]
    pairs: list[RankPair]


def ranking_agreement(rates: Mapping[str, Mapping[str, float]]) -> RankingAgreement:
    """Rank models per judge (judge -> model -> pass rate) and compare judges by Kendall's tau-b."""
    judges = list(rates)
    rankings = []
    for judge in judges:
        by_model = rates[judge]
        ordered = sorted(by_model, key=lambda m: (-by_model[m], m))
        ranked = [
            RankedModel(
                model=m, rate=by_model[m], rank=1 + sum(r > by_model[m] for r in by_model.values())
            )
            for m in ordered
        ]
        rankings.append(JudgeRanking(judge=judge, ranking=ranked))
    pairs = []
    for ja, jb in combinations(judges, 2):
        common = sorted(rates[ja].keys() & rates[jb].keys())
        tau = kendall_tau_b([rates[ja][m] for m in common], [rates[jb][m] for m in common])
        pairs.append(RankPair(judge_a=ja, judge_b=jb, n_models=len(common), tau_b=tau))
    return RankingAgreement(judges=judges, rankings=rankings, pairs=pairs)


def render_ranking_agreement(r: RankingAgreement) -> str:
    """Rankings per judge and Kendall's tau-b per pair of judges, as plain text."""
    lines = []
    for jr in r.rankings:
        lines.append(f"ranking by {jr.judge}:")
        width = max((len(m.model) for m in jr.ranking), default=0)
        for m in jr.ranking:
            lines.append(f"  {m.rank:>3}. {m.model:<{width}}  {100 * m.rate:.1f}%")
    for p in r.pairs:
        lines.append(
            f"{p.judge_a} vs {p.judge_b}: Kendall's tau-b {_num(p.tau_b)} over {p.n_models} models"
        )
    return "\n".join(lines) + "\n"


__all__ = [
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
