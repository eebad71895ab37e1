"""Request bodies and queries as the matcher sees them (SPEC section 3), bounded and total.

Order: Content-Encoding decoded with a bound; multipart/form-data by Content-Type; JSON (any
value); parse_qs(keep_blank_values=True) whatever the Content-Type, as the reference does;
the raw text (binary as base64), capped; empty is None. A body that is not UTF-8 goes the same
way, its bad bytes read as U+FFFD (as Chrome hands the reference such a body); it is binary only
when it is no JSON and no form with printable field names. Nothing here raises on bad input: a
body that cannot be evaluated comes back with `error` set, and the matcher fails closed on it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from email.message import Message
from typing import Any, NamedTuple
from urllib.parse import parse_qs

from proxy_addon.matching.encoding import MAX_DECODED, Unevaluable, decode_content

RAW_TEXT_CAP = 64 * 1024
"""Raw (non-form, non-JSON) bodies are kept up to this many characters."""
MAX_JSON_DEPTH = 256
"""JSON nested deeper than this is unevaluable: no real request is, and recursion has limits."""


class ParsedBody(NamedTuple):
    """A body as the matcher reads it (immutable, like the addon's other per-request records)."""

    value: Any
    kind: str  # "empty" | "multipart" | "json" | "form" | "text" | "binary" | "unevaluable"
    size: int  # bytes on the wire
    error: str | None = None
    alternatives: tuple[tuple[str, Any], ...] = ()
    """(boundary, value): a multipart body read with its other boundary= parameters."""


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


def _unwrap(parsed: dict[str, list[Any]]) -> dict[str, Any]:
    return {k: v[0] if len(v) == 1 else v for k, v in parsed.items()}


def binary_text(data: bytes) -> str:
    """Bytes as the log keeps them: base64, capped, with the full length when cut."""
    head = base64.b64encode(data[: RAW_TEXT_CAP * 3 // 4]).decode("ascii")
    more = f" ...[{len(data)} bytes in all]" if len(data) > RAW_TEXT_CAP * 3 // 4 else ""
    return f"base64:{head}{more}"


def _cap(text: str) -> str:
    if len(text) <= RAW_TEXT_CAP:
        return text
    return f"{text[:RAW_TEXT_CAP]}...[truncated, {len(text)} characters in all]"


_BOUNDARY = re.compile(r';\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]+))', re.IGNORECASE)


def boundaries(content_type: str) -> list[bytes]:
    """Every boundary= parameter of a multipart Content-Type, in order (a server reads one of
    them: the first or the last), as the header's exact bytes."""
    # Parsed by hand: email.message turns the surrogate-escaped bytes mitmproxy hands over
    # into U+FFFD, and the delimiter must be the header's exact bytes.
    found = [
        m.group(1) if m.group(1) is not None else m.group(2)
        for m in _BOUNDARY.finditer(content_type)
    ]
    return [b.encode("utf-8", "surrogateescape") for b in dict.fromkeys(found) if b]


def _header_text(head: bytes) -> str:
    # Browsers write part names and file names in UTF-8; fall back to latin-1, which never fails.
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError:
        return head.decode("latin-1")


def parse_multipart(data: bytes, boundary: bytes) -> dict[str, Any]:
    """multipart/form-data → {name: value}; file parts → {filename, content_type, size, sha256}."""
    delim = b"--" + boundary
    pieces = data.split(delim)
    if len(pieces) < 3 or not pieces[-1].startswith(b"--"):
        raise Unevaluable("multipart body without its closing boundary")
    fields: dict[str, list[Any]] = {}
    for piece in pieces[1:-1]:
        piece = piece.removeprefix(b"\r\n").removesuffix(b"\r\n")
        head, sep, content = piece.partition(b"\r\n\r\n")
        if not sep:
            raise Unevaluable("multipart part without a header/body separator")
        headers = Message()
        for line in _header_text(head).split("\r\n"):
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip()] = v.strip()
        name = headers.get_param("name", header="content-disposition")
        filename = headers.get_param("filename", header="content-disposition")
        if isinstance(name, tuple):
            name = name[2]
        if isinstance(filename, tuple):
            filename = filename[2]
        name = str(name) if name is not None else ""
        value: Any
        if filename is not None:
            value = {
                "filename": str(filename),
                "content_type": headers.get("content-type"),
                "size": len(content),
                "sha256": hashlib.sha256(content).hexdigest(),
            }
        else:
            try:
                value = content.decode("utf-8")
            except UnicodeDecodeError:
                value = binary_text(content)
        fields.setdefault(name, []).append(value)
    return _unwrap(fields)


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
    """The body as read with its first boundary that parses; when the Content-Type has more,
    the readings with the others are kept too (a server may read any of them)."""
    readings: list[tuple[str, Any]] = []
    error = "multipart/form-data without a boundary"
    for boundary in boundaries(content_type):
        try:
            readings.append((boundary.decode("utf-8", "replace"), parse_multipart(data, boundary)))
        except Unevaluable as e:
            error = str(e)
    if not readings:
        raise Unevaluable(error)
    return ParsedBody(readings[0][1], "multipart", size, alternatives=tuple(readings[1:]))


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
        return ParsedBody(_unwrap(form), "form", size)
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
        return _unwrap(parse_qs(query))
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
    "parse_body",
    "parse_multipart",
    "parse_query",
]
