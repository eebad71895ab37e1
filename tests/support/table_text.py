"""Reading clawbench-score's printed table back, in either of its forms: the table (one row per
entry, heads over one or more lines) or the list a narrow console gets (an entry's label, then
`head: value` items joined by ` · `)."""

from __future__ import annotations

import re

_BAR = re.compile(r"[│┃]")


def _table_form(lines: list[str]) -> dict[str, dict[str, str]]:
    heads: list[list[str]] = []
    rows: dict[str, dict[str, str]] = {}
    for line in lines:
        if not _BAR.search(line):
            continue
        cells = [c.strip() for c in _BAR.split(line)[1:-1]]
        if "┃" in line:  # a head line: heads may take several lines
            heads = heads or [[] for _ in cells]
            for parts, cell in zip(heads, cells, strict=True):
                if cell:
                    parts.append(cell)
            continue
        names = [" ".join(h) for h in heads]
        rows[cells[0]] = dict(zip(names[1:], cells[1:], strict=True))
    return rows


def _list_form(lines: list[str]) -> dict[str, dict[str, str]]:
    """After the title line: entries, each a line at the margin followed by indented items,
    until the first line that is neither (what the scorer prints after the table)."""
    rows: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line, after in zip(lines[1:], [*lines[2:], ""], strict=True):
        if not line.startswith(" ") and after.startswith("  "):
            current = rows.setdefault(line.strip(), {})
        elif line.startswith("  ") and current is not None:
            for item in line.strip().split(" · "):
                head, _, value = item.partition(": ")
                current[head] = value
        else:
            break
    return rows


def read_table(text: str) -> dict[str, dict[str, str]]:
    """entry label → head → cell, from a batch's printed table (the `all` row included)."""
    lines = text.splitlines()
    if any("┃" in line for line in lines):
        return _table_form(lines)
    return _list_form(lines)


__all__ = ["read_table"]
