"""Atomic file writes: a reader sees the old file or the new one, never half of either."""

from __future__ import annotations

import contextlib
import itertools
import json
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


def dump_json(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def write_json_atomic(
    path: str | os.PathLike[str], data: BaseModel | Any, *, durable: bool = True
) -> None:
    """Serialise data (a pydantic model or plain JSON data) and write it atomically."""
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json", by_alias=True)
    write_bytes_atomic(path, dump_json(data), durable=durable)
