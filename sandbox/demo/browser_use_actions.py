"""browser-use's side of the scripted model: script steps turned into its action format.

browser-use sends the page as `<browser_state>` with interactive elements as `[index]<tag ...>`
lines and their text on the lines below; a step names an element by what a user sees (a field's
name, placeholder or label, a button's caption) and gets browser-use's action with its index.
"""

from __future__ import annotations

import re
from typing import Any

_ELEMENT = re.compile(r"\[(\d+)\](<[^\n]*)")


class ScriptError(ValueError):
    """A step that cannot be answered (no element matches, the script is over)."""


def _elements(state: str) -> list[tuple[int, str, str]]:
    """(index, tag line, text below it) of each interactive element in the last
    <browser_state> block (the system prompt's format examples are not the page)."""
    start = state.rfind("<browser_state>")
    lines = state[start:].split("\n") if start >= 0 else state.split("\n")
    found: list[tuple[int, str, list[str]]] = []
    for line in lines:
        m = _ELEMENT.search(line)
        if m:
            found.append((int(m.group(1)), m.group(2), []))
        elif found:
            found[-1][2].append(line.strip())
    return [(i, tag, " ".join(text)) for i, tag, text in found]


def find_index(state: str, label: str) -> int:
    """The index of the element a user would call label: by its attributes (name, placeholder,
    value) first, else by the text shown under it (a button's caption)."""
    want = label.lower()
    elements = _elements(state)
    for i, tag, _ in elements:
        if want in tag.lower():
            return i
    for i, _, text in elements:
        if want in text.lower():
            return i
    raise ScriptError(f"no element mentioning {label!r} in the page state")


def fill_actions(fields: dict[str, str], state: str) -> list[dict[str, Any]]:
    """Fill a form by field name (or id): a select gets its option, a radio button its value
    clicked, anything else the text typed. Fields with no interactive element (hidden) are
    skipped."""
    actions: list[dict[str, Any]] = []
    elements = _elements(state)
    for name, value in fields.items():
        named = [
            (i, tag)
            for i, tag, _ in elements
            if f"name={name} " in tag + " " or f"id={name} " in tag + " "
        ]
        if not named:
            continue
        index, tag = named[0]
        if tag.startswith("<select"):
            actions.append({"select_dropdown": {"index": index, "text": value}})
        elif "type=radio" in tag or "type=checkbox" in tag:
            chosen = [i for i, t in named if f"value={value} " in t + " "]
            actions.extend({"click": {"index": i}} for i in chosen[:1])
        else:
            actions.append({"input": {"index": index, "text": value, "clear": True}})
    return actions


def browser_use_actions(step: dict[str, Any], state: str) -> list[dict[str, Any]]:
    """browser-use actions for one script step, against the page state the agent sent."""
    if "fill" in step:
        return fill_actions(step["fill"], state) or [{"wait": {"seconds": 1}}]
    if "actions" in step:
        return [a for sub in step["actions"] for a in browser_use_actions(sub, state)]
    if "navigate" in step:
        return [{"navigate": {"url": step["navigate"], "new_tab": False}}]
    if "input" in step:
        spec = step["input"]
        index = find_index(state, spec["field"])
        return [{"input": {"index": index, "text": spec["text"], "clear": True}}]
    if "select" in step:
        spec = step["select"]
        index = find_index(state, spec["field"])
        return [{"select_dropdown": {"index": index, "text": spec["option"]}}]
    if "click" in step:
        return [{"click": {"index": find_index(state, step["click"])}}]
    if "submit" in step:
        buttons = [i for i, tag, _ in _elements(state) if "type=submit" in tag]
        if not buttons:
            raise ScriptError("no submit button in the page state")
        return [{"click": {"index": buttons[0]}}]
    if "done" in step:
        done = {"text": step["done"], "success": step.get("success", True)}
        return [{"done": {**done, "files_to_display": []}}]
    raise ScriptError(f"unknown step {step!r}")


__all__ = ["ScriptError", "browser_use_actions", "fill_actions", "find_index"]
