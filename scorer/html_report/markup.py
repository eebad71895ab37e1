"""HTML built from elements, never from pasted strings: every text and attribute is escaped.

A report shows what agents sent and what websites served, so any string may be hostile. `el()`
escapes every child that is not already Markup and every attribute value (html.escape with
quote=True); Markup comes only from el() and join(), so escaping cannot be forgotten on the way.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "col", "wbr"})


class Markup(str):
    """A string that is already safe HTML (made by el() or join(), never from input)."""

    __slots__ = ()


def esc(value: Any) -> Markup:
    """Text as HTML: Markup passes through, anything else is str()-ed and escaped (quotes too)."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def _attr_name(name: str) -> str:
    # Python keywords and dashes: class_ -> class, data_run -> data-run, aria_label -> aria-label
    return name.rstrip("_").replace("_", "-")


def attrs(values: dict[str, Any]) -> Markup:
    """Attributes from keyword names; None and False are left out, True is a bare attribute."""
    out = []
    for name, value in values.items():
        if value is None or value is False:
            continue
        key = _attr_name(name)
        if not key.replace("-", "").isalnum():
            raise ValueError(f"not an attribute name: {name!r}")
        out.append(f" {key}" if value is True else f' {key}="{esc(value)}"')
    return Markup("".join(out))


def el(tag: str, *children: Any, **attributes: Any) -> Markup:
    """<tag attrs>children</tag>; lists and tuples of children are flattened, None skipped."""
    if not tag.isalnum():
        raise ValueError(f"not a tag name: {tag!r}")
    opening = f"<{tag}{attrs(attributes)}>"
    if tag in VOID:
        return Markup(opening)
    return Markup(f"{opening}{join(children)}</{tag}>")


def join(children: Iterable[Any], sep: str = "") -> Markup:
    """Children escaped (unless Markup) and concatenated; nested lists flattened."""
    parts: list[str] = []
    for child in children:
        if child is None:
            continue
        if isinstance(child, (list, tuple)):
            parts.append(join(child))
        else:
            parts.append(esc(child))
    return Markup(esc(sep).join(parts))


def percent(value: float | None, digits: int = 1) -> str:
    """A fraction as a percentage string; '—' for None."""
    return "—" if value is None else f"{100 * value:.{digits}f}%"


__all__ = ["Markup", "attrs", "el", "esc", "join", "percent"]
