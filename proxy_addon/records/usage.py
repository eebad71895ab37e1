"""The agent's model usage: data/usage.json (per run) and the compact requests.jsonl line the
addon writes for each model call (hosts named by clawbench_model_hosts).

Token counts mean the same for every API (records.tokens). A call whose reply named no usage is
counted in calls_without_usage. How the calls ended is usage.json's `api` (records.modelapi).
"""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from proxy_addon.records.jsonfile import read_optional
from proxy_addon.records.modelapi import CallOutcome, ModelApiRecord
from proxy_addon.records.tokens import ModelUsage, TokenCounts

USAGE_FILE = "usage.json"
"""Its name in the run's data dir."""

UNKNOWN_MODEL = "unknown"
"""The key of calls whose reply and request name no model."""

_OURS = ConfigDict(extra="forbid")


class UnmeteredReplies(BaseModel):
    """Replies with a model API's usage block from hosts that are not model hosts: the agent
    called another model API, so its usage is incomplete (those tokens are not counted)."""

    model_config = _OURS

    calls: int = Field(default=0, ge=0)
    hosts: list[str] = Field(default_factory=list)
    """The first few such hosts (with their port)."""


HOSTS_KEPT = 10


class AgentUsage(BaseModel):
    """data/usage.json: the run's model calls and tokens per model (as the replies name it)."""

    model_config = _OURS

    calls: int = Field(default=0, ge=0)
    models: dict[str, ModelUsage] = Field(default_factory=dict)
    other_names: int = Field(default=0, ge=0)
    """Of calls, those sent to a model host's address under another name (counted all the same)."""
    unmetered: UnmeteredReplies | None = None
    """Set when usage is incomplete: replies with usage from hosts that are not model hosts."""
    api: ModelApiRecord | None = None
    """How the run's own calls ended; None unless the proxy was told what they look like."""

    @property
    def complete(self) -> bool:
        """Whether every reply with a model API's usage that the proxy saw was counted."""
        return self.unmetered is None

    def totals(self) -> ModelUsage:
        """All models summed."""
        return sum(self.models.values(), ModelUsage())


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
    outcome: CallOutcome | None = None
    """How it ended (records.modelapi.CallOutcome); None in lines written before it was kept."""
    own: bool | None = None
    """The run's own call (its key, endpoint, model); None when the proxy was not told them."""
    not_own: str | None = None
    """Why it is not: another key, another endpoint, another model, not a request of the API."""
    api_error: str | None = None
    """The error type or code the API named."""


def add_call(usage: AgentUsage, model: str | None, tokens: TokenCounts | None) -> AgentUsage:
    """usage with one more call of model (tokens None: the reply named no usage)."""
    name = model or UNKNOWN_MODEL
    one = ModelUsage(calls=1, calls_without_usage=int(tokens is None))
    models = dict(usage.models)
    models[name] = models.get(name, ModelUsage()) + (one if tokens is None else one + tokens)
    return usage.model_copy(update={"calls": usage.calls + 1, "models": models})


def add_unmetered(usage: AgentUsage, host: str) -> AgentUsage:
    """usage marked incomplete: one more reply with usage from host, not a model host."""
    seen = usage.unmetered or UnmeteredReplies()
    hosts = (
        seen.hosts if host in seen.hosts or len(seen.hosts) >= HOSTS_KEPT else [*seen.hosts, host]
    )
    return usage.model_copy(
        update={"unmetered": UnmeteredReplies(calls=seen.calls + 1, hosts=hosts)}
    )


def read_usage(path: str | os.PathLike[str]) -> AgentUsage | None:
    """data/usage.json, or None when there is none (no model call went through the proxy)."""
    return read_optional(path, AgentUsage)


__all__ = [
    "UNKNOWN_MODEL",
    "USAGE_FILE",
    "AgentUsage",
    "ModelCallLine",
    "ModelUsage",
    "TokenCounts",
    "UnmeteredReplies",
    "add_call",
    "add_unmetered",
    "read_usage",
]
