"""What the judges' own calls cost: the tokens of every verdict a judge gave (judge.json's usage,
re-used verdicts included: the batch spent them once), priced with models.yaml's
price_per_million_tokens of the judge's entry (USD), beside the agents' cost (agent_cost).

A verdict read from the reference's files cost nothing here. A judge without a price leaves the
cost unknown, and is named so a reader knows which entry to price.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_addon.records import ModelUsage
from scorer.batch.agent_cost import model_cost, usage_columns
from scorer.batch.rescore_summary import JudgeUsageTotals
from scorer.batch.scored_run import ScoredRun
from scorer.models_yaml import Price


def judge_usage_totals(runs: Sequence[ScoredRun], prices: Mapping[str, Price]) -> JudgeUsageTotals:
    """The judges' verdicts and tokens over runs, and their cost when every judge is priced."""
    out = JudgeUsageTotals()
    per_judge: dict[str, ModelUsage] = {}
    for run in runs:
        for judge, by_rubric in run.verdicts.items():
            for verdict in by_rubric.values():
                if verdict.source != "judge":
                    continue  # the reference's verdict: not a call of ours
                one = ModelUsage(calls=1) + verdict.tokens
                per_judge[judge] = per_judge.get(judge, ModelUsage()) + one
    cost = 0.0
    for judge, usage in per_judge.items():
        out.verdicts += usage.calls
        out += usage
        price = prices.get(judge)
        if price is None:
            out.unpriced.append(judge)
        else:
            cost += model_cost(usage, price)
    if per_judge and not out.unpriced:
        out.cost_usd = round(cost, 6)
    return out


def judge_leaderboard_columns(totals: JudgeUsageTotals) -> dict[str, str]:
    """The leaderboard CSV's judge_input_tokens, judge_output_tokens, judge_cost_usd."""
    return usage_columns(
        "judge", bool(totals.verdicts), totals.input_tokens, totals.output_tokens, totals.cost_usd
    )


__all__ = ["judge_leaderboard_columns", "judge_usage_totals"]
