"""Token counts, modelled once: what a model call reports, normalised across APIs, and their sums.

input_tokens are all prompt tokens, cached ones included (OpenAI's prompt_tokens; Anthropic's
input_tokens plus its cache reads and writes; Gemini's promptTokenCount); cached_tokens the part
served from a prompt cache; output_tokens everything generated (reasoning included). The agent's
usage (data/usage.json), the judge's (data/judge.json) and every total over runs are these
models or extend them; `tokens_from_usage` is the one reader of an API's usage object.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field


class Tokens(BaseModel):
    """Input (cached included) and output tokens: a judge's call, or a total of them."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)

    def __add__(self, other: Tokens) -> Self:
        """self with other's counts added to the counts both carry (a total's other fields,
        a price or a note, stay self's)."""
        shared = _counts(self) & _counts(other)
        return self.model_copy(update={k: getattr(self, k) + getattr(other, k) for k in shared})


class TokenCounts(Tokens):
    """Tokens of one model call with the cached part (see the module docstring)."""

    cached_tokens: int = Field(default=0, ge=0)


class ModelUsage(TokenCounts):
    """Calls and their tokens: one model's totals over a run (data/usage.json), or a sum of
    them."""

    calls: int = Field(default=0, ge=0)
    calls_without_usage: int = Field(default=0, ge=0)
    """Calls whose reply named no usage: their tokens are not counted."""


def _counts(model: Tokens) -> set[str]:
    """The count fields of a model: those of the nearest of this module's models it extends."""
    kind = next(k for k in (ModelUsage, TokenCounts, Tokens) if isinstance(model, k))
    return set(kind.model_fields)


def _count(data: Any, key: str) -> int:
    value = data.get(key) if isinstance(data, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value) if value >= 0 and value == int(value) else 0


def tokens_from_usage(usage: Any) -> TokenCounts | None:
    """One API's usage object as TokenCounts; None when it holds none."""
    if not isinstance(usage, dict):
        return None
    if "prompt_tokens" in usage or "completion_tokens" in usage:  # chat completions
        prompt = _count(usage, "prompt_tokens")
        cached = _count(usage.get("prompt_tokens_details"), "cached_tokens")
        cached = cached or _count(usage, "prompt_cache_hit_tokens")  # DeepSeek's name for it
        return TokenCounts(
            input_tokens=prompt,
            output_tokens=_count(usage, "completion_tokens"),
            cached_tokens=min(cached, prompt),
        )
    if "input_tokens" in usage or "output_tokens" in usage:  # responses API, Anthropic
        # Anthropic counts cache reads and writes apart from input_tokens; OpenAI within it.
        read = _count(usage, "cache_read_input_tokens")
        written = _count(usage, "cache_creation_input_tokens")
        return TokenCounts(
            input_tokens=_count(usage, "input_tokens") + read + written,
            output_tokens=_count(usage, "output_tokens"),
            cached_tokens=_count(usage.get("input_tokens_details"), "cached_tokens") + read,
        )
    if "promptTokenCount" in usage or "candidatesTokenCount" in usage:  # Gemini
        prompt = _count(usage, "promptTokenCount")
        return TokenCounts(
            input_tokens=prompt,
            output_tokens=_count(usage, "candidatesTokenCount")
            + _count(usage, "thoughtsTokenCount"),
            cached_tokens=min(_count(usage, "cachedContentTokenCount"), prompt),
        )
    return None


__all__ = ["ModelUsage", "TokenCounts", "Tokens", "tokens_from_usage"]
