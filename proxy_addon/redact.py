"""Secret redaction for everything written to disk or shown to the judge (never before matching)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

REDACTED = "[REDACTED]"

SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-csrf-token"}
)
SECRET_KEY = re.compile(r"token|secret|password|passwd|csrf|session|api[-_]?key", re.IGNORECASE)


def is_secret_key(key: str) -> bool:
    return bool(SECRET_KEY.search(key))


def redact_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Header pairs → dict (repeats joined with ', '), secret values replaced, names kept."""
    out: dict[str, str] = {}
    for name, value in headers:
        if name.lower() in SECRET_HEADERS or is_secret_key(name):
            value = REDACTED
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


def redact_url(url: str) -> str:
    """Replace the values of secret-looking query keys in a URL, keeping everything else as is."""
    base, sep, rest = url.partition("?")
    if not sep or not SECRET_KEY.search(rest):
        return url
    query, hsep, frag = rest.partition("#")
    parts = []
    for pair in query.split("&"):
        key, eq, _ = pair.partition("=")
        parts.append(f"{key}={quote(REDACTED)}" if eq and is_secret_key(key) else pair)
    return f"{base}?{'&'.join(parts)}{hsep}{frag}"
