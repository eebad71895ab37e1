"""multipart/form-data bodies: their boundaries and parts, read once per way servers read part
names (proxy_addon.matching.partnames), within the body parser's bounds (bodies.py)."""

from __future__ import annotations

import hashlib
import re
from typing import Any, NamedTuple

from proxy_addon.matching.encoding import Unevaluable
from proxy_addon.matching.fieldvalues import binary_text, unwrap
from proxy_addon.matching.partnames import READERS, part_names

__all__ = ["boundaries", "multipart_readings", "parse_multipart"]


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


_FOLDED = re.compile(rb"(?:\r\n|\n|\r)[ \t]")


class _Part(NamedTuple):
    dispositions: list[str]
    content_type: str | None
    content: bytes


def _parts(data: bytes, boundary: bytes) -> list[_Part]:
    delim = b"--" + boundary
    pieces = data.split(delim)
    if len(pieces) < 3 or not pieces[-1].startswith(b"--"):
        raise Unevaluable("multipart body without its closing boundary")
    parts = []
    for piece in pieces[1:-1]:
        piece = piece.removeprefix(b"\r\n").removesuffix(b"\r\n")
        head, sep, content = piece.partition(b"\r\n\r\n")
        if not sep:
            raise Unevaluable("multipart part without a header/body separator")
        dispositions, content_type = [], None
        # lines as Werkzeug splits them: folded lines joined, then at CR, LF or CRLF
        for line in _FOLDED.sub(b" ", head).splitlines():
            key, colon, value = _header_text(line).partition(":")
            key, value = key.strip(" \t").lower(), value.strip(" \t")
            if colon and key == "content-disposition":
                dispositions.append(value)
            elif colon and key == "content-type" and content_type is None:
                content_type = value
        parts.append(_Part(dispositions, content_type, content))
    return parts


def _value(part: _Part, filename: str | None) -> Any:
    if filename is not None:
        return {
            "filename": filename,
            "content_type": part.content_type,
            "size": len(part.content),
            "sha256": hashlib.sha256(part.content).hexdigest(),
        }
    try:
        return part.content.decode("utf-8")
    except UnicodeDecodeError:
        return binary_text(part.content)


def multipart_readings(data: bytes, boundary: bytes) -> list[tuple[str | None, dict[str, Any]]]:
    """multipart/form-data → [(equivalence, {name: value})], one reading per way servers read
    part names (partnames.READERS), the parser's own first (equivalence None), the same ones
    once; file parts → {filename, content_type, size, sha256}."""
    parts = _parts(data, boundary)
    names = [part_names(part.dispositions) for part in parts]
    readings: list[tuple[str | None, dict[str, Any]]] = []
    values: dict[tuple[int, str | None], Any] = {}  # a part's value, by (part, filename)
    for r, reader in enumerate(READERS):
        fields: dict[str, list[Any]] = {}
        for p, part in enumerate(parts):
            name, filename = names[p][r]
            if (p, filename) not in values:
                values[p, filename] = _value(part, filename)
            fields.setdefault(name, []).append(values[p, filename])
        reading = unwrap(fields)
        if all(reading != seen for _, seen in readings):
            readings.append((reader.note, reading))
    return readings


def parse_multipart(data: bytes, boundary: bytes) -> dict[str, Any]:
    """multipart/form-data → {name: value} as the parser reads part names (the first of
    multipart_readings); file parts → {filename, content_type, size, sha256}."""
    return multipart_readings(data, boundary)[0][1]
