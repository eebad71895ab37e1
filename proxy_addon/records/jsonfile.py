"""Reading a run's JSON files: one error type, one message shape (file: field: problem)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError


class RecordError(ValueError):
    """A run file that cannot be read; the message names the file."""


def first_error(e: ValidationError) -> str:
    """'field.path: problem' of a validation error's first problem ('(file)' for the root)."""
    first = e.errors(include_url=False)[0]
    loc = ".".join(str(part) for part in first["loc"]) or "(file)"
    return f"{loc}: {first['msg']}"


def read_json(path: str | os.PathLike[str]) -> Any:
    """The JSON value in path; RecordError naming the file when it is missing or unreadable."""
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordError(f"{p}: missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RecordError(f"{p}: unreadable or truncated JSON: {e}") from e


def read_json_object(path: str | os.PathLike[str]) -> dict[str, Any]:
    """read_json, and a JSON object (RecordError otherwise)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise RecordError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def read_optional[M: BaseModel](path: str | os.PathLike[str], model: type[M]) -> M | None:
    """A file of one of our models, or None when there is none (nothing wrote it); RecordError
    naming the file when it is unreadable or not of the model."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise RecordError(f"{p}: unreadable: {e}") from e
    try:
        return model.model_validate_json(raw)
    except ValidationError as e:
        raise RecordError(f"{p}: {first_error(e)}") from e


__all__ = ["RecordError", "first_error", "read_json", "read_json_object", "read_optional"]
