"""How much of a request's own bytes a line of requests.jsonl keeps (docs/formats.md).

The agent chooses every byte it sends: a 4 MB header, a 60 KB query of ten thousand fields. The
matcher reads the request whole; the records keep each value cut at a cap and say by how much,
so one line stays bounded (the byte budget, records.requestwriter, bounds them all).
interception.json keeps the commit's URL and query whole: the scorer re-checks them.
"""

from __future__ import annotations

from typing import Any

HEADER_VALUE_CAP = 2048
"""Characters of one header value (or query field, or near-miss reason) kept in the records."""
HEADERS_CAP = 64
"""Header fields (or query fields, or values of one query field) kept; the rest are counted."""
URL_CAP = 4096
"""Characters of a URL kept in requests.jsonl."""
OVERFLOW_KEY = "[clawbench]"
"""The key that says how many fields were left out."""


def cut(text: str, cap: int) -> str:
    """text, or its first cap characters and how long it was."""
    if len(text) <= cap:
        return text
    return f"{text[:cap]}...[truncated, {len(text)} characters in all]"


def cap_headers(headers: dict[str, str]) -> dict[str, str]:
    """The headers as recorded: each value cut at HEADER_VALUE_CAP, at most HEADERS_CAP of
    them, so an agent's 4 MB header cannot make a 4 MB line of requests.jsonl."""
    if len(headers) <= HEADERS_CAP and all(len(v) <= HEADER_VALUE_CAP for v in headers.values()):
        return headers
    kept = {
        name[:HEADER_VALUE_CAP]: cut(value, HEADER_VALUE_CAP)
        for name, value in list(headers.items())[:HEADERS_CAP]
    }
    if len(headers) > HEADERS_CAP:
        kept[OVERFLOW_KEY] = f"{len(headers) - HEADERS_CAP} more header fields not recorded"
    return kept


def _cap_value(value: Any) -> Any:
    if isinstance(value, str):
        return cut(value, HEADER_VALUE_CAP)
    if isinstance(value, list):
        kept = [_cap_value(v) for v in value[:HEADERS_CAP]]
        if len(value) > HEADERS_CAP:
            kept.append(f"[{len(value) - HEADERS_CAP} more values not recorded]")
        return kept
    return value


def cap_query(query: dict[str, Any], url: str) -> dict[str, Any]:
    """The parsed query as recorded, capped as headers are (url: the URL it came from; one no
    longer than a value's cap, with no more fields than the cap, needs no look)."""
    if len(url) <= HEADER_VALUE_CAP and len(query) <= HEADERS_CAP:
        return query
    kept = {
        name[:HEADER_VALUE_CAP]: _cap_value(value)
        for name, value in list(query.items())[:HEADERS_CAP]
    }
    if len(query) > HEADERS_CAP:
        kept[OVERFLOW_KEY] = f"{len(query) - HEADERS_CAP} more query fields not recorded"
    return kept


def cap_reasons(reasons: list[str] | None) -> list[str] | None:
    """Near-miss reasons as recorded (a reason quotes the URL, which may be long)."""
    if reasons is None:
        return None
    return [cut(r, HEADER_VALUE_CAP) for r in reasons[:HEADERS_CAP]]


__all__ = [
    "HEADERS_CAP",
    "HEADER_VALUE_CAP",
    "OVERFLOW_KEY",
    "URL_CAP",
    "cap_headers",
    "cap_query",
    "cap_reasons",
    "cut",
]
