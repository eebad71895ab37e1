"""One request through the shared matcher, as the addon sees it: its body parsed within bounds,
the verdict under each URL it is matched as, and what the log and the record keep of it.

Every body is decoded and parsed the same way, up to the same bound, before anything is matched:
what a request costs never tells whether its URL matched (docs/security.md, the proxy's rule 6).
Pure functions of a mitmproxy request and a Matcher; the addon applies the effects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any, NamedTuple

from mitmproxy import http

from proxy_addon.addon.requestlog import SeenRequest, log_body, see_request, with_url
from proxy_addon.matching.bodies import ParsedBody, parse_body
from proxy_addon.matching.equivalence import METHOD_OVERRIDE_HEADERS
from proxy_addon.matching.matcher import HttpRequest, Matcher, MatchResult

__all__ = ["Evaluation", "evaluate", "evaluate_unread"]


class Evaluation(NamedTuple):
    """The verdict on one request and what is written about it."""

    seen: SeenRequest
    parsed: ParsedBody | None
    result: MatchResult
    url: str
    """The candidate URL the verdict was reached under (the first unless another matched)."""
    body: Any
    """The body value the verdict was reached with (a multipart body's other reading, if that
    is what matched); None when it could not be read."""
    log_body: Any


def _readings(parsed: ParsedBody | None) -> list[tuple[Any, str | None]]:
    if parsed is None:
        return [(None, None)]
    return [(parsed.value, None), *((value, note) for note, value in parsed.alternatives)]


def _overrides(fields: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """The method override headers, read from the request itself (the records cap headers)."""
    return {
        name: v.decode("utf-8", "surrogateescape")
        for k, v in fields
        if (name := k.decode("utf-8", "surrogateescape")).lower() in METHOD_OVERRIDE_HEADERS
    }


def _decide(
    matcher: Matcher,
    seen: SeenRequest,
    fields: Iterable[tuple[bytes, bytes]],
    urls: tuple[str, ...],
    parsed: ParsedBody | None,
) -> tuple[MatchResult, str, Any]:
    error = parsed.error if parsed else None
    kind = parsed.kind if parsed else None
    near: MatchResult | None = None
    headers: dict[str, str] | None = None
    # its names in turn, each with and without its port; the others are decided on the URL alone
    for url in matcher.matching_urls(urls):
        headers = _overrides(fields) if headers is None else headers
        for body, note in _readings(parsed):
            req = HttpRequest(seen.method, url, body, error, headers, kind)
            result = matcher.match(req, explain=False)
            if result.match:
                if note:
                    notes = "; ".join(n for n in (result.equivalence, note) if n)
                    result = replace(result, equivalence=notes)
                return result, url, body
            near = near or result
    # no match: the first URL-matching near miss says why, else the first URL's miss
    result = near or matcher.url_miss(urls[0], explain=False)
    return result, urls[0], parsed.value if parsed else None


def evaluate(
    matcher: Matcher, req: http.Request, urls: tuple[str, ...], max_body: int
) -> Evaluation:
    """Match one request under each of its URLs (the first is the one the log records), its
    body parsed within max_body (decoded) whatever its URL."""
    raw = req.raw_content or b""
    fields = req.headers.fields
    seen = see_request(urls[0], req.method, fields, req.http_version, len(raw))
    parsed = None
    if raw:
        parsed = parse_body(raw, seen.content_type, seen.content_encoding, limit=max_body)
    result, url, body = _decide(matcher, seen, fields, urls, parsed)
    if url != urls[0]:
        seen = with_url(seen, url)
    logged = log_body(parsed, len(raw), seen.content_encoding is not None)
    return Evaluation(seen=seen, parsed=parsed, result=result, url=url, body=body, log_body=logged)


def evaluate_unread(matcher: Matcher, req: http.Request, urls: tuple[str, ...]) -> Evaluation:
    """A request whose body mitmproxy never read (over body_size_limit): a match of method, URL
    and params is the commit, its body unverified when a body filter exists."""
    length = req.headers.get("content-length", "")
    size = int(length) if length.isdigit() else 0  # chunked: unknown
    logged = (
        f"[{size} bytes, over body_size_limit, not read]"
        if size
        else "[over body_size_limit, not read]"
    )
    fields = req.headers.fields
    seen = see_request(urls[0], req.method, fields, req.http_version, size)
    unread = ParsedBody(None, "unevaluable", size, "over body_size_limit, never read by the proxy")
    result, url, _ = _decide(matcher, seen, fields, urls, unread)
    if url != urls[0]:
        seen = with_url(seen, url)
    return Evaluation(seen=seen, parsed=None, result=result, url=url, body=None, log_body=logged)
