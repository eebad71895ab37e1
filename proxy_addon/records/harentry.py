"""One line of data/requests.jsonl (ours, a model call's, the reference's) as one HAR entry.

The request as recorded (headers, query and body redacted again: the proxy did, the reference's
browser-side log did not), the response and timings where the proxy measured them (HAR's -1
where it did not), and `_clawbench`: what the proxy did with it. Lines come typed from the one
reader of requests.jsonl (proxy_addon.records.requestlog).
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from proxy_addon.matching.redact import redact_fields, redact_headers, redact_url
from proxy_addon.records.har import (
    UNKNOWN,
    Content,
    EntryMark,
    HarEntry,
    HarRequest,
    HarResponse,
    NameValue,
    PostData,
    PostParam,
    Timings,
    TrafficAction,
)
from proxy_addon.records.requestlog import (
    ModelCallLine,
    ReferenceLogLine,
    RequestLogEntry,
    ResponseLine,
    ShortLine,
    Verdict,
)

BODY_NOTE = "as the proxy recorded it: parsed, secrets redacted, cut at 64 K characters"
BLOCKED_NOTE = "blocked by the proxy: it never reached the site"
REFUSED_NOTE = "refused by the proxy: never forwarded"


def number(value: Any) -> float | None:
    """A finite JSON number, else None."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None


def started(timestamp: float) -> str:
    """HAR's startedDateTime: ISO 8601, UTC, milliseconds."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")


Line = RequestLogEntry | ModelCallLine | ShortLine | ReferenceLogLine
"""A line that stands for a request (its answer, a ResponseLine, goes on its entry)."""

SHORT_NOTE = "past the first bound of the proxy's records budget: its essentials only"
_ACTIONS = {
    Verdict.PASSED: TrafficAction.FORWARDED,
    Verdict.BLOCKED: TrafficAction.BLOCKED,
    Verdict.REFUSED: TrafficAction.REFUSED,
    Verdict.MODEL_CALL: TrafficAction.MODEL_CALL,
}


def _headers(headers: dict[str, Any]) -> list[NameValue]:
    """Recorded headers as HAR's list, secrets redacted (again: the reference's log is raw)."""
    return _pairs(redact_headers((str(k), scalar(v)) for k, v in headers.items()))


def _pairs(mapping: Any) -> list[NameValue]:
    """A recorded dict (headers, query: a value may be a list) as HAR's name/value list."""
    if not isinstance(mapping, dict):
        return []
    out = []
    for name, value in mapping.items():
        for one in value if isinstance(value, list) else [value]:
            out.append(NameValue(name=str(name), value=scalar(one)))
    return out


def scalar(value: Any) -> str:
    """A recorded value as HAR's text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _content_type(line: RequestLogEntry | ReferenceLogLine) -> str:
    if isinstance(line, RequestLogEntry):
        return line.content_type or ""
    for name, value in line.headers.items():  # the reference's lines have no content_type
        if name.lower() == "content-type":
            return scalar(value)
    return ""


def _form_param(name: str, value: Any) -> PostParam:
    if isinstance(value, dict) and "filename" in value:  # a multipart file part, as recorded
        return PostParam(
            name=name,
            fileName=scalar(value.get("filename")),
            contentType=scalar(value.get("content_type")),
            value=f"[{scalar(value.get('size'))} bytes, sha256 {scalar(value.get('sha256'))}]",
        )
    return PostParam(name=name, value=scalar(value))


def post_data(body: Any, mime: str) -> PostData | None:
    """The recorded body as HAR's postData: a form's fields as params, anything else as text."""
    if body is None:
        return None
    lower = mime.lower()
    form = "x-www-form-urlencoded" in lower or "multipart/form-data" in lower
    if isinstance(body, dict) and form:
        params = [
            _form_param(str(name), one)
            for name, value in body.items()
            for one in (value if isinstance(value, list) else [value])
        ]
        text = "" if "multipart" in lower else urlencode([(p.name, p.value) for p in params])
        return PostData(mimeType=mime, text=text, params=params, comment=BODY_NOTE)
    return PostData(mimeType=mime, text=scalar(body), comment=BODY_NOTE)


def _mark(line: Line) -> EntryMark:
    """What the proxy did with the request of a line (the reference's lines have no verdict:
    forwarded)."""
    if isinstance(line, ModelCallLine):
        usage = line.usage.model_dump() if line.usage else None
        return EntryMark(
            action=TrafficAction.MODEL_CALL, model=line.model, usage=usage, error=line.error
        )
    if isinstance(line, ReferenceLogLine):
        return EntryMark(action=TrafficAction.FORWARDED)
    action = _ACTIONS[line.verdict]
    if isinstance(line, ShortLine):
        return EntryMark(action=action, matched=action is TrafficAction.BLOCKED)
    return EntryMark(
        action=action,
        matched=line.matched,
        near_miss=line.near_miss or None,
        equivalence=line.equivalence,
        refused=line.refused,
    )


def _model_call_exchange(line: ModelCallLine) -> tuple[HarResponse, Timings]:
    timings = Timings()
    if line.first_byte_s is not None:
        timings.wait = round(line.first_byte_s * 1000, 3)
        if line.duration_s is not None:
            timings.receive = round(max(line.duration_s - line.first_byte_s, 0.0) * 1000, 3)
    elif line.duration_s is not None:
        timings.wait = round(line.duration_s * 1000, 3)
    response = HarResponse(
        status=line.status or 0,
        bodySize=line.response_size,
        content=Content(size=line.response_size, comment="bytes on the wire; the body is not kept"),
    )
    return response, timings


def _request(line: Line) -> HarRequest:
    if isinstance(line, ModelCallLine | ShortLine):  # no headers, body or query: their sizes
        comment = SHORT_NOTE if isinstance(line, ShortLine) else None
        return HarRequest(
            method=line.method,
            url=line.url,
            httpVersion="",
            bodySize=line.request_size,
            comment=comment,
        )
    mime = _content_type(line)
    return HarRequest(
        method=line.method,
        url=redact_url(line.url),
        httpVersion=line.http_version if isinstance(line, RequestLogEntry) else "",
        headers=_headers(line.headers),
        queryString=_pairs(redact_fields(line.query_params)),
        postData=post_data(redact_fields(line.body), mime),
        bodySize=line.body_size if isinstance(line, RequestLogEntry) else UNKNOWN,
    )


def _ms(seconds: float | None) -> float:
    return round(seconds * 1000, 3) if seconds is not None else UNKNOWN


def answer(entry: HarEntry, line: ResponseLine) -> None:
    """Put the proxy's record of how the request was answered on its entry: the status, size
    and type of the site's answer (or of the proxy's block response), the durations; a request
    with no HTTP answer keeps status 0 and says why."""
    response = entry.response
    if line.status is not None:
        response.status = line.status
        response.bodySize = line.response_size
        response.httpVersion = entry.request.httpVersion
        response.content = Content(size=line.response_size, mimeType=line.content_type or "")
        if response.comment == "not recorded by the proxy":
            response.comment = None
    if line.error:
        response.comment = "; ".join(c for c in (response.comment, line.error) if c)
    send, wait, receive = _ms(line.send_s), _ms(line.wait_s), _ms(line.receive_s)
    entry.timings = Timings(send=send, wait=wait, receive=receive)
    entry.time = entry.timings.total()


def entry_of(line: Line) -> HarEntry:
    """One requests.jsonl line (ours, a model call, the reference's) as a HAR entry."""
    mark = _mark(line)
    response, timings = HarResponse(), Timings()
    if isinstance(line, ModelCallLine):
        response, timings = _model_call_exchange(line)
    elif isinstance(line, ShortLine) and line.status is not None:  # a model call, shortened
        size = line.response_size or 0
        response = HarResponse(status=line.status, bodySize=size, content=Content(size=size))
    elif mark.action is TrafficAction.BLOCKED:
        response.comment = BLOCKED_NOTE
    elif mark.action is TrafficAction.REFUSED:
        response.comment = f"{REFUSED_NOTE}: {mark.refused}"
    else:
        response.comment = "not recorded by the proxy"
    return HarEntry(
        startedDateTime=started(line.timestamp),
        time=timings.total(),
        request=_request(line),
        response=response,
        timings=timings,
        _clawbench=mark,
    )


__all__ = ["BLOCKED_NOTE", "BODY_NOTE", "REFUSED_NOTE", "SHORT_NOTE", "Line", "answer",
           "entry_of", "number", "post_data", "scalar", "started"]  # fmt: skip
