"""Secret redaction for everything written to disk or shown to the judge (never before matching)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote_plus

REDACTED = "[REDACTED]"

SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-csrf-token"}
)
_URL_HEADERS = frozenset({"referer", "location", "content-location"})
"""Headers whose value is a URL, and so may carry secrets in its query."""
SECRET_WORDS = (
    "token",
    "secret",
    "password",
    "passwd",
    "csrf",
    "session",
    "api[-_]?key",
    "auth(?![a-z])",  # auth, basic_auth, X-Auth, OAUTH_TOKEN; not author or authority
    "authori[sz]ation",
)
"""The one list of secret-looking words (regular expressions, case ignored): a header, body or
query key holding one is redacted, and so is a command line's NAME=value or --flag value."""
_WORDS = "|".join(SECRET_WORDS)
SECRET_KEY = re.compile(_WORDS, re.IGNORECASE)
_SECRET_ASSIGNMENT = re.compile(rf"\b([\w-]*(?:{_WORDS})[\w-]*)=(\S+)", re.IGNORECASE)
_SECRET_FLAG = re.compile(rf"(--[\w-]*(?:{_WORDS})[\w-]*[ =])(\S+)", re.IGNORECASE)


@functools.lru_cache(maxsize=4096)  # header names repeat on every request; the proxy's hot path
def is_secret_key(key: str) -> bool:
    """True for a header, body or query key whose value must not be written anywhere.

    The secret header names count for body and query keys too: a form field named `cookie`
    carries what the Cookie header would.
    """
    return key.lower() in SECRET_HEADERS or bool(SECRET_KEY.search(key))


@functools.lru_cache(maxsize=4096)  # decided once per header name, not once per request
def _header_rule(name: str) -> str | None:
    """'secret' (the value is replaced), 'url' (its query is redacted) or None (kept)."""
    if is_secret_key(name):
        return "secret"
    return "url" if name.lower() in _URL_HEADERS else None


def redact_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Header pairs → dict (repeats joined with ', '), secret values replaced, names kept."""
    out: dict[str, str] = {}
    for name, value in headers:
        rule = _header_rule(name)
        if rule == "secret":
            out[name] = REDACTED
            continue
        if rule == "url":
            value = redact_url(value)
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def redact_fields(value: Any) -> Any:
    """Body or query fields with secret-looking keys replaced, at any depth."""
    if isinstance(value, dict):
        return {
            k: REDACTED if isinstance(k, str) and is_secret_key(k) else redact_fields(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact_fields(v) for v in value]
    return value


def _secret_pair(pair: str) -> bool:
    key, eq, _ = pair.partition("=")
    # The key as the server reads it: percent-escapes and '+' decoded.
    return bool(eq) and is_secret_key(unquote_plus(key) if "%" in key or "+" in key else key)


def redact_url(url: str) -> str:
    """Replace the values of secret-looking query keys in a URL, keeping everything else as is."""
    base, sep, rest = url.partition("?")
    if not sep:
        return url
    query, hsep, frag = rest.partition("#")
    pairs = query.split("&")
    if not any(map(_secret_pair, pairs)):
        return url
    redacted = f"={quote(REDACTED)}"
    parts = [p.partition("=")[0] + redacted if _secret_pair(p) else p for p in pairs]
    return f"{base}?{'&'.join(parts)}{hsep}{frag}"


def redact_command(command: str) -> str:
    """A shell command with NAME=value and --flag value secrets replaced by [REDACTED]."""
    command = _SECRET_ASSIGNMENT.sub(rf"\1={REDACTED}", command)
    return _SECRET_FLAG.sub(rf"\1{REDACTED}", command)


__all__ = [
    "REDACTED",
    "SECRET_HEADERS",
    "SECRET_KEY",
    "SECRET_WORDS",
    "is_secret_key",
    "redact_command",
    "redact_fields",
    "redact_headers",
    "redact_url",
]
