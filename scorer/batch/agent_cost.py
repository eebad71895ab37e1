"""What the agents' own model calls cost: run-meta.json's agent_usage summed over runs, priced
with models.yaml's price_per_million_tokens (USD).

A model's price is its own entry's when the usage names an entry (a harness that calls a second,
smaller model for side tasks), else the entry the run was started with (`--model`, run-meta's
`model`): providers answer with a dated id ("gpt-5.5-2026-03-01") for the entry's name. Input
tokens include cached ones; the cached part is priced at cached_input when the entry gives it.
Calls whose reply named no usage cost nothing here, and are counted so a reader knows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from proxy_addon.records import AgentUsage, ModelUsage
from scorer.batch.rescore_summary import AgentUsageTotals
from scorer.batch.scored_run import ScoredRun
from scorer.models_yaml import Price

MILLION = 1_000_000


def model_cost(usage: ModelUsage, price: Price) -> float:
    """USD for one model's tokens."""
    cached = min(usage.cached_tokens, usage.input_tokens)
    cached_price = price.input if price.cached_input is None else price.cached_input
    return (
        (usage.input_tokens - cached) * price.input
        + cached * cached_price
        + usage.output_tokens * price.output
    ) / MILLION


def run_cost(usage: AgentUsage, run_model: str | None, prices: Mapping[str, Price]) -> float | None:
    """USD for one run's calls; None when a model it called has no price."""
    fallback = prices.get(run_model) if run_model else None
    total = 0.0
    for name, one in usage.models.items():
        price = prices.get(name, fallback)
        if price is None:
            return None
        total += model_cost(one, price)
    return total


def usage_totals(runs: Sequence[ScoredRun], prices: Mapping[str, Price]) -> AgentUsageTotals:
    """The runs' agent usage summed, and its cost when every run with usage is priced."""
    out = AgentUsageTotals()
    cost = 0.0
    for run in runs:
        usage = run.agent_usage
        if usage is None:
            out.runs_without_usage += 1
            continue
        out.runs_with_usage += 1
        out.runs_usage_incomplete += not usage.complete
        out += usage.totals()
        priced = run_cost(usage, run.model, prices)
        if priced is None:
            out.runs_unpriced += 1
        else:
            cost += priced
    if out.runs_with_usage and not out.runs_unpriced:
        out.cost_usd = round(cost, 6)
    return out


def usage_columns(
    who: str, used: bool, input_tokens: int, output_tokens: int, cost: float | None
) -> dict[str, str]:
    """The leaderboard CSV's <who>_input_tokens, <who>_output_tokens, <who>_cost_usd (4
    decimals, empty when unknown); none when nothing was used."""
    if not used:
        return {}
    return {
        f"{who}_input_tokens": str(input_tokens),
        f"{who}_output_tokens": str(output_tokens),
        f"{who}_cost_usd": "" if cost is None else f"{cost:.4f}",
    }


def leaderboard_columns(totals: AgentUsageTotals) -> dict[str, str]:
    """The leaderboard CSV's agent_input_tokens, agent_output_tokens, agent_cost_usd."""
    return usage_columns(
        "agent",
        bool(totals.runs_with_usage),
        totals.input_tokens,
        totals.output_tokens,
        totals.cost_usd,
    )


__all__ = ["leaderboard_columns", "model_cost", "run_cost", "usage_columns", "usage_totals"]
