"""`clawbench-report RUN_DIR`: one run's timeline as plain text, for a terminal or a CI log.

The same timeline as the report's run page. Agent-written text could carry terminal escapes
(colours, cursor moves, a title change, a hyperlink) or bidirectional overrides that make a log
lie: every control and format character is printed as its escape (`\\x1b`, `\\u202e`) instead.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from scorer.batch import TaskRow, load_run
from scorer.html_report.details import run_outcome
from scorer.html_report.outcomes import outcome
from scorer.html_report.runfiles import RunView, load_run_view
from scorer.html_report.runpage import LABELS
from scorer.html_report.timeline import Event, EventKind, Timeline

DETAIL_LINES = 12
"""Lines of an event's detail printed (the block's body, a near miss's reasons, a verdict)."""
_DETAILED = frozenset(
    {EventKind.BLOCK, EventKind.NEAR_MISS, EventKind.REFUSED, EventKind.VERDICT, EventKind.CLAIM}
)
_KEPT = frozenset({"\t"})


def safe(text: str) -> str:
    """text with control, format and line/paragraph separator characters as escapes."""
    out = []
    for ch in text:
        if ch not in _KEPT and unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def single_run_view(run_dir: Path) -> RunView:
    """A run directory read as the report reads a run (no summary needed)."""
    rec = load_run(run_dir)
    meta = rec.meta
    row = TaskRow(
        status="counted",
        task_id=meta.task_id if meta else None,
        test_case=meta.test_case if meta else None,
        intercepted=bool(meta and meta.intercepted),
        result_category=meta.result_category if meta else None,
        final_pass=bool(meta and meta.final_pass),
        model=meta.model if meta else None,
        harness=meta.harness if meta else None,
        run_dir=run_dir.name,
    )
    return load_run_view(run_dir, row, run_dir)


def _event_lines(timeline: Timeline, event: Event) -> list[str]:
    at = timeline.offset(event)
    when = f"+{at:.1f} s" if at is not None else ""
    lines = [f"{when:>9}  {LABELS[event.kind]:<11} {safe(event.title)}"]
    pad = " " * 23
    if event.kind in _DETAILED and event.detail:
        detail = event.detail.splitlines()
        lines += [pad + safe(line) for line in detail[:DETAIL_LINES]]
        if len(detail) > DETAIL_LINES:
            more = len(detail) - DETAIL_LINES
            lines.append(f"{pad}… {more} more line{'s' if more > 1 else ''}")
    if event.screenshot is not None:
        lines.append(f"{pad}[screenshot: {safe(event.screenshot.name)}]")
    return lines


def timeline_text(view: RunView) -> str:
    """The run's header (case, model, harness, outcome) and its timeline, one event a line."""
    row = view.row
    head = [
        safe(str(view.dir)),
        safe(f"  task {row.test_case or '?'} · model {row.model or '?'} · harness {row.harness}"),
        f"  outcome: {outcome(run_outcome(view)).label}",
        "",
    ]
    body: list[str] = []
    timeline = view.timeline
    if timeline is not None:
        for event in timeline.events:
            body += _event_lines(timeline, event)
        body += [f"  note: {safe(n)}" for n in timeline.notes]
    body += [f"  note: {safe(n)}" for n in view.notes]
    return "\n".join(head + body) + "\n"


__all__ = ["DETAIL_LINES", "safe", "single_run_view", "timeline_text"]
