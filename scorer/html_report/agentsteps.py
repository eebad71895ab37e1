"""The agent's own record of what it did, as timeline events: browser-use's agent/trace.jsonl,
Claude Code's agent/transcript.jsonl (with agent/transcript-times.txt, when each line arrived),
any agent's agent/steps.jsonl, the reference's data/actions.jsonl (browser actions) with
data/screenshots/<ms>.png.

Every one of these files was written by the agent (the driver runs as the agent's user): they are
read through agentfiles (bounded, tolerant) and every text is cut by the Event itself.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scorer.html_report.agentfiles import number, read_jsonl, text
from scorer.html_report.agenttranscript import claude_code_events
from scorer.html_report.timeline import DETAIL_CAP, TEXT_CAP, Event, EventKind, Screenshot, cut


def _action(action: Any) -> str:
    """A browser-use action ({name: {param: value}}) as 'name param=value …'."""
    if not isinstance(action, dict):
        return text(action)
    parts = []
    for name, params in action.items():
        if isinstance(params, dict):
            args = " ".join(f"{k}={cut(text(v), 200)}" for k, v in params.items())
            parts.append(f"{name} {args}".strip())
        else:
            parts.append(f"{name} {cut(text(params), 200)}".strip())
    return "; ".join(parts)


def _image(agent_dir: Path, value: Any) -> Screenshot | None:
    """A screenshot a trace line names (a path inside agent/), if it is a regular file there."""
    if not isinstance(value, str) or not value:
        return None
    candidate = agent_dir / value
    try:
        path, root = candidate.resolve(strict=True), agent_dir.resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if root not in path.parents or candidate.is_symlink() or not path.is_file():
        return None
    return Screenshot(name=f"agent/{path.relative_to(root)}", path=path)


def _actions_event(line: dict[str, Any], agent_dir: Path) -> Event:
    """A step as its actions start: its goal, the URL, the evaluation of the previous goal, the
    actions (a trace written before step events had one line per step: its errors too)."""
    step, goal = text(line.get("step")), text(line.get("goal"))
    actions = line.get("actions") if isinstance(line.get("actions"), list) else []
    detail = [
        f"at {text(line.get('url'))}" if line.get("url") else "",
        f"evaluation: {text(line.get('evaluation'))}" if line.get("evaluation") else "",
        *(f"→ {_action(a)}" for a in actions[:20]),
    ]
    event = Event(
        EventKind.STEP,
        number(line.get("time")),
        f"step {step}: {goal}" if goal else f"step {step}",
        "\n".join(d for d in detail if d),
    )
    _step_result(event, line, agent_dir)
    return event


def _step_result(event: Event, line: dict[str, Any], agent_dir: Path) -> None:
    """What a step's `result`, `screenshot` or `stopped` line adds to it: errors, the
    screenshot of the page after it, a stop."""
    errors = line.get("errors") if isinstance(line.get("errors"), list) else []
    more = [f"error: {text(e)}" for e in errors[:5]]
    if line.get("event") == "stopped":
        more.append(f"stopped in flight: {text(line.get('reason')) or 'no reason given'}")
        event.tone = event.tone or "warn"
    if errors:
        event.tone = "bad"
    if more:
        event.detail = cut("\n".join(x for x in (event.detail, *more) if x), DETAIL_CAP)
    shot = line.get("path") if line.get("event") == "screenshot" else line.get("screenshot")
    event.screenshot = _image(agent_dir, shot) or event.screenshot


def browser_use_events(agent_dir: Path, notes: list[str]) -> list[Event]:
    """agent/trace.jsonl: one event per step, at the time its actions started (its result's
    errors, its screenshot, its stop added to it)."""
    events: list[Event] = []
    steps: dict[str, Event] = {}
    for line in read_jsonl(agent_dir / "trace.jsonl", notes, "agent/trace.jsonl"):
        if line is None:
            continue
        kind, step = line.get("event"), text(line.get("step"))
        if kind in (None, "actions"):
            steps[step] = _actions_event(line, agent_dir)
            events.append(steps[step])
        elif kind in ("result", "stopped", "screenshot"):
            if step not in steps:  # a step with no actions line (its model call failed)
                steps[step] = Event(EventKind.STEP, number(line.get("time")), f"step {step}")
                events.append(steps[step])
            _step_result(steps[step], line, agent_dir)
    return events


def steps_events(agent_dir: Path, notes: list[str]) -> list[Event]:
    """agent/steps.jsonl, the steps any agent (an --agent-cmd of its own) may write to
    $CLAWBENCH_AGENT_OUT (docs/formats.md, "agent/"): a line per step with `time`, `title`, and
    optionally `url`, `detail` and `screenshot` (a path inside agent/)."""
    events: list[Event] = []
    for line in read_jsonl(agent_dir / "steps.jsonl", notes, "agent/steps.jsonl"):
        if line is None:
            continue
        detail = [
            f"at {text(line.get('url'))}" if line.get("url") else "",
            text(line.get("detail")),
        ]
        events.append(
            Event(
                EventKind.STEP,
                number(line.get("time")),
                text(line.get("title")) or "step",
                "\n".join(d for d in detail if d),
                screenshot=_image(agent_dir, line.get("screenshot")),
            )
        )
    return events


_TYPING = frozenset({"keydown", "keyup", "input", "change"})


def _reference_action(line: dict[str, Any]) -> tuple[str, str]:
    """(title, detail) of one of the reference's recorded browser actions."""
    kind = text(line.get("type")) or "action"
    target = line.get("target") if isinstance(line.get("target"), dict) else {}
    tag = text(target.get("tagName")).lower()
    ident = text(target.get("id"))
    label = tag + (f"#{ident}" if ident else "")
    words = " ".join(text(target.get("textContent")).split())[:60]
    title = f"{kind} {label}".strip() + (f" “{words}”" if words else "")
    if kind in _TYPING:
        value = line.get("value")
        title = f"typed into {label}" + (f": {text(value)}" if value is not None else "")
    if kind == "pageLoad":
        title = f"page loaded: {text(line.get('title'))}"
    return title, f"at {text(line.get('url'))}"


def _reference_shots(data: Path) -> dict[int, Path]:
    """data/screenshots/<ms>.png by the action timestamp they were taken for."""
    shots: dict[int, Path] = {}
    try:
        entries = list(os.scandir(data / "screenshots"))
    except OSError:
        return shots
    for e in entries:
        stem, _, ext = e.name.partition(".")
        if ext == "png" and stem.isdigit() and e.is_file(follow_symlinks=False):
            shots[int(stem)] = Path(e.path)
    return shots


def reference_events(data: Path, notes: list[str]) -> list[Event]:
    """data/actions.jsonl (the reference's recorded browser actions): typing on one field is
    one event; a screenshot taken for an action is shown with it."""
    shots = _reference_shots(data)
    events: list[Event] = []
    last_target = None
    for line in read_jsonl(data / "actions.jsonl", notes, "data/actions.jsonl"):
        if line is None:
            continue
        ms = number(line.get("timestamp"))
        title, detail = _reference_action(line)
        target = line.get("target") if isinstance(line.get("target"), dict) else {}
        key = (text(target.get("xpath")), text(line.get("url")))
        typing = text(line.get("type")) in _TYPING
        shot = shots.get(int(ms)) if ms is not None else None
        screenshot = Screenshot(f"data/screenshots/{shot.name}", shot) if shot else None
        if typing and events and last_target == key and events[-1].title.startswith("typed"):
            if line.get("value") is not None:
                events[-1].title = cut(title, TEXT_CAP)
            continue
        last_target = key if typing else None
        at = ms / 1000 if ms is not None else None
        events.append(Event(EventKind.STEP, at, title, detail, screenshot=screenshot))
    return events


def agent_events(run_dir: Path, notes: list[str]) -> list[Event]:
    """Whatever record of its steps the run's harness left (none for a scripted agent, whose
    steps are its requests)."""
    agent = run_dir / "agent"
    return [
        *browser_use_events(agent, notes),
        *claude_code_events(agent, notes),
        *steps_events(agent, notes),
        *reference_events(run_dir / "data", notes),
    ]


__all__ = ["agent_events", "browser_use_events", "reference_events", "steps_events"]
