"""Field values as the matcher keeps them: a name sent once is its value, a repeated one a
list; bytes that are not text are capped base64 (bodies.py, multipart.py, the request log)."""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["RAW_TEXT_CAP", "binary_text", "unwrap"]

RAW_TEXT_CAP = 64 * 1024
"""Raw (non-form, non-JSON) bodies are kept up to this many characters."""


def unwrap(parsed: dict[str, list[Any]]) -> dict[str, Any]:
    """{name: [values]} with single values unwrapped (parse_qs's shape to the reference's)."""
    return {k: v[0] if len(v) == 1 else v for k, v in parsed.items()}


def binary_text(data: bytes) -> str:
    """Bytes as the log keeps them: base64, capped, with the full length when cut."""
    head = base64.b64encode(data[: RAW_TEXT_CAP * 3 // 4]).decode("ascii")
    more = f" ...[{len(data)} bytes in all]" if len(data) > RAW_TEXT_CAP * 3 // 4 else ""
    return f"base64:{head}{more}"
