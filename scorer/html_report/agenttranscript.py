"""Claude Code's agent/transcript.jsonl (its stream-json output) as timeline events: what it
said, each tool call with its input, each tool result (an image in a result, as Playwright MCP's
browser_take_screenshot returns, is a screenshot at that step), its final answer.

Stream-json lines carry no time; the driver writes agent/transcript-times.txt beside them (the
time each line arrived, one a line), so the events fall among the requests they caused. An older
run without it keeps the transcript's order, ahead of the traffic.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any

from scorer.html_report.agentfiles import number, read_jsonl, text
from scorer.html_report.timeline import Event, EventKind, Screenshot, cut

TIMES_FILE = "transcript-times.txt"
SHOT_BYTES_CAP = 512 << 10
"""Bytes of one image kept from the transcript; a larger one is named, not shown."""
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")


def _times(agent_dir: Path, notes: list[str]) -> list[float | None]:
    try:
        with (agent_dir / TIMES_FILE).open("rb") as f:
            raw = f.read(1 << 20)
    except FileNotFoundError:
        return []
    except OSError as e:
        notes.append(f"agent/{TIMES_FILE}: unreadable: {e.strerror or e}")
        return []
    out: list[float | None] = []
    for line in raw.splitlines():
        try:
            out.append(number(float(line)))
        except ValueError:
            out.append(None)
    return out


def _tool_name(name: str) -> str:
    """mcp__playwright__browser_click → browser_click."""
    return name.rsplit("__", 1)[-1] if name.startswith("mcp__") else name


def _summary(name: str, args: Any) -> str:
    """The one argument that says what a call does, when there is one."""
    if isinstance(args, dict):
        for key in ("command", "url", "element", "file_path", "text", "key"):
            if isinstance(args.get(key), str):
                return args[key]
    return text(args)


def _screenshot(block: dict[str, Any], index: int, notes: list[str]) -> Screenshot | None:
    source = block.get("source") if isinstance(block.get("source"), dict) else {}
    data = source.get("data")
    if source.get("type") != "base64" or not isinstance(data, str):
        return None
    if source.get("media_type") not in _IMAGE_TYPES:
        return None
    name = f"agent/transcript.jsonl, line {index + 1}"
    if len(data) > SHOT_BYTES_CAP * 4 // 3 + 4:
        notes.append(f"{name}: an image of {len(data) * 3 // 4} bytes, too large to show")
        return None
    try:
        return Screenshot(name=name, data=base64.b64decode(data, validate=True))
    except (binascii.Error, ValueError):
        return None


def _result(block: dict[str, Any], names: dict[str, str], at: float | None, i: int,
            notes: list[str]) -> Event:  # fmt: skip
    content = block.get("content")
    parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
    texts, shot = [], None
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "image":
            shot = shot or _screenshot(part, i, notes)
        else:
            texts.append(text(part.get("text")))
    body = "\n".join(t for t in texts if t)
    name = names.get(text(block.get("tool_use_id")), "tool")
    first = next((line for line in body.splitlines() if line.strip()), "(no text)")
    bad = block.get("is_error") is True
    title = f"{name} {'failed' if bad else 'returned'}: {cut(first, 160)}"
    return Event(EventKind.TOOL_RESULT, at, title, body, screenshot=shot,
                 tone="bad" if bad else None)  # fmt: skip


def _message(event: dict[str, Any], at: float | None, i: int, names: dict[str, str],
             notes: list[str]) -> list[Event]:  # fmt: skip
    message = event.get("message") if isinstance(event.get("message"), dict) else {}
    content = message.get("content")
    out = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and event.get("type") == "assistant" and text(block.get("text")).strip():
            said = text(block.get("text"))
            out.append(Event(EventKind.AGENT_TEXT, at, said.strip().splitlines()[0], said))
        elif kind == "tool_use":
            name = _tool_name(text(block.get("name")))
            names[text(block.get("id"))] = name
            args = block.get("input")
            title = f"{name}: {cut(_summary(name, args), 200)}"
            out.append(Event(EventKind.TOOL_CALL, at, title, text(args)))
        elif kind == "tool_result":
            out.append(_result(block, names, at, i, notes))
    return out


def claude_code_events(agent_dir: Path, notes: list[str]) -> list[Event]:
    """agent/transcript.jsonl's messages, tool calls and results in order."""
    lines = read_jsonl(agent_dir / "transcript.jsonl", notes, "agent/transcript.jsonl")
    if not lines:
        return []
    times = _times(agent_dir, notes)
    if not times:
        notes.append("agent/transcript.jsonl: no arrival times: its steps are listed first")
    names: dict[str, str] = {}
    events: list[Event] = []
    for i, event in enumerate(lines):
        if event is None:
            continue
        at = times[i] if i < len(times) else None
        if event.get("type") in ("assistant", "user"):
            events += _message(event, at, i, names, notes)
        elif event.get("type") == "result" and isinstance(event.get("result"), str):
            answer = event["result"]
            title = f"final answer: {answer.strip().splitlines()[0] if answer.strip() else '—'}"
            bad = event.get("is_error") is True
            events.append(Event(EventKind.AGENT_TEXT, at, title, answer,
                                tone="bad" if bad else None))  # fmt: skip
    return events


__all__ = ["SHOT_BYTES_CAP", "TIMES_FILE", "claude_code_events"]
