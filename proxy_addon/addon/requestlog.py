"""What the addon writes about one request: its requests.jsonl line and its interception record.

Pure functions over plain values: one pass over the headers and one redaction per request; the
line is a RequestLogEntry (proxy_addon.records.requestlog), the record an Interception.
"""

from __future__ import annotations

import codecs
import json
import time
from collections.abc import Iterable
from typing import Any, NamedTuple

from proxy_addon.addon.caps import (
    HEADER_VALUE_CAP,
    HEADERS_CAP,
    URL_CAP,
    cap_headers,
    cap_query,
    cap_reasons,
    cut,
)
from proxy_addon.matching.bodies import (
    RAW_TEXT_CAP,
    ParsedBody,
    binary_text,
    parse_body,
    parse_query,
)
from proxy_addon.matching.matcher import MatchResult
from proxy_addon.matching.redact import redact_fields, redact_headers, redact_url
from proxy_addon.records.atomic import finite_floats
from proxy_addon.records.interception import InterceptedRequest, Interception
from proxy_addon.records.requestlog import RequestLogEntry, ResponseLine

_CHECK_CAP_ABOVE = RAW_TEXT_CAP // 8
"""A parsed body of fewer wire bytes cannot dump to RAW_TEXT_CAP characters (\\uXXXX is 6x)."""


_WANTED_LENGTHS = frozenset(len(n) for n in ("content-type", "content-encoding", "upgrade"))


class SeenRequest(NamedTuple):
    """One request as it goes to disk: secrets redacted once, shared by the log and the record.

    content_type and content_encoding are as the request carries them (for the body parser);
    writers pass them through printable().
    """

    url: str
    method: str
    headers: dict[str, str]
    query: dict[str, Any]
    content_type: str | None
    content_encoding: str | None
    websocket: bool
    http_version: str
    body_size: int


def printable(text: str) -> str:
    """Bytes that are not UTF-8 (surrogate-escaped by mitmproxy) as \\xNN, other lone surrogates
    as \\uXXXX: valid text on disk."""
    if text.isascii():
        return text
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no byte maps to: a JSON body's "\\ud83d" quoted
        return text.encode("utf-8", _ESCAPE_SURROGATES).decode("utf-8", "backslashreplace")


def _escape_surrogates(err: UnicodeError) -> tuple[bytes, int]:
    assert isinstance(err, UnicodeEncodeError)
    out = bytearray()
    for char in err.object[err.start : err.end]:
        code = ord(char)
        # surrogateescape's range back to its byte (then \\xNN), any other as \\uXXXX
        out += bytes((code - 0xDC00,)) if 0xDC80 <= code <= 0xDCFF else b"\\u%04x" % code
    return bytes(out), err.end


_ESCAPE_SURROGATES = "clawbench-escape-surrogates"
codecs.register_error(_ESCAPE_SURROGATES, _escape_surrogates)


def see_request(
    url: str,
    method: str,
    fields: Iterable[tuple[bytes, bytes]],
    http_version: str,
    body_size: int,
) -> SeenRequest:
    """Decode the header fields once (as mitmproxy does), pick what matching needs, redact."""
    pairs = [
        (k.decode("utf-8", "surrogateescape"), v.decode("utf-8", "surrogateescape"))
        for k, v in fields
    ]
    content_type = content_encoding = upgrade = None
    for name, value in pairs:
        if len(name) not in _WANTED_LENGTHS:  # most headers: no lower() needed
            continue
        lower = name.lower()
        # Repeats are joined with ", " as mitmproxy's Headers.get() does.
        if lower == "content-type":
            content_type = value if content_type is None else f"{content_type}, {value}"
        elif lower == "content-encoding":
            content_encoding = value if content_encoding is None else f"{content_encoding}, {value}"
        elif lower == "upgrade":
            upgrade = value
    url = printable(url)
    headers = redact_headers(pairs)
    text = "".join([*headers, *headers.values()])
    if len(text) > HEADER_VALUE_CAP or len(headers) > HEADERS_CAP or not text.isascii():
        # a value may be over the cap, or hold bytes that are not UTF-8: each is looked at
        headers = {printable(k): printable(v) for k, v in cap_headers(headers).items()}
    _, sep, query = url.partition("?")
    params = parse_query(query.partition("#")[0]) if sep else {}
    return SeenRequest(
        url=redact_url(url),
        method=method,
        headers=headers,
        query=redact_fields(params),
        content_type=content_type,
        content_encoding=content_encoding,
        websocket=upgrade is not None and upgrade.strip().lower() == "websocket",
        http_version=http_version,
        body_size=body_size,
    )


def with_url(seen: SeenRequest, url: str) -> SeenRequest:
    """The same request recorded under another candidate URL (same target, other host)."""
    return seen._replace(url=redact_url(printable(url)))


def log_body(parsed: ParsedBody | None, size: int, encoded: bool = False) -> Any:
    """The body as requests.jsonl keeps it: parsed, secrets redacted, capped (size is the wire
    size; an encoded body may decode to far more, so its dump is always measured)."""
    if not size:
        return None
    if parsed is None:
        return f"[{size} bytes, not parsed for the log]"
    if parsed.error:
        return f"[unevaluable: {parsed.error}]"
    value = redact_fields(parsed.value)
    if (size > _CHECK_CAP_ABOVE or encoded) and isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, default=str)
        if len(text) > RAW_TEXT_CAP:
            return f"{text[:RAW_TEXT_CAP]}...[truncated, {len(text)} characters in all]"
    return value


def safe_reasons(result: MatchResult, url: str, safe_url: str) -> list[str] | None:
    """Near-miss reasons for the log, quoting the URL as the log line records it, valid text.

    The matcher already quotes no secret (secret-keyed body and query values, the URL's secret
    query values); this puts the logged spelling of the URL (printable, redacted) in its place.
    """
    if not result.near_miss:
        return None
    reasons = list(result.reasons)
    quoted_url = redact_url(url)
    if quoted_url != safe_url:
        # The matcher quotes the URL with repr(), which may escape characters; replace both.
        quoted, safe_quoted = repr(quoted_url), repr(safe_url)
        reasons = [r.replace(quoted, safe_quoted).replace(quoted_url, safe_url) for r in reasons]
    return [printable(r) for r in reasons]


def log_line(
    seen: SeenRequest,
    body: Any,
    result: MatchResult,
    near_miss: list[str] | None,
    *,
    timestamp: float,
    mode: str | None,
    flow_id: str | None = None,
    refused: str | None = None,
) -> RequestLogEntry:
    """The requests.jsonl line of one request: its URL, query and reasons capped (caps)."""
    return RequestLogEntry(
        timestamp=timestamp,
        id=flow_id,
        url=cut(seen.url, URL_CAP),
        method=seen.method,
        headers=seen.headers,
        body=body,
        query_params=cap_query(seen.query, seen.url),
        http_version=seen.http_version,
        content_type=printable(seen.content_type) if seen.content_type else None,
        body_size=seen.body_size,
        matched=result.match,
        blocked=result.match and not refused,
        near_miss=cap_reasons(near_miss),
        websocket=seen.websocket,
        mode=mode,
        equivalence=result.equivalence,
        refused=refused,
    )


def websocket_line(flow: Any, message: Any, url: str, mode: str | None) -> RequestLogEntry:
    """The requests.jsonl line of a client's WebSocket message on the connection url opened:
    the message parsed as a body is (redacted, capped), its type in websocket_message."""
    content = message.content
    if message.is_text:
        body = log_body(parse_body(content, None, None, limit=len(content)), len(content))
    else:
        body = binary_text(content) if content else None
    return RequestLogEntry(
        timestamp=message.timestamp,
        id=flow.id,
        url=cut(url, URL_CAP),
        method=flow.request.method,
        headers={},
        body=body,
        http_version=flow.request.http_version,
        body_size=len(content),
        websocket=True,
        mode=mode,
        websocket_message="text" if message.is_text else "binary",
    )


def _seconds(start: float | None, end: float | None) -> float | None:
    return round(max(end - start, 0.0), 4) if start is not None and end is not None else None


def response_line(flow: Any) -> ResponseLine:
    """How a logged request was answered (flow.response: the site's, or the proxy's block), or
    why it was not (flow.error), with the durations the proxy saw."""
    req, resp = flow.request, flow.response
    end = resp.timestamp_end if resp is not None else None
    content_type = resp.headers.get("content-type") if resp is not None else None
    error = flow.error.msg if flow.error is not None else None
    return ResponseLine(
        timestamp=end or time.time(),
        id=flow.id,
        status=resp.status_code if resp is not None else None,
        response_size=len(resp.raw_content or b"") if resp is not None else 0,
        content_type=printable(content_type)[:256] if content_type else None,
        send_s=_seconds(req.timestamp_start, req.timestamp_end),
        wait_s=_seconds(req.timestamp_end, resp.timestamp_start) if resp is not None else None,
        receive_s=_seconds(resp.timestamp_start, end) if resp is not None else None,
        error=printable(error)[:500] if error else None,
    )


def interception_record(
    seen: SeenRequest,
    body: Any,
    result: MatchResult,
    schema: dict[str, Any],
    host_unresolved: bool = False,
) -> Interception:
    """data/interception.json for the first blocked request (body: the value it matched with)."""
    return Interception(
        request=InterceptedRequest(
            url=seen.url,
            method=seen.method,
            params=seen.query,
            # NaN/Infinity as the log writes them (pydantic would make them null)
            body=finite_floats(redact_fields(body)),
            headers=seen.headers,
            content_type=printable(seen.content_type) if seen.content_type else None,
            http_version=seen.http_version,
            body_size=seen.body_size,
            body_unverified=result.body_unverified,
            equivalence=result.equivalence,
            host_unresolved=host_unresolved,
        ),
        schema=schema,
        intercepted_at=time.time(),
        blocked_count=1,
    )


__all__ = [
    "SeenRequest",
    "interception_record",
    "log_body",
    "log_line",
    "printable",
    "response_line",
    "safe_reasons",
    "see_request",
    "websocket_line",
    "with_url",
]
