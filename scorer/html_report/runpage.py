"""A run's timeline as HTML: one ordered list, each event with its offset from the run's start,
its kind and what it says; requests that came nowhere near the commit collapsed; the block open.

Every text comes from the agent or a website and goes through el() (escaped). Screenshots are
inlined as data: URIs only when their bytes are a PNG, JPEG, GIF or WebP (the type is read from
the bytes, never from the agent) and within SHOT_CAP; at most SHOTS_PER_RUN are inlined per run
(the last ones: where the run ended) and REPORT_SHOT_BUDGET per report, the others are links to
their files (images only).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path

from scorer.html_report.markup import Markup, el
from scorer.html_report.timeline import Event, EventKind, Screenshot, Timeline

SHOT_CAP = 160 << 10
"""Bytes of one screenshot inlined in the report."""
SHOTS_PER_RUN = 3
"""Screenshots inlined per run."""
REPORT_SHOT_BUDGET = 16 << 20
"""Bytes of inlined screenshots (their data: URIs) in one report, runs in the order read; past
it, links only."""

LABELS = {
    EventKind.STEP: "step",
    EventKind.TOOL_CALL: "tool call",
    EventKind.TOOL_RESULT: "tool result",
    EventKind.AGENT_TEXT: "agent",
    EventKind.MODEL_CALL: "model call",
    EventKind.REQUESTS: "requests",
    EventKind.NEAR_MISS: "near miss",
    EventKind.BLOCK: "BLOCKED",
    EventKind.REFUSED: "refused",
    EventKind.GAP: "…",
    EventKind.END: "end",
    EventKind.VERDICT: "verdict",
    EventKind.CLAIM: "claim",
}
_OPEN = frozenset({EventKind.BLOCK, EventKind.NEAR_MISS, EventKind.REFUSED, EventKind.VERDICT})
"""Kinds whose detail is shown, not collapsed."""

STYLE = """
ol.timeline { list-style: none; margin: 6px 0 0; padding: 0; border-left: 2px solid var(--line); }
ol.timeline > li { display: grid; grid-template-columns: 72px 92px 1fr; gap: 8px;
  padding: 4px 0 4px 10px; font-size: 0.86rem; border-bottom: 1px dashed var(--soft); }
ol.timeline .at { color: var(--muted); font-variant-numeric: tabular-nums; text-align: right; }
ol.timeline .kind { font-size: 0.72rem; text-transform: uppercase; letter-spacing: 0.04em;
  color: var(--muted); padding-top: 2px; }
ol.timeline .what { min-width: 0; overflow-wrap: anywhere; }
ol.timeline .what pre { max-height: 260px; margin-top: 4px; }
ol.timeline .what ul { margin: 4px 0; padding-left: 18px; font-family: var(--mono);
  font-size: 0.78rem; }
ol.timeline li.k-block { background: #eef8f1; }
ol.timeline li.k-block .kind { color: #157a42; font-weight: 700; }
li.t-good .title { color: #157a42; } li.t-bad .title { color: #b42318; }
li.t-warn .title { color: #8a4b00; }
ol.timeline li.k-end, ol.timeline li.k-verdict, ol.timeline li.k-claim { background: var(--soft); }
img.shot { display: block; max-width: min(100%, 480px); margin: 6px 0; border: 1px solid
  var(--line); border-radius: 6px; }
"""

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(data: bytes) -> str | None:
    """The image type the bytes are (PNG, JPEG, GIF, WebP), else None."""
    for magic, mime in _MAGIC:
        if data.startswith(magic):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _bytes(shot: Screenshot) -> bytes | None:
    if shot.data is not None:
        return shot.data if len(shot.data) <= SHOT_CAP else None
    if shot.path is None:
        return None
    try:
        if shot.path.stat().st_size > SHOT_CAP:
            return None
        with shot.path.open("rb") as f:
            return f.read(SHOT_CAP + 1)[:SHOT_CAP]
    except OSError:
        return None


def _is_image_file(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return image_type(f.read(16)) is not None
    except OSError:
        return False


@dataclass
class ShotBudget:
    """Bytes of screenshots a report may still inline."""

    left: int = REPORT_SHOT_BUDGET


def inlined(timeline: Timeline, budget: ShotBudget) -> dict[int, str]:
    """The data: URIs of the screenshots inlined, by event index (the run's last ones, while
    the report's budget lasts)."""
    out: dict[int, str] = {}
    for i in range(len(timeline.events) - 1, -1, -1):
        shot = timeline.events[i].screenshot
        if shot is None or len(out) >= SHOTS_PER_RUN:
            continue
        data = _bytes(shot)
        mime = image_type(data) if data else None
        if not (data and mime):
            continue
        uri = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        if len(uri) <= budget.left:
            budget.left -= len(uri)
            out[i] = uri
    return out


def _shot(event: Event, uri: str | None, href: str | None) -> Markup | None:
    shot = event.screenshot
    if shot is None:
        return None
    if uri is not None:
        return el("img", src=uri, alt=f"screenshot ({shot.name})", class_="shot", loading="lazy")
    # Only a raster image is linked: a page the agent wrote (an SVG, HTML) would run its script
    # once opened from the report.
    if href is not None and shot.path is not None and _is_image_file(shot.path):
        return el("div", el("a", f"screenshot: {shot.name}", href=href), class_="muted")
    return el("div", f"screenshot not shown: {shot.name} (not an image within limits)",
              class_="muted")  # fmt: skip


def offset(timeline: Timeline, event: Event) -> str:
    """'+12.3 s' from the run's first event, '' when the event has no time."""
    at = timeline.offset(event)
    return "" if at is None else f"+{at:.1f} s"


def _body(event: Event) -> Markup | None:
    if event.kind is EventKind.REQUESTS and event.lines:
        items = [el("li", line) for line in event.lines]
        if event.more:
            items.append(el("li", f"… and {event.more} more (data/traffic.har)", class_="muted"))
        return el("details", el("summary", "show them"), el("ul", items))
    if not event.detail:
        return None
    pre = el("pre", event.detail)
    return pre if event.kind in _OPEN else el("details", el("summary", "details"), pre)


def event_html(timeline: Timeline, event: Event, uri: str | None, href: str | None) -> Markup:
    """One <li> of the timeline."""
    classes = f"ev k-{event.kind.value}" + (f" t-{event.tone}" if event.tone else "")
    what = el(
        "div",
        el("div", event.title, class_="title"),
        _body(event),
        _shot(event, uri, href),
        class_="what",
    )
    kind = el("span", LABELS[event.kind], class_="kind")
    at = el("span", offset(timeline, event), class_="at")
    return el("li", at, kind, what, class_=classes, data_kind=event.kind.value)


def timeline_html(timeline: Timeline, href_of: dict[Path, str], uris: dict[int, str]) -> Markup:
    """The run's timeline; href_of: links to screenshot files, relative to the report; uris: the
    screenshots inlined (from inlined())."""
    items = []
    for i, event in enumerate(timeline.events):
        path = event.screenshot.path if event.screenshot else None
        items.append(event_html(timeline, event, uris.get(i), href_of.get(path) if path else None))
    notes = [el("li", n) for n in timeline.notes]
    hosts = [
        el("tr", el("td", host, class_="mono"), el("td", n, class_="num"))
        for host, n in timeline.hosts
    ]
    host_table = (
        el(
            "details",
            el("summary", f"Requests by host ({len(timeline.hosts)} hosts)"),
            el("table", el("tbody", hosts[:50]), class_="grid"),
        )
        if hosts
        else None
    )
    return Markup(
        el("ol", items, class_="timeline")
        + (el("ul", notes, class_="muted") if notes else "")
        + (host_table or "")
    )


__all__ = ["REPORT_SHOT_BUDGET", "SHOTS_PER_RUN", "SHOT_CAP", "STYLE", "ShotBudget",
           "event_html", "image_type", "inlined", "offset", "timeline_html"]  # fmt: skip
