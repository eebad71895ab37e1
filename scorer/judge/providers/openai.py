"""OpenAI: reasoning_effort for a reasoning model (which takes only the default temperature),
max_completion_tokens, reasoning.effort on the responses endpoint."""

from __future__ import annotations

from scorer.judge.providers import ChatCall, Provider, register


def _thinking(call: ChatCall, level: str | None) -> None:
    if level:
        call.body["reasoning_effort"] = level
        call.temperature = None  # reasoning models take only the default


OPENAI = register(
    Provider(
        "openai",
        hosts=("api.openai.com",),
        chat_thinking=_thinking,
        token_cap="max_completion_tokens",
        responses_reasoning=True,
    )
)
