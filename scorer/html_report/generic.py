"""Any JSON value as readable HTML: objects as key/value tables, lists of objects as tables.

Used for sections whose exact shape other parts of the scorer still decide (judge agreement,
agent usage): the report shows whatever keys they hold, escaped, without knowing them ahead.
A string that names a run of the batch links to that run's details.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scorer.html_report.markup import Markup, el, esc

MAX_DEPTH = 5
MAX_ITEMS = 500
Scalar = str | int | float | bool | None


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def label(key: Any) -> str:
    """A JSON key as a heading: underscores as spaces."""
    return str(key).replace("_", " ")


def scalar_html(value: Any, links: Mapping[str, str]) -> Markup:
    """One scalar: numbers rounded, booleans as yes/no, None as a dash, run names linked."""
    if value is None:
        return Markup('<span class="muted">—</span>')
    if isinstance(value, bool):
        return esc("yes" if value else "no")
    if isinstance(value, float):
        return el("span", f"{value:.3f}".rstrip("0").rstrip(".") or "0", class_="num")
    if isinstance(value, int):
        return el("span", value, class_="num")
    text = str(value)
    anchor = links.get(text)
    if anchor is not None:
        return el("a", text, href=f"#{anchor}", class_="mono")
    return esc(text)


def _table(rows: list[Mapping[str, Any]], links: Mapping[str, str], depth: int) -> Markup:
    columns: list[str] = []
    for row in rows:
        columns += [str(k) for k in row if str(k) not in columns]
    head = el("thead", el("tr", [el("th", label(c)) for c in columns]))
    body = el(
        "tbody",
        [
            el("tr", [el("td", value_html(row.get(c), links, depth + 1)) for c in columns])
            for row in rows[:MAX_ITEMS]
        ],
    )
    more = _more(len(rows))
    return Markup(el("table", head, body, class_="grid") + more)


def _more(n: int) -> Markup:
    if n <= MAX_ITEMS:
        return Markup("")
    return el("p", f"… and {n - MAX_ITEMS} more", class_="muted")


def value_html(value: Any, links: Mapping[str, str] | None = None, depth: int = 0) -> Markup:
    """value as HTML; links: run names (as the value may spell them) to element ids."""
    links = links or {}
    if _is_scalar(value):
        return scalar_html(value, links)
    if depth >= MAX_DEPTH:
        return el("code", json.dumps(value, ensure_ascii=False, default=str)[:2000])
    if isinstance(value, Mapping):
        if not value:
            return Markup('<span class="muted">—</span>')
        inner = list(value.values())
        if all(isinstance(v, Mapping) and all(map(_is_scalar, v.values())) for v in inner):
            # {"judge-a": {"pass_rate": .3, "n": 10}, ...}: one row per key
            rows = [{"": k, **v} for k, v in value.items()]
            return _table(rows, links, depth)
        rows_html = [
            el("tr", el("th", label(k)), el("td", value_html(v, links, depth + 1)))
            for k, v in list(value.items())[:MAX_ITEMS]
        ]
        return Markup(el("table", el("tbody", rows_html), class_="kv") + _more(len(value)))
    if isinstance(value, (list, tuple)):
        if not value:
            return Markup('<span class="muted">none</span>')
        if all(isinstance(v, Mapping) for v in value):
            return _table(list(value), links, depth)
        if all(map(_is_scalar, value)):
            items = [scalar_html(v, links) for v in value[:MAX_ITEMS]]
            return Markup(esc(", ").join(items) + _more(len(value)))
        return el("ul", [el("li", value_html(v, links, depth + 1)) for v in value[:MAX_ITEMS]])
    return esc(value)


__all__ = ["label", "scalar_html", "value_html"]
