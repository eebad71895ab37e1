"""Read Playwright MCP page snapshots: which element ref (`[ref=e12]`) has a role and a name.

A snapshot is the YAML-like accessibility tree that `browser_snapshot` returns in its tool
result, one element per line: `- textbox "Title" [ref=e10]`, `- button "Post review" [ref=e15]`.
A scripted model uses it the way a real model does: it reads the refs off the latest snapshot
and names them in its next tool call (`{"target": "e10", ...}`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["SnapshotNode", "find_ref", "latest_ref", "nodes"]

# `- role "name" [attr] [ref=e12] [cursor=pointer]:` (the name is a JSON-style quoted string)
_LINE = re.compile(r'^\s*-\s+(?P<role>[\w-]+)(?:\s+(?P<name>"(?:[^"\\]|\\.)*"))?(?P<rest>.*)$')
_REF = re.compile(r"\[ref=(?P<ref>[^\]\s]+)\]")


@dataclass(frozen=True)
class SnapshotNode:
    """One element of a snapshot that carries a ref."""

    role: str
    name: str
    ref: str


def _unquote(quoted: str) -> str:
    try:
        value = json.loads(quoted)
    except json.JSONDecodeError:
        return quoted[1:-1]
    return value if isinstance(value, str) else quoted[1:-1]


def nodes(snapshot: str) -> list[SnapshotNode]:
    """Every element with a ref in a snapshot text, in document order."""
    found = []
    for line in snapshot.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        ref = _REF.search(match["rest"])
        if ref is None:
            continue
        name = _unquote(match["name"]) if match["name"] else ""
        found.append(SnapshotNode(match["role"], name, ref["ref"]))
    return found


def find_ref(snapshot: str, role: str, name: str, *, exact: bool = True) -> str | None:
    """The ref of the first element with this role and name (or a name containing it)."""
    wanted = name.casefold()
    for node in nodes(snapshot):
        if node.role != role:
            continue
        have = node.name.casefold()
        if have == wanted or (not exact and wanted in have):
            return node.ref
    return None


def latest_ref(texts: Iterable[str], role: str, name: str, *, exact: bool = True) -> str | None:
    """The ref found in the newest text that has one (texts are given oldest first)."""
    for text in reversed(list(texts)):
        ref = find_ref(text, role, name, exact=exact)
        if ref is not None:
            return ref
    return None
