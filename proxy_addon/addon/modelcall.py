"""One finished model call as the proxy records it: its request's body read within a bound, and
its compact requests.jsonl line (records.usage.ModelCallLine: no headers, bodies or query)."""

from __future__ import annotations

import time

from mitmproxy import http

from proxy_addon.addon.modelapi import call_outcome
from proxy_addon.addon.modelhosts import request_host
from proxy_addon.addon.requestlog import printable
from proxy_addon.addon.usage import UsageReader, UsageTee
from proxy_addon.matching.bodies import Unevaluable, decode_content
from proxy_addon.matching.urls import url_origin, url_path
from proxy_addon.records.usage import ModelCallLine

_REQUEST_BODY_LIMIT = 16 * 1024 * 1024


def request_body(request: http.Request) -> bytes | None:
    """The request's body decoded within a bound (the agent sends it; a decompression bomb must
    not take the proxy down); None when there is none or it cannot be read."""
    raw = request.raw_content
    if not raw or len(raw) > _REQUEST_BODY_LIMIT:
        return None
    try:
        encoding = request.headers.get("content-encoding")
        return decode_content(raw, encoding, _REQUEST_BODY_LIMIT)
    except Unevaluable:
        return None


def _requested_model(body: bytes | None) -> str | None:
    """The request body's "model" (for a reply that names none: an error reply)."""
    reader = UsageReader()
    if body:
        reader.see_json(body)
    return reader.model


def model_call_line(flow: http.HTTPFlow, tee: UsageTee | None, body: bytes | None) -> ModelCallLine:
    """The compact requests.jsonl line of a finished (or failed) model call (body: its request's,
    decoded, for the model a reply that names none was asked for)."""
    req, resp = flow.request, flow.response
    named = request_host(req.scheme, req.host_header, req.host, req.port)
    origin = url_origin(req.scheme, *(named or (req.host, req.port)))
    path = printable(url_path(req.path).partition("?")[0])
    start = req.timestamp_start
    end = (resp.timestamp_end if resp else None) or time.time()
    errors = [flow.error.msg if flow.error else None, tee.error if tee else None]
    if flow.error is not None and resp is None and flow.server_conn.error:
        errors.append(flow.server_conn.error)
    api_error = tee.reader.api_error if tee else None
    quota_said = bool(tee and tee.reader.quota_said)
    return ModelCallLine(
        timestamp=start,
        url=printable(origin) + path,
        host=printable(origin.partition("://")[2]),
        path=path,
        method=printable(req.method),
        status=resp.status_code if resp else None,
        request_size=len(req.raw_content or b""),
        response_size=tee.wire_bytes if tee else 0,
        duration_s=round(max(end - start, 0.0), 4),
        first_byte_s=round(resp.timestamp_start - start, 4) if resp else None,
        streamed=bool(tee and tee.event_stream),
        model=(tee.reader.model if tee else None) or _requested_model(body),
        usage=tee.reader.tokens if tee else None,
        error="; ".join(dict.fromkeys(e for e in errors if e))[:500] or None,
        outcome=call_outcome(flow, api_error, quota_said),
        api_error=api_error,
    )


__all__ = ["model_call_line", "request_body"]
