"""One request through the shared matcher, as the addon sees it: the URLs it is matched under,
its body parsed within bounds, the verdict, and what the log and the record keep of it.

Pure functions of a mitmproxy request and a Matcher; the addon applies the effects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mitmproxy import http

from proxy_addon.addon.requestlog import (
    SeenRequest,
    candidate_urls,
    log_body,
    see_request,
    with_url,
)
from proxy_addon.matching.bodies import ParsedBody, parse_body
from proxy_addon.matching.matcher import HttpRequest, Matcher, MatchResult

__all__ = ["LOG_PARSE_LIMIT", "Evaluation", "evaluate", "evaluate_unread"]

LOG_PARSE_LIMIT = 1024 * 1024
"""Bodies up to this size (decoded) are parsed for requests.jsonl; larger ones only when the URL
matches (the body may then be checked against a filter and is recorded when blocked)."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The verdict on one request and what is written about it."""

    seen: SeenRequest
    parsed: ParsedBody | None
    result: MatchResult
    url: str
    """The candidate URL the verdict was reached under (the Host URL unless another matched)."""
    log_body: Any


def _urls(req: http.Request) -> tuple[str, ...]:
    return candidate_urls(req.scheme, req.host_header, req.host, req.port, req.path)


def _parse(
    matcher: Matcher, raw: bytes, seen: SeenRequest, urls: tuple[str, ...], max_body: int
) -> ParsedBody | None:
    if not raw:
        return None
    if len(raw) <= LOG_PARSE_LIMIT and seen.content_encoding is None:
        return parse_body(raw, seen.content_type, None, limit=max_body)
    # Over LOG_PARSE_LIMIT, or compressed (it may be over it once decoded).
    if any(matcher.url_matches(u) for u in urls):
        # It may be checked against a filter, and is recorded whole if it is blocked.
        return parse_body(raw, seen.content_type, seen.content_encoding, limit=max_body)
    if len(raw) > LOG_PARSE_LIMIT:
        return None
    # For the log only: a small compressed body is decoded no further than the limit.
    return parse_body(raw, seen.content_type, seen.content_encoding, limit=LOG_PARSE_LIMIT)


def _decide(
    matcher: Matcher, method: str, urls: tuple[str, ...], parsed: ParsedBody | None
) -> tuple[MatchResult, str]:
    body, error = (parsed.value, parsed.error) if parsed else (None, None)
    first = matcher.match(HttpRequest(method, urls[0], body, error), explain=False)
    for url in urls[1:]:  # the connection's own host, when it differs from Host
        other = matcher.match(HttpRequest(method, url, body, error), explain=False)
        if other.match:
            return other, url
    return first, urls[0]


def evaluate(matcher: Matcher, req: http.Request, max_body: int) -> Evaluation:
    """Match one request under each of its URLs, its body parsed within max_body."""
    urls = _urls(req)
    raw = req.raw_content or b""
    seen = see_request(urls[0], req.method, req.headers.fields, req.http_version, len(raw))
    parsed = _parse(matcher, raw, seen, urls, max_body)
    result, url = _decide(matcher, req.method, urls, parsed)
    if url != urls[0]:
        seen = with_url(seen, url)
    body = log_body(parsed, len(raw), seen.content_encoding is not None)
    return Evaluation(seen=seen, parsed=parsed, result=result, url=url, log_body=body)


def evaluate_unread(matcher: Matcher, req: http.Request) -> Evaluation:
    """A request whose body mitmproxy never read (over body_size_limit): a match of method, URL
    and params is the commit, its body unverified when a body filter exists."""
    length = req.headers.get("content-length", "")
    size = int(length) if length.isdigit() else 0  # chunked: unknown
    body = (
        f"[{size} bytes, over body_size_limit, not read]"
        if size
        else "[over body_size_limit, not read]"
    )
    urls = _urls(req)
    for url in urls:
        head = matcher.match(HttpRequest(req.method, url, None, "not read yet"), explain=False)
        if head.match:
            why = ("body: over body_size_limit, never read by the proxy",)
            needs = matcher.needs_body
            result = MatchResult(
                match=True,
                reasons=why if needs else (),
                url_matched=True,
                method_matched=True,
                body_unverified=needs,
                same_host=True,
            )
            seen = see_request(url, req.method, req.headers.fields, req.http_version, size)
            return Evaluation(seen=seen, parsed=None, result=result, url=url, log_body=body)
    unread = HttpRequest(req.method, urls[0], None, "over body_size_limit, not read")
    result = matcher.match(unread, explain=False)
    seen = see_request(urls[0], req.method, req.headers.fields, req.http_version, size)
    return Evaluation(seen=seen, parsed=None, result=result, url=urls[0], log_body=body)
