"""One line of data/requests.jsonl (ours, a model call's, the reference's) as one HAR entry.

The request as recorded (headers, query and body redacted again: the proxy did, the reference's
browser-side log did not), the response and timings where the proxy measured them (HAR's -1
where it did not), and `_clawbench`: what the proxy did with it. A key of the wrong type is left
out, never trusted.
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

BODY_NOTE = "as the proxy recorded it: parsed, secrets redacted, cut at 64 K characters"
BLOCKED_NOTE = "blocked by the proxy: it never reached the site"
REFUSED_NOTE = "refused by the proxy: never forwarded"


def number(value: Any) -> float | None:
    """A finite JSON number, else None."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _size(value: Any) -> int:
    given = number(value)
    return int(given) if given is not None and given >= 0 else UNKNOWN


def started(timestamp: float) -> str:
    """HAR's startedDateTime: ISO 8601, UTC, milliseconds."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")


def _headers(headers: Any) -> list[NameValue]:
    """Recorded headers as HAR's list, secrets redacted (again: the reference's log is raw)."""
    if not isinstance(headers, dict):
        return []
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


def _content_type(line: dict[str, Any]) -> str:
    given = _text(line.get("content_type"))
    if given is not None:
        return given
    headers = line.get("headers")
    if isinstance(headers, dict):  # the reference's lines carry no content_type of their own
        for name, value in headers.items():
            if str(name).lower() == "content-type":
                return str(value)
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


def _mark(line: dict[str, Any]) -> EntryMark:
    """What the proxy did with the request of a line (its verdict keys; the reference's lines
    carry none: forwarded)."""
    refused = _text(line.get("refused"))
    if line.get("model_call") is True:
        action = TrafficAction.MODEL_CALL
    elif refused:
        action = TrafficAction.REFUSED
    elif line.get("blocked") is True:
        action = TrafficAction.BLOCKED
    else:
        action = TrafficAction.FORWARDED
    near = line.get("near_miss")
    usage = line.get("usage")
    return EntryMark(
        action=action,
        matched=line.get("matched") is True,
        near_miss=[str(r) for r in near] if isinstance(near, list) and near else None,
        equivalence=_text(line.get("equivalence")),
        refused=refused,
        model=_text(line.get("model")),
        usage={k: v for k, v in usage.items() if isinstance(v, int)}
        if isinstance(usage, dict)
        else None,
        error=_text(line.get("error")),
    )


def _model_call_exchange(line: dict[str, Any]) -> tuple[HarResponse, Timings]:
    duration, first_byte = number(line.get("duration_s")), number(line.get("first_byte_s"))
    timings = Timings()
    if first_byte is not None:
        timings.wait = round(first_byte * 1000, 3)
        if duration is not None:
            timings.receive = round(max(duration - first_byte, 0.0) * 1000, 3)
    elif duration is not None:
        timings.wait = round(duration * 1000, 3)
    status = line.get("status")
    size = _size(line.get("response_size"))
    response = HarResponse(
        status=status if isinstance(status, int) and not isinstance(status, bool) else 0,
        bodySize=size,
        content=Content(size=max(size, 0), comment="bytes on the wire; the body is not kept"),
    )
    return response, timings


def entry_of(line: dict[str, Any], timestamp: float) -> HarEntry:
    """One requests.jsonl line (ours or the reference's) as a HAR entry."""
    mark = _mark(line)
    mime = _content_type(line)
    request = HarRequest(
        method=_text(line.get("method")) or "",
        url=redact_url(_text(line.get("url")) or ""),
        httpVersion=_text(line.get("http_version")) or "",
        headers=_headers(line.get("headers")),
        queryString=_pairs(redact_fields(line.get("query_params"))),
        postData=post_data(redact_fields(line.get("body")), mime),
        bodySize=_size(line.get("request_size", line.get("body_size"))),
    )
    response, timings = HarResponse(), Timings()
    if mark.action is TrafficAction.MODEL_CALL:
        response, timings = _model_call_exchange(line)
    elif mark.action is TrafficAction.BLOCKED:
        response.comment = BLOCKED_NOTE
    elif mark.action is TrafficAction.REFUSED:
        response.comment = f"{REFUSED_NOTE}: {mark.refused}"
    else:
        response.comment = "not recorded by the proxy"
    return HarEntry(
        startedDateTime=started(timestamp),
        time=timings.total(),
        request=request,
        response=response,
        timings=timings,
        _clawbench=mark,
    )


__all__ = ["BLOCKED_NOTE", "BODY_NOTE", "REFUSED_NOTE", "entry_of", "number", "post_data",
           "scalar", "started"]  # fmt: skip
