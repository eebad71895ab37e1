"""Server equivalence (docs/formats.md, "Matching"): requests that mainstream servers
(Werkzeug/Flask, Django, Rails, Express, Go net/http, nginx) route to the commit handler with the
filtered values, although the reference's exact rule misses them. Each function names the
equivalence it found, or None.

- HEAD for a GET commit: every one of them answers HEAD with the GET handler.
- A POST whose X-HTTP-Method-Override / X-Method-Override / X-HTTP-Method header, or `_method`
  field (body or query), names the commit's method (Rack, Express's method-override, Laravel,
  Symfony; only POST is overridden).
- A filtered field sent twice: Flask and Go read the first value, Django, Rails and PHP the last.
- A filtered field moved between body and query (absent from the part the filter names):
  Flask's request.values, Rails' params and PHP's $_REQUEST merge the two.
- %2F in the path: WSGI's PATH_INFO, Go's URL.Path and nginx's locations see it as /.
(The multipart body with two boundary= parameters is read both ways by the body parser.)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from proxy_addon.matching.urls import path_span, remove_dot_segments

__all__ = [
    "METHOD_OVERRIDE_HEADERS",
    "decoded_separators",
    "filter_equivalence",
    "method_equivalence",
    "repeatable",
]

METHOD_OVERRIDE_HEADERS = ("x-http-method-override", "x-method-override", "x-http-method")
_METHOD_FIELD = "_method"
_FORM_KINDS = frozenset({"form", "multipart"})
_ENCODED_SLASH = re.compile("%2f", re.IGNORECASE)


def method_equivalence(
    method: str, want: str, headers: Mapping[str, str], body: Any, query: Mapping[str, Any]
) -> str | None:
    """How a request of another method reaches a `want` handler, or None."""
    if method == "HEAD" and want == "GET":
        return "HEAD for GET"
    if method != "POST":
        return None
    for name, value in headers.items():
        if name.lower() in METHOD_OVERRIDE_HEADERS and value.strip().upper() == want:
            return f"method override: {name.lower()}: {want}"
    for where, fields in (("body", body), ("query", query)):
        if isinstance(fields, Mapping) and _METHOD_FIELD in fields:
            value = fields[_METHOD_FIELD]
            values = value if isinstance(value, list) else [value]
            if any(isinstance(v, str) and v.strip().upper() == want for v in values):
                return f"method override: {_METHOD_FIELD}={want} in the {where}"
    return None


def _read(value: Any, want: Any, repeatable: bool) -> str | None:
    """'' if a server reads value as want, 'first'/'last' when it takes one of a repeat."""
    if value == want:
        return ""
    if repeatable and isinstance(value, list) and value and not isinstance(want, list):
        if value[0] == want:
            return "first"
        if value[-1] == want:
            return "last"
    return None


def filter_equivalence(
    expected: Mapping[str, Any],
    where: str,
    fields: Any,
    other: Any,
    repeatable: tuple[bool, bool],
) -> str | None:
    """How every expected key meets its value as a server reads the request, or None: in
    `where` (body or params), a repeated field by its first or last value; a field that part
    lacks, in the other part (servers that merge the two read it there; where both carry it,
    they disagree on which wins, so the part the filter names decides).

    repeatable says, for fields and other, whether a list value is a repeated field (a form or
    a query) rather than a JSON array."""
    there = "query" if where == "body" else "body"
    own = fields if isinstance(fields, Mapping) else {}
    moved = other if isinstance(other, Mapping) else {}
    notes: list[str] = []
    for key, want in expected.items():
        part, values, repeats = (
            (where, own, repeatable[0]) if key in own else (there, moved, repeatable[1])
        )
        if key not in values:
            return None
        read = _read(values[key], want, repeats)
        if read is None:
            return None
        if read:
            notes.append(f"{part}.{key} sent {len(values[key])} times, the {read} one read")
        if part != where:
            notes.append(f"{where}.{key} read from the {part}")
    return "; ".join(notes) or None


def repeatable(kind: str | None) -> bool:
    """Whether a body of this kind repeats a field as a list (None: not known, so maybe)."""
    return kind is None or kind in _FORM_KINDS


def decoded_separators(url: str) -> str | None:
    """The URL with %2F in its path read as '/', dot segments then resolved; None if none."""
    span = path_span(url) if "%2" in url else None
    if span is None:
        return None
    start, end = span
    path = url[start:end]
    if not _ENCODED_SLASH.search(path):
        return None
    return url[:start] + remove_dot_segments(_ENCODED_SLASH.sub("/", path)) + url[end:]
