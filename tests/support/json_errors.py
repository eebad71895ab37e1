"""json.loads's own words for a text it rejects: they differ between Python versions (3.13
reports a trailing comma where 3.12 expects a property name), so tests that pin an error
message built from them ask the running interpreter instead of spelling one version's text."""

from __future__ import annotations

import json


def json_error(text: str) -> str:
    """'line L column C: message' as json.loads reports the first error in text."""
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return f"line {e.lineno} column {e.colno}: {e.msg}"
    raise AssertionError(f"{text!r} is valid JSON")
