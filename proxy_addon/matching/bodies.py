"""Request bodies and queries as the matcher sees them (docs/formats.md, "Body parsing").

A body is read by the first of `FORMATS`, a table of (predicate, parser) tried in order, after
its Content-Encoding is undone within a bound: multipart/form-data by Content-Type; empty; JSON
(any value); parse_qs(keep_blank_values=True) whatever the Content-Type, as the reference does;
binary (base64) for a body that is not UTF-8 and none of those; else the raw text, capped. A
body that is not UTF-8 goes the same way, its bad bytes read as U+FFFD (as Chrome hands the
reference such a body). Nothing here raises on bad input: a body that cannot be evaluated comes
back with `error` set, and the matcher fails closed on it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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


def _multipart(body: Wire) -> ParsedBody:
    """The body as read with its first boundary that parses, its part names as the parser reads
    them; its other readings (other boundary= parameters, part names read as other servers
    do) are kept too, each once: a server may read any of them."""
    readings: list[tuple[str | None, Any]] = []
    error = "multipart/form-data without a boundary"
    for boundary in boundaries(body.content_type):
        try:
            found = multipart_readings(body.data, boundary)
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
    return ParsedBody(readings[0][1], "multipart", body.size, alternatives=alternatives)


class Wire:
    """A body after its Content-Encoding, as each format's predicate and parser see it. Its text
    is decoded once, when a format first asks: UTF-8, JSON's wider encodings behind a BOM, else
    (`lossy`) UTF-8 with bad bytes as U+FFFD, as Chrome hands such a body to the reference."""

    def __init__(self, data: bytes, content_type: str, size: int) -> None:
        self.data = data
        self.content_type = content_type
        self.size = size  # bytes on the wire
        self.media_type = content_type.split(";", 1)[0].strip().lower()
        self._text: tuple[str, bool] | None = None

    def _decoded(self) -> tuple[str, bool]:
        if self._text is None:
            data, text = self.data, None
            try:
                if data[0] in _BOM_OR_WIDE or (len(data) > 1 and data[1] == 0):
                    text = _wide_json_text(data)
                self._text = (data.decode("utf-8") if text is None else text), False
            except UnicodeDecodeError:
                self._text = data.decode("utf-8", "replace"), True
        return self._text

    @property
    def text(self) -> str:
        return self._decoded()[0]

    @property
    def lossy(self) -> bool:
        """Not UTF-8 (a legacy-charset form, or binary): read with bad bytes as U+FFFD."""
        return self._decoded()[1]


def _json(body: Wire) -> ParsedBody | None:
    """Any JSON value; too deep, or a number Python will not read, is unevaluable."""
    text = body.text
    try:
        value = json.loads(text)
    except RecursionError:
        raise Unevaluable(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError:
        return None
    except ValueError as e:  # valid JSON Python will not read: an integer of > 4300 digits
        raise Unevaluable(f"JSON not readable: {str(e).split(';')[0]}") from None
    if (
        isinstance(value, (dict, list))
        # no deeper than it has brackets: the walk is needed only past MAX_JSON_DEPTH of them
        and text.count("[") + text.count("{") > MAX_JSON_DEPTH
        and _too_deep(value, MAX_JSON_DEPTH)
    ):
        raise Unevaluable(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return ParsedBody(value, "json", body.size)


def _form(body: Wire) -> ParsedBody | None:
    """parse_qs(keep_blank_values=True) whatever the Content-Type, as the reference does; a body
    that is not UTF-8 is a form only with printable field names."""
    form = parse_qs(body.text, keep_blank_values=True)
    if not form or (body.lossy and not _form_names(form)):
        return None
    return ParsedBody(unwrap(form), "form", body.size)


class BodyFormat(NamedTuple):
    """One way to read a body: the first format whose predicate holds and whose parser returns
    a ParsedBody is the body's (a parser returns None for "not mine after all"; it raises
    Unevaluable for a body that is its format but cannot be checked)."""

    kind: str
    applies: Callable[[Wire], bool]
    parse: Callable[[Wire], ParsedBody | None]


def _any(body: Wire) -> bool:
    return True


def _is_multipart(body: Wire) -> bool:
    return body.media_type == "multipart/form-data"


def _is_empty(body: Wire) -> bool:
    return not body.data


def _empty(body: Wire) -> ParsedBody:
    return ParsedBody(None, "empty", body.size)


def _is_lossy(body: Wire) -> bool:
    return body.lossy


def _binary(body: Wire) -> ParsedBody:
    """Neither JSON nor a form of printable names, and not UTF-8: capped base64."""
    return ParsedBody(binary_text(body.data), "binary", body.size)


FORMATS: tuple[BodyFormat, ...] = (
    BodyFormat("multipart", _is_multipart, _multipart),
    BodyFormat("empty", _is_empty, _empty),
    BodyFormat("json", _any, _json),
    BodyFormat("form", _any, _form),
    BodyFormat("binary", _is_lossy, _binary),
)
"""The body formats in the order they are tried (docs/formats.md, "Body parsing"); a body none
of them takes is text, capped. A new format is a row here."""


def parse_body(
    raw: bytes | None,
    content_type: str | None = None,
    content_encoding: str | None = None,
    *,
    limit: int = MAX_DECODED,
) -> ParsedBody:
    """Parse a request body as docs/formats.md says ("Body parsing"); never raises."""
    size = len(raw or b"")
    if not raw:
        return ParsedBody(None, "empty", 0)
    if size > limit:
        return ParsedBody(None, "unevaluable", size, f"body of {size} bytes exceeds {limit}")
    try:
        body = Wire(decode_content(raw, content_encoding, limit), content_type or "", size)
        for fmt in FORMATS:
            parsed = fmt.parse(body) if fmt.applies(body) else None
            if parsed is not None:
                return parsed
    except Unevaluable as e:
        return ParsedBody(None, "unevaluable", size, str(e))
    return ParsedBody(_cap(body.text), "text", size)


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
    "FORMATS",
    "MAX_DECODED",
    "MAX_JSON_DEPTH",
    "RAW_TEXT_CAP",
    "BodyFormat",
    "ParsedBody",
    "Unevaluable",
    "Wire",
    "binary_text",
    "boundaries",
    "decode_content",
    "multipart_readings",
    "parse_body",
    "parse_multipart",
    "parse_query",
]
