"""data/interception.json and data/.proxy-ready (docs/formats.md, "data/interception.json"), and a
reader for every interception.json shape."""

from __future__ import annotations

import importlib.metadata
import os
import sys
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from proxy_addon.records.jsonfile import RecordError, first_error, read_json
from proxy_addon.records.outcome import INTERCEPTION_STOP_REASONS, AnyStopReason, StopReason

STOP_DESCRIPTIONS = {
    StopReason.TIME_LIMIT_EXCEEDED: "Session stopped: time limit exceeded before the interceptor "
    "was triggered.",
    StopReason.AGENT_EXITED: "Session stopped: agent process exited before triggering the "
    "interceptor.",
    StopReason.AGENT_IDLE: "Session stopped: agent went idle before triggering the interceptor.",
    StopReason.PROXY_FAILED: "Session stopped: the interception proxy failed (never ready, or "
    "died).",
    StopReason.CONTAINER_FAILED: "Session stopped: the sandbox container failed or died.",
    StopReason.UNKNOWN: "Session stopped: unknown reason.",
}

_OURS = ConfigDict(extra="forbid", populate_by_name=True)


class InterceptedRequest(BaseModel):
    model_config = _OURS

    url: str
    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    body: Any = None
    headers: dict[str, str] = Field(default_factory=dict)
    content_type: str | None = None
    http_version: str = "HTTP/1.1"
    body_size: int = 0
    body_unverified: bool = False
    equivalence: str | None = None
    """How servers route it to the commit although the exact rule misses it (docs/formats.md,
    "Matching"), e.g. "HEAD for GET"; None for an exact match."""
    host_unresolved: bool = False
    """Its host had no address: blocked and credited all the same (a block needs no
    connection; docs/formats.md)."""


class Interception(BaseModel):
    """data/interception.json as the addon writes it at block time."""

    model_config = _OURS

    intercepted: Literal[True] = True
    request: InterceptedRequest
    schema_: dict[str, Any] = Field(alias="schema")
    intercepted_at: float
    blocked_count: int = 1


class NotIntercepted(BaseModel):
    """data/interception.json as the runner writes it when nothing matched (reference shape)."""

    model_config = _OURS

    intercepted: Literal[False] = False
    stop_reason: StopReason
    stop_description: str
    request: None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")

    @classmethod
    def for_reason(cls, reason: str, schema: dict[str, Any] | None) -> NotIntercepted:
        stop = StopReason(reason) if reason in INTERCEPTION_STOP_REASONS else StopReason.UNKNOWN
        return cls(stop_reason=stop, stop_description=STOP_DESCRIPTIONS[stop], schema=schema)

    @field_validator("stop_reason")
    @classmethod
    def _reference_reason(cls, reason: StopReason) -> StopReason:
        if reason not in INTERCEPTION_STOP_REASONS:
            raise ValueError(f"not one of {[str(r) for r in INTERCEPTION_STOP_REASONS]}")
        return reason


class ProxyReady(BaseModel):
    """data/.proxy-ready: written once the task is loaded and the proxy listens."""

    model_config = _OURS

    pid: int
    versions: dict[str, str]
    listen: list[str]
    task: str
    task_sha256: str
    log_only: bool
    ready_at: float

    @classmethod
    def now(
        cls, listen: list[str], task: Path, task_sha256: str, log_only: bool, mitmproxy: str
    ) -> ProxyReady:
        """This process, ready now: pid, versions (ours, mitmproxy's, Python's) and listeners."""
        return cls(
            pid=os.getpid(),
            versions={
                "clawbench-intercept": _package_version(),
                "mitmproxy": mitmproxy,
                "python": sys.version.split()[0],
            },
            listen=listen,
            task=str(task),
            task_sha256=task_sha256,
            log_only=log_only,
            ready_at=time.time(),
        )


def _package_version() -> str:
    try:
        return importlib.metadata.version("clawbench-intercept")
    except importlib.metadata.PackageNotFoundError:  # a checkout used by path
        return "0+checkout"


class InterceptionView(BaseModel):
    """Any interception.json shape, normalised for readers (ours, the reference's, flat)."""

    model_config = ConfigDict(extra="allow")

    intercepted: bool
    request: dict[str, Any] | None = None
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    stop_reason: AnyStopReason | None = None
    stop_description: str | None = None
    intercepted_at: float | None = None
    blocked_count: int | None = None


def normalise_interception(data: Any, path: str = "interception.json") -> InterceptionView:
    """Accept ours, the reference's (no headers, no blocked_count) and the flat url/method/body."""
    if not isinstance(data, dict):
        raise RecordError(f"{path}: expected a JSON object, got {type(data).__name__}")
    data = dict(data)
    if "request" not in data and "url" in data:
        flat = {k: data.pop(k) for k in ("url", "method", "body", "params") if k in data}
        missed = data.get("intercepted") is False or (
            "intercepted" not in data and flat["url"] is None
        )
        data["request"] = None if missed else flat  # a miss writes its keys as nulls
        data.setdefault("intercepted", not missed)
    if "intercepted" not in data:
        data["intercepted"] = bool(data.get("request"))
    try:
        view = InterceptionView.model_validate(data)
    except ValidationError as e:
        raise RecordError(f"{path}: {first_error(e)}") from e
    if view.intercepted and not isinstance(view.request, dict):
        raise RecordError(f"{path}: intercepted is true but request is missing")
    if view.request is not None and not isinstance(view.request.get("url"), str):
        raise RecordError(f"{path}: request.url must be a string")
    return view


def read_interception(path: str | os.PathLike[str]) -> InterceptionView:
    """Read data/interception.json in any supported shape; RecordError names the file."""
    return normalise_interception(read_json(path), str(path))
