"""Reading the files an agent wrote: bounded, tolerant, every value checked for its type.

Every file under agent/ (and the reference's agent-side files) was written by the agent, so each
is read as hostile: at most READ_CAP bytes, lines over LINE_CAP or past LINE_COUNT_CAP skipped,
bad UTF-8 replaced, and a value of the wrong type read as nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proxy_addon.records import number

READ_CAP = 16 << 20
"""Bytes of one agent file read."""
LINE_CAP = 4 << 20
"""Bytes of one line parsed (a transcript line may hold a screenshot)."""
LINE_COUNT_CAP = 2000
"""Lines read from one file (a step, a transcript event each)."""


def text(value: Any) -> str:
    """A JSON value as one display string (strings as they are)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def read_jsonl(path: Path, notes: list[str], name: str) -> list[dict[str, Any] | None]:
    """The file's lines as JSON objects, one item per line (None for a line that is none:
    blank, cut, too long); [] when the file is absent. Problems go to notes, under name."""
    try:
        with path.open("rb") as f:
            raw = f.read(READ_CAP + 1)
    except FileNotFoundError:
        return []
    except OSError as e:
        notes.append(f"{name}: unreadable: {e.strerror or e}")
        return []
    if len(raw) > READ_CAP:
        notes.append(f"{name}: only its first {READ_CAP >> 20} MiB were read")
        raw = raw[:READ_CAP]
    lines = raw.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    if len(lines) > LINE_COUNT_CAP:
        notes.append(f"{name}: only its first {LINE_COUNT_CAP} of {len(lines)} lines were read")
        lines = lines[:LINE_COUNT_CAP]
    out: list[dict[str, Any] | None] = []
    bad = 0
    for line in lines:
        value = None
        if len(line) <= LINE_CAP and line.strip():
            try:
                value = json.loads(line.decode("utf-8", "replace"))
            except ValueError:
                value = None
        if line.strip() and not isinstance(value, dict):
            bad += 1
        out.append(value if isinstance(value, dict) else None)
    if bad:
        notes.append(f"{name}: {bad} lines are not JSON objects (or are over {LINE_CAP >> 20} MiB)")
    return out


__all__ = ["LINE_CAP", "LINE_COUNT_CAP", "READ_CAP", "number", "read_jsonl", "text"]
