"""Request bodies and queries as the matcher sees them (SPEC section 3), bounded and total.

Order: Content-Encoding decoded with a bound; multipart/form-data by Content-Type; JSON (any
value); parse_qs(keep_blank_values=True) whatever the Content-Type, as the reference does;
the raw text (binary as base64), capped; empty is None. A body that is not UTF-8 goes the same
way, its bad bytes read as U+FFFD (as Chrome hands the reference such a body); it is binary only
when it is no JSON and no form with printable field names. Nothing here raises on bad input: a
body that cannot be evaluated comes back with `error` set, and the matcher fails closed on it.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple
from urllib.parse import parse_qs

from proxy_addon.matching.encoding import MAX_DECODED, Unevaluable, decode_content
from proxy_addon.matching.fieldvalues import RAW_TEXT_CAP, binary_text, unwrap
from proxy_addon.matching.multipart import boundaries, multipart_readings, parse_multipart

MAX_JSON_DEPTH = 256
"""JSON nested deeper than this is unevaluable: no real request is, and recursion has limits."""


class ParsedBody(NamedTuple):
    """A body as the matcher reads it (immutable, like the addon's other per-request records)."""

    value: Any
    kind: str  # "empty" | "multipart" | "json" | "form" | "text" | "binary" | "unevaluable"
    size: int  # bytes on the wire
    error: str | None = None
    alternatives: tuple[tuple[str, Any], ...] = ()
    """(equivalence, value): a multipart body's other readings, with its other boundary=
    parameters or its part names read as other servers read them."""


def _too_deep(value: Any, limit: int) -> bool:
    # Iterative on purpose: the point is to spare recursive consumers (matcher, redaction, dumps).
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def _cap(text: str) -> str:
    if len(text) <= RAW_TEXT_CAP:
        return text
    return f"{text[:RAW_TEXT_CAP]}...[truncated, {len(text)} characters in all]"


_BOM_OR_WIDE = frozenset((0x00, 0xEF, 0xFE, 0xFF))
"""First bytes of a body that may be UTF-8 with a BOM or UTF-16/32 (json.detect_encoding)."""


def _wide_json_text(data: bytes) -> str | None:
    """JSON behind a BOM or in UTF-16/32, decoded as json.loads(bytes) reads it (Flask's
    get_json does), so a commit sent that way cannot pass as a form matching nothing; None
    for anything else (binary that merely starts like it stays binary)."""
    encoding = json.detect_encoding(data)
    if encoding == "utf-8":
        return None
    try:
        text = data.decode(encoding)
        json.loads(text)
    except RecursionError:
        return text  # JSON, too deep: the caller reports it unevaluable
    except ValueError:  # not that encoding (UnicodeDecodeError), or not JSON
        return None
    return text


def _multipart(data: bytes, content_type: str, size: int) -> ParsedBody:
    """The body as read with its first boundary that parses, its part names as the parser reads
    them; its other readings (other boundary= parameters, part names read as other servers
    do) are kept too, each once: a server may read any of them."""
    readings: list[tuple[str | None, Any]] = []
    error = "multipart/form-data without a boundary"
    for boundary in boundaries(content_type):
        try:
            found = multipart_readings(data, boundary)
        except Unevaluable as e:
            error = str(e)
            continue
        other = None if not readings else f"multipart read with boundary={boundary.decode()}"
        for note, value in found:
            if all(value != seen for _, seen in readings):
                readings.append(("; ".join(n for n in (note, other) if n) or None, value))
    if not readings:
        raise Unevaluable(error)
    alternatives = tuple((note or "", value) for note, value in readings[1:])
    return ParsedBody(readings[0][1], "multipart", size, alternatives=alternatives)


def parse_body(
    raw: bytes | None,
    content_type: str | None = None,
    content_encoding: str | None = None,
    *,
    limit: int = MAX_DECODED,
) -> ParsedBody:
    """Parse a request body per SPEC section 3; never raises."""
    size = len(raw or b"")
    if not raw:
        return ParsedBody(None, "empty", 0)
    if size > limit:
        return ParsedBody(None, "unevaluable", size, f"body of {size} bytes exceeds {limit}")
    try:
        data = decode_content(raw, content_encoding, limit)
        if content_type and content_type.split(";", 1)[0].strip().lower() == "multipart/form-data":
            return _multipart(data, content_type, size)
    except Unevaluable as e:
        return ParsedBody(None, "unevaluable", size, str(e))
    if not data:
        return ParsedBody(None, "empty", size)
    lossy = False
    try:
        text = None
        if data[0] in _BOM_OR_WIDE or (len(data) > 1 and data[1] == 0):
            text = _wide_json_text(data)
        if text is None:
            text = data.decode("utf-8")
    except UnicodeDecodeError:
        # Not UTF-8 (a legacy-charset form, or binary): the SPEC order still applies, on the
        # text as a browser hands it over (the reference reads Chrome's postData), bad bytes
        # as U+FFFD. A form with one such byte must still meet its filter and its redaction.
        text, lossy = data.decode("utf-8", "replace"), True
    try:
        value = json.loads(text)
    except RecursionError:
        return ParsedBody(
            None, "unevaluable", size, f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        )
    except json.JSONDecodeError:
        pass
    except ValueError as e:  # valid JSON Python will not read: an integer of > 4300 digits
        return ParsedBody(None, "unevaluable", size, f"JSON not readable: {str(e).split(';')[0]}")
    else:
        if (
            isinstance(value, (dict, list))
            # no deeper than it has brackets: the walk is needed only past MAX_JSON_DEPTH of them
            and text.count("[") + text.count("{") > MAX_JSON_DEPTH
            and _too_deep(value, MAX_JSON_DEPTH)
        ):
            error = f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
            return ParsedBody(None, "unevaluable", size, error)
        return ParsedBody(value, "json", size)
    form = parse_qs(text, keep_blank_values=True)
    if form and not (lossy and not _form_names(form)):
        return ParsedBody(unwrap(form), "form", size)
    if lossy:
        return ParsedBody(binary_text(data), "binary", size)
    return ParsedBody(_cap(text), "text", size)


def _form_names(form: dict[str, list[str]]) -> bool:
    """Whether a body that is not UTF-8 parsed into real field names: binary data (an image, a
    protobuf) parses too, into names holding U+FFFD or control bytes, and stays base64."""
    return all(name.isprintable() and "\ufffd" not in name for name in form)


def parse_query(query: str) -> dict[str, Any]:
    """The query string as the reference parses it: blanks dropped, single values unwrapped."""
    if not query:
        return {}
    if "%" in query or "+" in query:
        return unwrap(parse_qs(query))
    # parse_qs without escapes to decode, in one pass: a fifth of its cost on every request the
    # proxy sees (a property test pins it to parse_qs)
    fields: dict[str, Any] = {}
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        if value:
            held = fields.get(name)
            if held is None:
                fields[name] = value
            elif type(held) is list:
                held.append(value)
            else:
                fields[name] = [held, value]
    return fields


__all__ = [
    "MAX_DECODED",
    "MAX_JSON_DEPTH",
    "RAW_TEXT_CAP",
    "ParsedBody",
    "Unevaluable",
    "binary_text",
    "boundaries",
    "decode_content",
    "multipart_readings",
    "parse_body",
    "parse_multipart",
    "parse_query",
]
