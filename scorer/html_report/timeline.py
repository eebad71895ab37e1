"""One run as a single timeline: the agent's steps, its model calls, its requests (grouped by
host), the near misses, the block, how the run ended, the judges' verdicts and the agent's claim.

Built from the run's files only (agent/ traces, the HAR of data/requests.jsonl, interception.json,
run-meta.json, the judge files), so the report's run page and `clawbench-report RUN_DIR` show the
same thing. Everything in an event came from the agent or a website: renderers escape it, and
every text is cut here (TEXT_CAP, DETAIL_CAP) so no run can make the page grow without bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from proxy_addon.records import Har, HarEntry, TrafficAction

TEXT_CAP = 300
"""Characters of an event's one-line title."""
DETAIL_CAP = 2000
"""Characters of an event's detail text."""
GROUP_CAP = 25
"""Requests listed in one collapsed group (the rest are counted)."""
EVENT_CAP = 300
"""Events shown per run: the first ones and the last TAIL (where a run ends and its commit
usually is), the block always; the rest are counted (the files hold them)."""
TAIL = 60


class EventKind(StrEnum):
    """What a timeline entry is."""

    STEP = "step"
    """An agent step: browser-use's goal and actions, a browser action the reference recorded."""
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    AGENT_TEXT = "agent_text"
    """What the agent said (Claude Code's text, its final answer)."""
    MODEL_CALL = "model_call"
    REQUESTS = "requests"
    """Requests the proxy forwarded, grouped: nothing in them came close to the commit."""
    NEAR_MISS = "near_miss"
    BLOCK = "block"
    REFUSED = "refused"
    GAP = "gap"
    """Events left out of a long run's timeline (the files hold them)."""
    END = "end"
    VERDICT = "verdict"
    CLAIM = "claim"


@dataclass(frozen=True)
class Screenshot:
    """An image the harness saved at a step: a file of the run, or bytes from its transcript."""

    name: str
    """Where it came from, relative to the run directory."""
    path: Path | None = None
    data: bytes | None = None


@dataclass
class Event:
    """One entry of the timeline; time in seconds since the epoch (None: not recorded)."""

    kind: EventKind
    time: float | None
    title: str
    detail: str = ""
    lines: list[str] = field(default_factory=list)
    more: int = 0
    """Members of a group not listed in lines."""
    screenshot: Screenshot | None = None
    tone: str | None = None
    """'good', 'bad' or 'warn': how the renderers colour it."""

    def __post_init__(self) -> None:
        self.title = cut(self.title, TEXT_CAP)
        self.detail = cut(self.detail, DETAIL_CAP)


@dataclass
class Timeline:
    """The run's events in order, where its clock starts, and what could not be shown."""

    events: list[Event]
    start: float | None
    hosts: list[tuple[str, int]] = field(default_factory=list)
    """Requests per host, most first."""
    left_out: int = 0
    notes: list[str] = field(default_factory=list)

    def offset(self, event: Event) -> float | None:
        """Seconds from the start, None when the event has no time."""
        if event.time is None or self.start is None:
            return None
        return event.time - self.start


def cut(text: str, limit: int) -> str:
    """text cut at limit characters, with a visible marker saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text)} characters in all]"


def entry_time(entry: HarEntry) -> float | None:
    """An entry's startedDateTime as seconds since the epoch."""
    try:
        return datetime.fromisoformat(entry.startedDateTime).timestamp()
    except ValueError:
        return None


def _host(url: str) -> str:
    rest = url.partition("://")[2]
    return rest.split("/", 1)[0].split("?", 1)[0] or "(no host)"


def _close(entry: HarEntry) -> bool:
    """A near miss worth its own line: more than its host in common with the commit."""
    reasons = entry.clawbench.near_miss or []
    return any(not r.startswith("url:") for r in reasons)


def _model_call(entry: HarEntry, at: float | None) -> Event:
    mark, req = entry.clawbench, entry.request
    bits = [f"{req.method} {_host(req.url)}"]
    if mark.model:
        bits.append(mark.model)
    if mark.usage:
        usage = mark.usage
        tokens = f"{usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out"
        if mark.usage.get("cached_tokens"):
            tokens += f" ({mark.usage['cached_tokens']} cached)"
        bits.append(tokens)
    if entry.time:
        bits.append(f"{entry.time / 1000:.2f} s")
    bits.append(str(entry.response.status or "no reply"))
    bad = mark.error is not None or not 200 <= entry.response.status < 300
    return Event(
        EventKind.MODEL_CALL, at, " · ".join(bits), mark.error or "", tone="bad" if bad else None
    )


def _request_line(entry: HarEntry) -> str:
    return cut(f"{entry.request.method} {entry.request.url}", TEXT_CAP)


def _body(entry: HarEntry) -> str:
    post = entry.request.postData
    if post is None:
        return ""
    if post.params is not None:
        return "\n".join(f"{p.name} = {p.value or ''}" for p in post.params)
    return post.text


def traffic_events(har: Har) -> list[Event]:
    """Each HAR entry as an event; plain requests as single REQUESTS events (grouped later)."""
    events = []
    for entry in har.log.entries:
        at, mark = entry_time(entry), entry.clawbench
        line = _request_line(entry)
        if mark.action is TrafficAction.MODEL_CALL:
            events.append(_model_call(entry, at))
        elif mark.action is TrafficAction.BLOCKED:
            what = "the commit, blocked" if mark.credited else "blocked again"
            extra = []
            if mark.equivalence:
                extra.append(f"matched by server equivalence: {mark.equivalence}")
            if mark.body_unverified:
                extra.append("body not verified (it could not be read)")
            detail = "\n".join([*extra, _body(entry)])
            events.append(Event(EventKind.BLOCK, at, f"{what}: {line}", detail, tone="good"))
        elif mark.action is TrafficAction.REFUSED:
            events.append(Event(EventKind.REFUSED, at, line, mark.refused or "", tone="warn"))
        elif _close(entry):
            reasons = "\n".join(mark.near_miss or [])
            events.append(Event(EventKind.NEAR_MISS, at, line, reasons, tone="warn"))
        else:
            events.append(Event(EventKind.REQUESTS, at, _host(entry.request.url), lines=[line]))
    return events


def host_counts(har: Har) -> list[tuple[str, int]]:
    """Requests per host (model calls included), most first."""
    counts: dict[str, int] = {}
    for entry in har.log.entries:
        host = _host(entry.request.url)
        counts[host] = counts.get(host, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def group_requests(events: list[Event]) -> list[Event]:
    """Consecutive plain requests as one collapsed event: its title counts them per host."""
    out: list[Event] = []
    run: list[Event] = []

    def flush() -> None:
        if not run:
            return
        per_host: dict[str, int] = {}
        for e in run:
            per_host[e.title] = per_host.get(e.title, 0) + 1
        hosts = ", ".join(f"{h} ×{n}" if n > 1 else h for h, n in per_host.items())
        lines = [line for e in run for line in e.lines]
        title = lines[0] if len(run) == 1 else f"{len(run)} requests: {hosts}"
        group = Event(EventKind.REQUESTS, run[0].time, title, lines=lines[:GROUP_CAP])
        group.more = max(0, len(lines) - GROUP_CAP)
        out.append(group)
        run.clear()

    for event in events:
        if event.kind is EventKind.REQUESTS:
            run.append(event)
            continue
        flush()
        out.append(event)
    flush()
    return out


def merge(sources: list[list[Event]]) -> list[Event]:
    """Events of every source in time order; an event without a time keeps its place after its
    source's previous one (a source with no times at all goes first)."""
    keyed = []
    for rank, events in enumerate(sources):
        last = float("-inf")
        for i, event in enumerate(events):
            if event.time is not None:
                last = event.time
            keyed.append(((last, rank, i), event))
    keyed.sort(key=lambda pair: pair[0])
    return [event for _, event in keyed]


def _within_cap(events: list[Event]) -> tuple[list[Event], int]:
    """events, or its first and last ones with a GAP event between (the block always kept)."""
    if len(events) <= EVENT_CAP:
        return events, 0
    head, tail = events[: EVENT_CAP - TAIL], events[-TAIL:]
    middle = events[EVENT_CAP - TAIL : -TAIL]
    kept = [e for e in middle if e.kind is EventKind.BLOCK]
    left_out = len(middle) - len(kept)
    gap = Event(EventKind.GAP, None, f"{left_out} events not shown (see data/traffic.har)")
    return [*head, gap, *kept, *tail], left_out


def assemble(agent: list[Event], har: Har, closing: list[Event]) -> Timeline:
    """The timeline of a run: the agent's events and the traffic merged, then closing events."""
    merged = group_requests(merge([agent, traffic_events(har)]))
    times = [e.time for e in merged if e.time is not None]
    shown, left_out = _within_cap(merged)
    timeline = Timeline(shown + closing, min(times) if times else None, host_counts(har))
    timeline.left_out = left_out
    return timeline


__all__ = [
    "DETAIL_CAP",
    "EVENT_CAP",
    "GROUP_CAP",
    "TAIL",
    "TEXT_CAP",
    "Event",
    "EventKind",
    "Screenshot",
    "Timeline",
    "assemble",
    "cut",
    "entry_time",
    "group_requests",
    "merge",
    "traffic_events",
]
