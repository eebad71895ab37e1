"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

_counter = itertools.count()


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> None:
    """Write a temp file beside path, fdatasync it (durable), then os.replace it into place."""
    target = Path(path)
    # pid + counter is unique per writer without tempfile's random-name retries (hot path).
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{next(_counter)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fdatasync(fd)  # data and size; the rename below is the commit point
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def finite_floats(value: Any) -> Any:
    """value with NaN and ±Infinity as the strings "NaN", "Infinity", "-Infinity" (strict JSON
    has no such numbers; Python's json reads them, and 1e999, as floats)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: finite_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_floats(v) for v in value]
    return value


def dump_json(data: Any) -> bytes:
    """Indented strict JSON in UTF-8; escaped ASCII when a string cannot be UTF-8."""
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError:  # NaN or Infinity, e.g. from a request body
        data = finite_floats(data)
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (JSON.stringify of a string cut mid-emoji sends "\ud83d", which
        # json.loads reads as is) has no UTF-8 form; escaped, it reads back as the same string.
        return (json.dumps(data, indent=2, allow_nan=False) + "\n").encode("ascii")


def write_json_atomic(
    path: str | os.PathLike[str], data: BaseModel | Any, *, durable: bool = True
) -> None:
    """Serialise data (a pydantic model or plain JSON data) and write it atomically."""
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json", by_alias=True)
    write_bytes_atomic(path, dump_json(data), durable=durable)
