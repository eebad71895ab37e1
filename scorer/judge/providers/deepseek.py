"""DeepSeek: thinking switched by its own `thinking` parameter, reasoning_effort when it is on."""

from __future__ import annotations

from scorer.judge.providers import ChatCall, Provider, register


def _thinking(call: ChatCall, level: str | None) -> None:
    call.extra["thinking"] = {"type": "enabled" if level else "disabled"}
    if level:
        call.body["reasoning_effort"] = level
        call.temperature = None  # ignored in thinking mode


DEEPSEEK = register(Provider("deepseek", hosts=("api.deepseek.com",), chat_thinking=_thinking))
