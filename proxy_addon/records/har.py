"""data/traffic.har: the run's traffic as an HTTP Archive (HAR 1.2), one entry per request.

Written at record time (and by `clawbench-report --har` for older runs) from what the proxy
recorded (proxy_addon.records.traffic builds it); read by HAR viewers, Chrome DevTools' Network
import among them. Every key of HAR 1.2 we write is declared here; our own keys start with an
underscore, as the format asks: `_clawbench` on each entry says what the proxy did with the
request (docs/formats.md), and on the log says what it was built from and what was left out.
"""

from __future__ import annotations

import json
import os
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proxy_addon.records.atomic import finite_floats
from proxy_addon.records.jsonfile import RecordError, first_error, read_json

HAR_FILE = "traffic.har"
"""Its name in the run's data dir."""

UNKNOWN = -1
"""HAR's value for a timing or size that was not measured."""

_HAR = ConfigDict(extra="forbid", populate_by_name=True)
"""HAR's own key names (camelCase) are the field names: the file reads as the format spells it."""


class TrafficAction(StrEnum):
    """What the proxy did with a request."""

    FORWARDED = "forwarded"
    BLOCKED = "blocked"
    """It matched the task's commit: never reached the site."""
    REFUSED = "refused"
    """Its names and destination disagree, it names no host, or its destination is private."""
    MODEL_CALL = "model_call"
    """The agent's call to its model API (a host named by clawbench_model_hosts)."""


class NameValue(BaseModel):
    model_config = _HAR

    name: str
    value: str


class PostParam(BaseModel):
    model_config = _HAR

    name: str
    value: str | None = None
    fileName: str | None = None
    contentType: str | None = None


class PostData(BaseModel):
    model_config = _HAR

    mimeType: str
    text: str = ""
    params: list[PostParam] | None = None
    comment: str | None = None


class HarRequest(BaseModel):
    model_config = _HAR

    method: str
    url: str
    httpVersion: str
    cookies: list[NameValue] = Field(default_factory=list)
    headers: list[NameValue] = Field(default_factory=list)
    queryString: list[NameValue] = Field(default_factory=list)
    postData: PostData | None = None
    headersSize: int = UNKNOWN
    bodySize: int = UNKNOWN
    comment: str | None = None


class Content(BaseModel):
    model_config = _HAR

    size: int = 0
    mimeType: str = ""
    text: str | None = None
    comment: str | None = None


class HarResponse(BaseModel):
    model_config = _HAR

    status: int = 0
    """0: no response (the connection was closed, as a block in 'error' mode does)."""
    statusText: str = ""
    httpVersion: str = ""
    cookies: list[NameValue] = Field(default_factory=list)
    headers: list[NameValue] = Field(default_factory=list)
    content: Content = Field(default_factory=Content)
    redirectURL: str = ""
    headersSize: int = UNKNOWN
    bodySize: int = UNKNOWN
    comment: str | None = None


class Timings(BaseModel):
    """Milliseconds; UNKNOWN where the proxy did not measure it."""

    model_config = _HAR

    blocked: float = UNKNOWN
    dns: float = UNKNOWN
    connect: float = UNKNOWN
    send: float = UNKNOWN
    wait: float = UNKNOWN
    receive: float = UNKNOWN
    ssl: float = UNKNOWN
    comment: str | None = None

    def total(self) -> float:
        """The entry's `time`: the measured phases summed (ssl is part of connect)."""
        phases = (self.blocked, self.dns, self.connect, self.send, self.wait, self.receive)
        return round(sum(t for t in phases if t > 0), 3)


class EntryMark(BaseModel):
    """An entry's `_clawbench`: the proxy's verdict on the request."""

    model_config = ConfigDict(extra="forbid")

    action: TrafficAction
    credited: bool = False
    """The commit interception.json credits (the first block)."""
    matched: bool = False
    near_miss: list[str] | None = None
    """Why it did not match although it came close (its host, or its URL, matched)."""
    equivalence: str | None = None
    refused: str | None = None
    body_unverified: bool = False
    websocket_message: Literal["text", "binary"] | None = None
    model: str | None = None
    usage: dict[str, int] | None = None
    error: str | None = None


class WebSocketMessage(BaseModel):
    """One message the client sent on a WebSocket (Chrome DevTools' `_webSocketMessages`)."""

    model_config = _HAR

    type: Literal["send"] = "send"
    time: float
    """Seconds since the epoch."""
    opcode: Literal[1, 2]
    """1: text, 2: binary (base64, as the log keeps it)."""
    data: str


class HarEntry(BaseModel):
    model_config = _HAR

    startedDateTime: str
    time: float
    request: HarRequest
    response: HarResponse
    cache: dict[str, Any] = Field(default_factory=dict)
    timings: Timings
    comment: str | None = None
    clawbench: EntryMark = Field(alias="_clawbench")
    webSocketMessages: list[WebSocketMessage] = Field(
        default_factory=list, alias="_webSocketMessages"
    )


class Creator(BaseModel):
    model_config = _HAR

    name: str
    version: str


class LogMark(BaseModel):
    """The log's `_clawbench`: where the entries came from and what is not among them."""

    model_config = ConfigDict(extra="forbid")

    run: str
    source: str
    """The file the entries were built from (data/requests.jsonl), or why there is none."""
    lines: int = 0
    lines_unreadable: int = 0
    """Lines that are not a request's JSON object (a line cut when the proxy was killed)."""
    entries_left_out: int = 0
    """Requests not written, past the file's size cap (HAR_CAP_BYTES)."""
    built_at: str


class HarLog(BaseModel):
    model_config = _HAR

    version: Literal["1.2"] = "1.2"
    creator: Creator
    entries: list[HarEntry] = Field(default_factory=list)
    comment: str | None = None
    clawbench: LogMark = Field(alias="_clawbench")


class Har(BaseModel):
    """data/traffic.har."""

    model_config = _HAR

    log: HarLog


def _compact(value: BaseModel) -> bytes:
    """Compact strict JSON, ASCII (a lone surrogate from a body has no UTF-8 form)."""
    data = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    try:
        text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or Infinity from a body: strict JSON has neither
        text = json.dumps(finite_floats(data), separators=(",", ":"), allow_nan=False)
    return text.encode("ascii")


def entry_size(entry: HarEntry) -> int:
    """Bytes the entry takes in the file."""
    return len(_compact(entry))


def har_bytes(har: Har) -> bytes:
    """The file's bytes: compact JSON, keys by HAR's names, None left out."""
    return _compact(har) + b"\n"


def read_har(path: str | os.PathLike[str]) -> Har:
    """Read a traffic.har we wrote; RecordError names the file and the field."""
    p = Path(path)
    try:
        return Har.model_validate(read_json(p))
    except ValidationError as e:
        raise RecordError(f"{p}: {first_error(e)}") from e


__all__ = [
    "HAR_FILE",
    "UNKNOWN",
    "Content",
    "Creator",
    "EntryMark",
    "Har",
    "HarEntry",
    "HarLog",
    "HarRequest",
    "HarResponse",
    "LogMark",
    "NameValue",
    "PostData",
    "PostParam",
    "Timings",
    "TrafficAction",
    "WebSocketMessage",
    "entry_size",
    "har_bytes",
    "read_har",
]
