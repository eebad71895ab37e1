"""The agent's model usage: data/usage.json (per run) and the compact requests.jsonl line the
addon writes for each model call (hosts named by clawbench_model_hosts).

Token counts mean the same for every API: input_tokens are all prompt tokens, cached ones
included (OpenAI's prompt_tokens; Anthropic's input_tokens plus its cache reads and writes);
cached_tokens the part served from a prompt cache; output_tokens everything generated
(reasoning included). A call whose reply named no usage is counted in calls_without_usage.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proxy_addon.records.jsonfile import RecordError, first_error

USAGE_FILE = "usage.json"
"""Its name in the run's data dir."""

UNKNOWN_MODEL = "unknown"
"""The key of calls whose reply and request name no model."""

_OURS = ConfigDict(extra="forbid")


class TokenCounts(BaseModel):
    """Tokens of one model call, normalised across APIs (see the module docstring)."""

    model_config = _OURS

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cached_tokens: int = Field(default=0, ge=0)


class ModelUsage(BaseModel):
    """One model's totals over a run."""

    model_config = _OURS

    calls: int = Field(default=0, ge=0)
    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cached_tokens: int = Field(default=0, ge=0)
    calls_without_usage: int = Field(default=0, ge=0)


class AgentUsage(BaseModel):
    """data/usage.json: the run's model calls and tokens per model (as the replies name it)."""

    model_config = _OURS

    calls: int = Field(default=0, ge=0)
    models: dict[str, ModelUsage] = Field(default_factory=dict)

    def totals(self) -> ModelUsage:
        """All models summed."""
        total = ModelUsage()
        for one in self.models.values():
            total = add_model_usage(total, one)
        return total


class ModelCallLine(BaseModel):
    """The requests.jsonl line of a model call: no headers, no bodies, no query string."""

    model_config = _OURS

    timestamp: float
    model_call: Literal[True] = True
    url: str
    host: str
    path: str
    method: str
    status: int | None
    request_size: int = Field(ge=0)
    response_size: int = Field(ge=0)
    duration_s: float | None
    first_byte_s: float | None
    streamed: bool
    model: str | None
    usage: TokenCounts | None
    error: str | None = None


def add_model_usage(a: ModelUsage, b: ModelUsage) -> ModelUsage:
    """Field-wise sum of two ModelUsage."""
    return ModelUsage(**{k: getattr(a, k) + getattr(b, k) for k in ModelUsage.model_fields})


def add_call(usage: AgentUsage, model: str | None, tokens: TokenCounts | None) -> AgentUsage:
    """usage with one more call of model (tokens None: the reply named no usage)."""
    name = model or UNKNOWN_MODEL
    one = ModelUsage(calls=1, calls_without_usage=int(tokens is None))
    if tokens is not None:
        one = one.model_copy(update=tokens.model_dump())
    models = dict(usage.models)
    models[name] = add_model_usage(models.get(name, ModelUsage()), one)
    return AgentUsage(calls=usage.calls + 1, models=models)


def read_usage(path: str | os.PathLike[str]) -> AgentUsage | None:
    """data/usage.json, or None when there is none (no model call went through the proxy)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise RecordError(f"{p}: unreadable: {e}") from e
    try:
        return AgentUsage.model_validate_json(raw)
    except ValidationError as e:
        raise RecordError(f"{p}: {first_error(e)}") from e


__all__ = [
    "UNKNOWN_MODEL",
    "USAGE_FILE",
    "AgentUsage",
    "ModelCallLine",
    "ModelUsage",
    "TokenCounts",
    "add_call",
    "add_model_usage",
    "read_usage",
]
