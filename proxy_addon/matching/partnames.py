"""A multipart part's name and file name, read every way a mainstream server reads them
(docs/formats.md, "Server equivalence").

A part's Content-Disposition can be written so that servers disagree on its name: a parameter
given twice (`name="a"; name="b"`), `name*` (RFC 7578 / RFC 2231: `name*=UTF-8''b`), a
quoted-pair (`name="b\\_c"`, which RFC 9110 readers undo and Python's email package keeps),
a parameter name in any case, a part with two Content-Disposition headers. Each reader below is
one server's rule, applied to every part of a body; the body parser builds one reading of the
body per reader, and a reading that differs from the first is a named equivalence. Nothing here
raises on bad input.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from email.message import Message
from email.utils import collapse_rfc2231_value
from typing import NamedTuple
from urllib.parse import unquote

from werkzeug.http import parse_options_header

__all__ = ["READERS", "PartName", "Reader", "part_names"]


class PartName(NamedTuple):
    """A part's field name and its file name (None: not a file part)."""

    name: str
    filename: str | None


class Reader(NamedTuple):
    """One server's rule: its Content-Disposition headers (in order) -> the part's name."""

    note: str | None
    """The equivalence a reading by this rule is, when it differs from the first reader's."""
    read: Callable[[Sequence[str]], PartName]


def _email_first(headers: Sequence[str]) -> PartName:
    """Python's email package (the parser's own reading): the first parameter of each name,
    `\\\\` and `\\"` undone in quoted values, `name*` when no plain `name` comes first."""
    message = Message()
    try:
        message["content-disposition"] = headers[0]
    except ValueError:  # a value it refuses (a line break): no parameters
        return PartName("", None)

    def param(key: str) -> str | None:
        value = message.get_param(key, header="content-disposition")
        if value is None:
            return None
        return str(collapse_rfc2231_value(value))

    try:
        return PartName(param("name") or "", param("filename"))
    except (TypeError, ValueError):  # `name*` beside `name*0`: its RFC 2231 decoder raises
        return PartName("", None)


def _werkzeug(headers: Sequence[str]) -> PartName:
    """Werkzeug (Flask): the last parameter of each name, `name*` and continuations decoded,
    every quoted-pair and `%22` undone."""
    options = parse_options_header(headers[0])[1]
    return PartName(options.get("name") or "", options.get("filename"))


_SEMICOLON = re.compile(r";")
_PAIR = re.compile(r"\\(.)", re.DOTALL)
_EXTENDED = re.compile(r"^([^']*)'[^']*'(.*)$", re.DOTALL)
_CHARSETS = {"utf-8": "utf-8", "us-ascii": "ascii", "ascii": "ascii", "iso-8859-1": "latin-1"}


def _split(value: str) -> list[tuple[str, str]]:
    """(lowercased key, raw value) of each parameter in order, split at the semicolons outside
    quotes (the rule of Django's and Python's parameter splitters)."""
    params: list[tuple[str, str]] = []
    for piece in _pieces(value)[1:]:
        key, sep, raw = piece.partition("=")
        if sep:
            params.append((key.strip().lower(), raw.strip()))
    return params


def _pieces(value: str) -> list[str]:
    pieces, start = [], 0
    for m in _SEMICOLON.finditer(value):
        head = value[start : m.start()]
        if (head.count('"') - head.count('\\"')) % 2 == 0:
            pieces.append(head)
            start = m.end()
    pieces.append(value[start:])
    return pieces


def _unquote(raw: str, every_pair: bool) -> str:
    if len(raw) < 2 or raw[0] != '"' or raw[-1] != '"':
        return raw
    inner = raw[1:-1]
    if every_pair:
        return _PAIR.sub(r"\1", inner)
    return inner.replace("\\\\", "\\").replace('\\"', '"')


def _extended(raw: str) -> str | None:
    """An RFC 2231 value (charset'language'percent-encoded) decoded; None if it is not one."""
    m = _EXTENDED.match(raw.strip('"'))
    charset = _CHARSETS.get(m.group(1).lower()) if m else None
    if m is None or charset is None:
        return None
    return unquote(m.group(2), encoding=charset, errors="replace")


def _by_rule(
    *, last: bool, extended_wins: bool, every_pair: bool, header: int
) -> Callable[[Sequence[str]], PartName]:
    """A reader of the split parameters: the first or last of each name, `name*` over `name`
    (else both in order), every quoted-pair undone or only `\\\\` and `\\"`, from the first or
    the last Content-Disposition header."""

    def param(params: list[tuple[str, str]], key: str) -> str | None:
        found: list[tuple[bool, str]] = []  # (extended, value) in order
        for k, raw in params:
            if k == key:
                found.append((False, _unquote(raw, every_pair)))
            elif k == key + "*" and (value := _extended(raw)) is not None:
                found.append((True, value))
        if extended_wins and any(extended for extended, _ in found):
            found = [item for item in found if item[0]]
        if not found:
            return None
        return found[-1][1] if last else found[0][1]

    def read(headers: Sequence[str]) -> PartName:
        params = _split(headers[header])
        return PartName(param(params, "name") or "", param(params, "filename"))

    return read


READERS: tuple[Reader, ...] = (
    Reader(None, _email_first),
    Reader(
        "multipart part names read as Werkzeug (Flask) reads them: the last name=, name* "
        "decoded, quoted-pairs undone",
        _werkzeug,
    ),
    Reader(
        "multipart part names read by name* (RFC 7578), else the first name=, quoted-pairs "
        "undone (Go, busboy)",
        _by_rule(last=False, extended_wins=True, every_pair=True, header=0),
    ),
    Reader(
        "multipart part names read by name*, else the last name= (python-multipart, Starlette)",
        _by_rule(last=True, extended_wins=True, every_pair=False, header=0),
    ),
    Reader(
        "multipart part names read from a part's last Content-Disposition header and its last "
        "name= (Django)",
        _by_rule(last=True, extended_wins=False, every_pair=False, header=-1),
    ),
)
"""The first is the parser's own reading (the value logged and matched first)."""


def part_names(headers: Sequence[str]) -> list[PartName]:
    """A part's name as each of READERS reads it, given its Content-Disposition headers."""
    if not headers:
        return [PartName("", None)] * len(READERS)
    return [reader.read(headers) for reader in READERS]
