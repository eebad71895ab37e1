"""The one matcher (docs/formats.md, "Matching"), used by the live addon and the offline scorer:
canonical URLs (`urls`), bodies and queries (`bodies`, Content-Encoding in `encoding`), secret
redaction (`redact`), what servers route to the commit although the exact rule misses it
(`equivalence`), the verdict with its reasons (`matcher`)."""

from __future__ import annotations

from proxy_addon.matching.bodies import (
    RAW_TEXT_CAP,
    ParsedBody,
    Unevaluable,
    binary_text,
    decode_content,
    parse_body,
    parse_query,
)
from proxy_addon.matching.equivalence import METHOD_OVERRIDE_HEADERS
from proxy_addon.matching.matcher import HttpRequest, Matcher, MatchResult
from proxy_addon.matching.redact import redact_command, redact_fields, redact_headers, redact_url
from proxy_addon.matching.urls import (
    DEFAULT_PORTS,
    canonical_host,
    canonical_url,
    split_authority,
    url_origin,
    url_path,
)

__all__ = [
    "DEFAULT_PORTS",
    "METHOD_OVERRIDE_HEADERS",
    "RAW_TEXT_CAP",
    "HttpRequest",
    "MatchResult",
    "Matcher",
    "ParsedBody",
    "Unevaluable",
    "binary_text",
    "canonical_host",
    "canonical_url",
    "decode_content",
    "parse_body",
    "parse_query",
    "redact_command",
    "redact_fields",
    "redact_headers",
    "redact_url",
    "split_authority",
    "url_origin",
    "url_path",
]
