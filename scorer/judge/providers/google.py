"""Google Gemini through its OpenAI-compatible endpoint: reasoning_effort always ("none": off)."""

from __future__ import annotations

import re

from scorer.judge.providers import ChatCall, Provider, register


def _openai_base(base: str) -> str:
    """https://generativelanguage.googleapis.com[/v1beta] → .../v1beta/openai."""
    return base if "/openai" in base else re.sub(r"/v1(beta)?$", "", base) + "/v1beta/openai"


def _thinking(call: ChatCall, level: str | None) -> None:
    call.body["reasoning_effort"] = level or "none"


GOOGLE = register(
    Provider(
        "google",
        api_types=("google-generative-ai",),
        hosts=(".generativelanguage.googleapis.com",),
        openai_base=_openai_base,
        chat_thinking=_thinking,
    )
)
