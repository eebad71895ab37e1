"""data/requests.jsonl: its line models and its one reader (docs/formats.md).

The addon appends one line per request the agent sent (RequestLogEntry; a WebSocket message is
one too), one per model call (ModelCallLine) and one per answer a request got (ResponseLine);
past the full-line part of its byte budget a request is a ShortLine. Every line goes through
records.requestwriter.RequestLogWriter and is read back through RequestLog, which turns each
into its model.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticSerializationError

from proxy_addon.records.atomic import finite_floats
from proxy_addon.records.jsonfile import RecordError, first_error
from proxy_addon.records.usage import ModelCallLine

REQUESTS_FILE = "requests.jsonl"
"""Its name in the run's data dir."""

_UNSET = Field(default=None, exclude_if=lambda v: v is None)
"""A key written only when it has a value."""


class RequestLogEntry(BaseModel):
    """One request the agent sent, as the proxy saw it (or one WebSocket message it sent)."""

    # NaN and ±Infinity from a body are written as the strings "NaN", "Infinity", "-Infinity".
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="strings")

    timestamp: float
    """When the proxy began to receive it (HAR's startedDateTime)."""
    id: str | None = _UNSET
    """The flow's id: its ResponseLine names it (older files have none)."""
    url: str
    method: str
    headers: dict[str, str]
    body: Any = None
    query_params: dict[str, Any] = Field(default_factory=dict)
    http_version: str
    content_type: str | None = None
    body_size: int = 0
    matched: bool = False
    blocked: bool = False
    near_miss: list[str] | None = None
    websocket: bool = False
    mode: str | None = None
    equivalence: str | None = _UNSET
    """How servers route it to the commit although the exact rule misses it."""
    websocket_message: Literal["text", "binary"] | None = _UNSET
    """Set on a line of its own for each message a client sent on the WebSocket this url opened
    (body: the message, redacted and capped as a body)."""
    refused: str | None = _UNSET
    """Why the proxy refused to forward it (names and destination disagree, no host, a private
    destination); a refused request is never forwarded nor credited."""

    @property
    def verdict(self) -> Verdict:
        """What became of it: refused (never forwarded) outranks blocked."""
        if self.refused:
            return Verdict.REFUSED
        return Verdict.BLOCKED if self.blocked else Verdict.PASSED


class Verdict(StrEnum):
    """What became of a request, as a ShortLine says it."""

    PASSED = "passed"
    BLOCKED = "blocked"
    REFUSED = "refused"
    MODEL_CALL = "model_call"


URL_CAP = 512
"""Characters of a ShortLine's URL."""


class ShortLine(BaseModel):
    """A request past the full-line part of the byte budget: its essentials only."""

    model_config = ConfigDict(extra="forbid")

    timestamp: float
    short: Literal[True] = True
    id: str | None = _UNSET
    method: str
    url: str
    """Its scheme, host and path: no query, at most URL_CAP characters."""
    verdict: Verdict
    request_size: int = Field(ge=0)
    status: int | None = _UNSET
    """A model call's reply status (a request's is in its ResponseLine)."""
    response_size: int | None = _UNSET


class ResponseLine(BaseModel):
    """How a logged request was answered: by the site, by the proxy's block, or not at all."""

    model_config = ConfigDict(extra="forbid")

    timestamp: float
    """When the answer ended (or the request failed)."""
    response: Literal[True] = True
    id: str
    """The RequestLogEntry (or ShortLine) it answers."""
    status: int | None
    """None: no HTTP answer (killed by the proxy, a connection error)."""
    response_size: int = Field(ge=0)
    """Body bytes as received (compressed when the reply was)."""
    content_type: str | None = None
    send_s: float | None = None
    """From the request's first byte to its last, through the proxy."""
    wait_s: float | None = None
    """From the request's last byte to the answer's headers."""
    receive_s: float | None = None
    """From the answer's headers to its last byte."""
    error: str | None = _UNSET


LogLine = RequestLogEntry | ModelCallLine | ShortLine | ResponseLine
"""A line of requests.jsonl, told apart by `model_call`, `short` and `response`."""


class ReferenceLogLine(BaseModel):
    """A line of the reference's requests.jsonl (its browser's log, read for traffic.har): the
    request as Chrome handed it over, raw (never redacted), no verdict of its own."""

    model_config = ConfigDict(extra="allow")

    timestamp: float
    url: str
    method: str
    headers: dict[str, Any] = Field(default_factory=dict)
    body: Any = None
    query_params: dict[str, Any] = Field(default_factory=dict)
    resource_type: str


def parse_line(data: Any) -> LogLine:
    """One line's JSON value as its model; ValidationError when it is none of them."""
    if isinstance(data, dict):
        if data.get("model_call") is True:
            return ModelCallLine.model_validate(data)
        if data.get("short") is True:
            return ShortLine.model_validate(data)
        if data.get("response") is True:
            return ResponseLine.model_validate(data)
    return RequestLogEntry.model_validate(data)


def is_request(line: LogLine) -> bool:
    """Whether a line stands for a request the agent sent (not the answer to one)."""
    return not isinstance(line, ResponseLine)


def dump_line(line: LogLine) -> bytes:
    """A line as written: compact JSON, newline-terminated, strict (no NaN)."""
    try:
        return line.model_dump_json().encode() + b"\n"
    except PydanticSerializationError:
        # A lone surrogate (a JSON body's "\ud83d") has no UTF-8 form: written as its escape.
        data = finite_floats(line.model_dump())
        text = json.dumps(data, separators=(",", ":"), allow_nan=False, default=str)
        return text.encode("ascii") + b"\n"


def shorten(line: LogLine) -> LogLine:
    """The line as written past the full-line part of the budget (a ResponseLine, or a line
    already short, as it is)."""
    if isinstance(line, RequestLogEntry):
        verdict = line.verdict
        return ShortLine(
            timestamp=line.timestamp,
            id=line.id,
            method=line.method[:URL_CAP],
            url=line.url.partition("?")[0][:URL_CAP],
            verdict=verdict,
            request_size=line.body_size,
        )
    if isinstance(line, ModelCallLine):
        return ShortLine(
            timestamp=line.timestamp,
            method=line.method,
            url=line.url[:URL_CAP],
            verdict=Verdict.MODEL_CALL,
            request_size=line.request_size,
            status=line.status,
            response_size=line.response_size,
        )
    return line


class RequestLog:
    """The one reader of requests.jsonl: iterating yields each line as its model, in order.

    Lines that are none of ours (the reference's shape, a line cut by a killed proxy) are
    skipped and counted in `unread`, the first few described in `problems`; with
    `reference=True` the reference's lines are yielded as ReferenceLogLine instead (traffic.har
    of a reference run). `last_size` is the bytes of the line last yielded. A missing file
    raises FileNotFoundError when iterated.
    """

    def __init__(self, path: str | os.PathLike[str], *, reference: bool = False) -> None:
        self.path = Path(path)
        self.reference = reference
        self.unread = 0
        self.last_size = 0
        self.problems: list[str] = []

    def _parse(self, data: Any) -> LogLine | ReferenceLogLine:
        if self.reference and isinstance(data, dict) and "resource_type" in data:
            return ReferenceLogLine.model_validate(data)
        return parse_line(data)

    def __iter__(self) -> Iterator[LogLine | ReferenceLogLine]:
        self.unread, self.problems = 0, []
        with self.path.open("rb") as lines:
            for number, raw in enumerate(lines, 1):
                if not raw.strip():
                    continue
                try:
                    # json.loads, not pydantic's JSON parser: that one refuses a lone surrogate.
                    line = self._parse(json.loads(raw))
                    self.last_size = len(raw)
                    yield line
                except ValueError as e:
                    self.unread += 1
                    if len(self.problems) < 5:
                        why = first_error(e) if isinstance(e, ValidationError) else str(e)
                        self.problems.append(f"{self.path}: line {number}: {why}")


def read_request_log(path: str | os.PathLike[str]) -> list[LogLine]:
    """Every line of requests.jsonl as its model ([] when there is none); RecordError naming
    the file and line when one is not ours."""
    log = RequestLog(path)
    try:
        lines = list(log)
    except FileNotFoundError:
        return []
    except OSError as e:
        raise RecordError(f"{path}: unreadable: {e}") from e
    if log.unread:
        raise RecordError(log.problems[0])
    return lines


__all__ = [
    "REQUESTS_FILE",
    "URL_CAP",
    "LogLine",
    "ModelCallLine",
    "ReferenceLogLine",
    "RequestLog",
    "RequestLogEntry",
    "ResponseLine",
    "ShortLine",
    "Verdict",
    "dump_line",
    "is_request",
    "parse_line",
    "read_request_log",
    "shorten",
]
