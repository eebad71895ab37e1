"""How the agent's model API answered, as the proxy saw it: usage.json's `api` block, and the one
rule that turns it into a run's `model_api_failure` (docs/formats.md).

Only the run's own calls count: those that carry the run's key (the proxy is given a keyed hash of
it, never the key) to the configured endpoint and model, with a body that is a request of that
API. A call the agent makes fail on purpose (another key, path or model, a malformed body) is
counted apart in `other_calls` and decides nothing.

The rule (`model_api_failure`):
- the agent got no reply from its own calls and at least one of them failed, whatever the
  failure: without a reply the model never acted, so nothing of this is the model's doing; or
- it got replies, and every own call since the last one failed with an error of the API's side
  (auth, quota, not found, 5xx, connection, a stream cut short), each sent like a call that got a
  reply (the same header names: a header the agent adds to make the key fail is not the
  harness's). A rate limit (429) or the client hanging up after a reply decides nothing: a model
  that floods its own endpoint draws those itself.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class CallOutcome(StrEnum):
    """How one model call ended (a requests.jsonl model-call line's `outcome`)."""

    OK = "ok"
    AUTH = "auth"
    """401 or 403: the key was refused."""
    QUOTA = "quota"
    """402, a 429 that says the quota or credit is used up, a 400 about the credit balance."""
    NOT_FOUND = "not_found"
    """404: no such model or path."""
    RATE_LIMITED = "rate_limited"
    """429 (not a quota): too many requests for now."""
    SERVER_ERROR = "server_error"
    """5xx, 529, or an error event in a 200 stream (overloaded)."""
    CONNECTION = "connection"
    """No reply from the host: refused, reset, unreachable, no address, closed before replying."""
    STREAM_CUT = "stream_cut"
    """The reply began and the host ended it early."""
    BAD_REQUEST = "bad_request"
    """Another 4xx: the request's own fault."""
    CLIENT_GAVE_UP = "client_gave_up"
    """The client hung up before the reply ended (its own timeout, or on purpose)."""
    PROXY_ERROR = "proxy_error"
    """The proxy could not open a connection for it (its own descriptor limit)."""
    OTHER = "other"


API_SIDE = frozenset(
    {
        CallOutcome.AUTH,
        CallOutcome.QUOTA,
        CallOutcome.NOT_FOUND,
        CallOutcome.SERVER_ERROR,
        CallOutcome.CONNECTION,
        CallOutcome.STREAM_CUT,
    }
)
"""Failures that are the model API's, not the caller's: after a reply, only these decide."""

_OURS = ConfigDict(extra="forbid")
SHAPES_KEPT = 16


class FailedCall(BaseModel):
    """The last own call that failed: enough to say what came back (never a key or a body)."""

    model_config = _OURS

    url: str
    status: int | None
    outcome: CallOutcome
    api_error: str | None = None
    """The error's type or code as the API named it (e.g. invalid_api_key)."""


class ModelApiRecord(BaseModel):
    """usage.json's `api`: the run's model calls by outcome (see the module docstring)."""

    model_config = _OURS

    configured: bool = False
    """The proxy was told the run's endpoint, model and key (a harness run): own calls exist."""
    own_calls: int = Field(default=0, ge=0)
    own_replies: int = Field(default=0, ge=0)
    own_failures: dict[CallOutcome, int] = Field(default_factory=dict)
    other_calls: int = Field(default=0, ge=0)
    """Calls to a model host that are not the run's own (another key, path, model, body)."""
    trailing_failures: dict[CallOutcome, int] = Field(default_factory=dict)
    """Own calls that failed since the last own reply, by outcome."""
    trailing_unlike: int = Field(default=0, ge=0)
    """Of those, the ones sent unlike every call that got a reply (other header names)."""
    reply_shapes: list[str] = Field(default_factory=list)
    """Fingerprints of the header names of own calls that got a reply (a few)."""
    last_failure: FailedCall | None = None

    def add(
        self, *, own: bool, outcome: CallOutcome, shape: str, failed: FailedCall | None
    ) -> None:
        """Count one finished call (failed: its description, when it did not end OK)."""
        if not own:
            self.other_calls += 1
            return
        self.own_calls += 1
        if outcome == CallOutcome.OK:
            self.own_replies += 1
            self.trailing_failures, self.trailing_unlike = {}, 0
            if shape not in self.reply_shapes and len(self.reply_shapes) < SHAPES_KEPT:
                self.reply_shapes.append(shape)
            return
        self.own_failures[outcome] = self.own_failures.get(outcome, 0) + 1
        self.trailing_failures[outcome] = self.trailing_failures.get(outcome, 0) + 1
        self.trailing_unlike += shape not in self.reply_shapes
        self.last_failure = failed


def _kinds(counts: dict[CallOutcome, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))


def model_api_failure(api: ModelApiRecord | None) -> str | None:
    """Why the run is a model_api_failure (one line), or None when it is not."""
    if api is None or not api.configured or not api.own_failures:
        return None
    last = api.last_failure
    came_back = ""
    if last is not None:
        status = f"HTTP {last.status}" if last.status is not None else last.outcome
        named = f" ({last.api_error})" if last.api_error else ""
        came_back = f"; last: {status}{named} from {last.url}"
    if api.own_replies == 0:
        n = api.own_calls
        return f"model API failed: no reply in {n} call(s) ({_kinds(api.own_failures)}){came_back}"
    trailing = api.trailing_failures
    if not trailing or api.trailing_unlike or not set(trailing) <= API_SIDE:
        return None
    n = sum(trailing.values())
    return (
        f"model API failed: the last {n} call(s) after {api.own_replies} reply(s) "
        f"({_kinds(trailing)}){came_back}"
    )


__all__ = [
    "API_SIDE",
    "CallOutcome",
    "FailedCall",
    "ModelApiRecord",
    "model_api_failure",
]
