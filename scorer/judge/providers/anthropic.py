"""Anthropic through its OpenAI-compatible endpoint: extended thinking with a token budget."""

from __future__ import annotations

from scorer.judge.providers import ChatCall, Provider, register

BUDGET = {"minimal": 1024, "low": 1024, "medium": 4096, "high": 16000}
"""Thinking tokens per level (4096 for a level not named here)."""


def _openai_base(base: str) -> str:
    return base if base.endswith("/v1") else base + "/v1"


def _thinking(call: ChatCall, level: str | None) -> None:
    if level:
        budget = BUDGET.get(level, 4096)
        call.extra["thinking"] = {"type": "enabled", "budget_tokens": budget}
        call.max_tokens = max(call.max_tokens, budget + 1024)
        call.temperature = None  # extended thinking requires the default temperature


ANTHROPIC = register(
    Provider(
        "anthropic",
        api_types=("anthropic-messages",),
        hosts=("api.anthropic.com",),
        openai_base=_openai_base,
        chat_thinking=_thinking,
    )
)
