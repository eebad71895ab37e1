"""Per run, a <details> section: what the agent was asked, what it sent, what the judges said.

Everything here came from an agent or a website (instruction text aside): it is escaped by el(),
and the only links are relative file links built by runfiles.file_href and in-page anchors.
"""

from __future__ import annotations

import json
from typing import Any

from proxy_addon.records import JudgeVerdict
from scorer.html_report.generic import value_html
from scorer.html_report.markup import Markup, el
from scorer.html_report.outcomes import outcome, outcome_key
from scorer.html_report.runfiles import JudgeView, RunView
from scorer.html_report.runpage import timeline_html

PRETTY_CAP = 16_000
"""Characters of a pretty-printed request shown; the file holds the rest."""


def pretty(value: Any) -> str:
    """JSON, indented, non-ASCII kept, cut at PRETTY_CAP with a visible marker."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if len(text) > PRETTY_CAP:
        return f"{text[:PRETTY_CAP]}\n… [cut: {len(text)} characters in all; see the file]"
    return text


def run_outcome(run: RunView) -> str:
    """The run's outcome key (see outcomes.py)."""
    return outcome_key(run.row, run.stop_reason)


def swatch(key: str) -> Markup:
    """The coloured square of an outcome, with its glyph."""
    o = outcome(key)
    return el("span", o.glyph, class_=f"sw o-{o.key}", title=o.label, aria_hidden="true")


_VERDICTS = {
    JudgeVerdict.MATCH: ("match", "v-true"),
    JudgeVerdict.NO_MATCH: ("mismatch", "v-false"),
    JudgeVerdict.CANNOT_TELL: ("cannot tell", "v-unsure"),
}


def _verdict(verdict: JudgeVerdict | None) -> Markup:
    if verdict is None:
        return el("span", "no verdict", class_="verdict v-none")
    text, cls = _VERDICTS[verdict]
    return el("span", text, class_=f"verdict {cls}")


def _judges(judges: list[JudgeView]) -> Markup:
    if not judges:
        return el("p", "No judge verdict (not judged, or not intercepted).", class_="muted")
    rows = [
        el(
            "tr",
            el("td", j.judge_model or el("span", "unnamed", class_="muted"), class_="model"),
            el("td", j.rubric or "—"),
            el("td", _verdict(j.verdict)),
            el(
                "td",
                j.reason or "",
                el("div", f"could not see: {j.missing}", class_="v-unsure") if j.missing else None,
                el("div", j.error, class_="v-none") if j.error else None,
            ),
            el("td", j.file, class_="mono muted"),
        )
        for j in judges
    ]
    head = el("tr", [el("th", h) for h in ("judge", "rubric", "verdict", "reason", "file")])
    return el("table", el("thead", head), el("tbody", rows), class_="grid")


def _claim(run: RunView) -> Markup | None:
    claim = run.agent_claim
    if claim is None:
        return None
    said = {True: "claims success", False: "claims failure", None: "no claim of success"}
    return Markup(el("strong", said[claim.success]) + (el("div", claim.text) if claim.text else ""))


_COUNTED = {"counted": "yes", "rerun": "no: an older re-run of the task", "extra": "no: extra"}


def _recheck(value: dict[str, Any] | None) -> str | None:
    if not value:
        return None
    reasons = value.get("reasons") or []
    status = str(value.get("status", "?"))
    return f"{status}: {'; '.join(map(str, reasons))}" if reasons else status


def _facts(run: RunView) -> Markup:
    row, meta = run.row, run.meta
    harness = row.harness
    if harness and run.harness_version:
        harness = f"{harness} {run.harness_version}"
    stop = run.stop_reason
    if stop and run.stop_description:
        stop = f"{stop}: {run.stop_description}"
    duration = meta.duration_seconds if meta else None
    notes = row.notes + run.notes
    facts: list[tuple[str, Any]] = [
        ("outcome", outcome(run_outcome(run)).label),
        ("counted", _COUNTED.get(row.status, row.status)),
        ("task id", row.task_id),
        ("model", row.model),
        ("harness", harness),
        ("stop reason", stop),
        ("infra reason", row.infra_reason),
        ("reference category", row.reference_category),
        ("duration", f"{duration:.1f} s" if duration else None),
        ("agent's claim", _claim(run)),
        ("Stage-1 re-check", _recheck(row.recheck)),
        ("judge error", row.judge_error),
        ("notes", el("ul", [el("li", n) for n in notes]) if notes else None),
    ]
    items = [(el("dt", k), el("dd", v)) for k, v in facts if v not in (None, "")]
    return el("dl", items, class_="facts")


def _near_misses(run: RunView) -> Markup:
    if run.requests_logged is None:
        return el("p", "No request log (data/requests.jsonl).", class_="muted")
    if not run.near_misses:
        return el("p", f"None among {run.requests_logged} logged requests.", class_="muted")
    items = [
        el("li", el("code", f"{m.method} {m.url}"), el("div", "; ".join(m.reasons)))
        for m in run.near_misses
    ]
    more = run.near_miss_count - len(run.near_misses)
    tail = el("p", f"… and {more} more in data/requests.jsonl", class_="muted") if more else None
    return Markup(el("ul", items, class_="misses") + (tail or ""))


def _timeline(run: RunView) -> Markup | None:
    if run.timeline is None:
        return None
    shown = timeline_html(run.timeline, run.shot_hrefs, run.shot_uris)
    return Markup(el("h4", "Timeline") + shown)


def run_details(run: RunView) -> Markup:
    """One run's <details> block, closed; run.anchor is the id of its body."""
    key = run_outcome(run)
    row = run.row
    summary = el(
        "summary",
        swatch(key),
        el("span", row.test_case or row.task_id or run.dir.name, class_="case"),
        el("span", f"{row.model or '?'} · {row.harness or '?'}", class_="muted"),
        el("span", outcome(key).label, class_="tag"),
        el("span", "re-run, not counted", class_="tag warn") if row.status == "rerun" else None,
        el("span", "extra, not counted", class_="tag warn") if row.status == "extra" else None,
    )
    request = (
        el("pre", pretty(run.request), class_="request")
        if run.request is not None
        else el("p", "No request was intercepted.", class_="muted")
    )
    body = [
        _facts(run),
        _timeline(run),
        el("h4", "Instruction"),
        el("div", run.instruction, class_="instruction")
        if run.instruction
        else el("p", "No instruction found (task.json, run-meta.json).", class_="muted"),
        el("h4", "Judges"),
        _judges(run.judges),
        el("h4", "Recorded request (secrets redacted)"),
        request,
        el(
            "details",
            el("summary", "Expected request (eval_schema)"),
            el("pre", pretty(run.schema)),
        )
        if run.schema
        else None,
        el("h4", "Near misses"),
        _near_misses(run),
        [el("h4", "Agent usage"), value_html(run.agent_usage.model_dump(mode="json"))]
        if run.agent_usage
        else None,
        el("h4", "Files"),
        el("ul", [el("li", el("a", name, href=href)) for name, href in run.files], class_="files")
        if run.files
        else el("p", "No files found in the run directory.", class_="muted"),
    ]
    return el(
        "details",
        summary,
        # The id sits inside the closed <details>: a link to it opens it (fragment navigation
        # expands the details around its target; no script needed).
        el("div", body, class_="run-body", id=run.anchor),
        class_="run",
        data_outcome=key,
        data_run=run.row.run_dir,
    )


__all__ = ["pretty", "run_details", "run_outcome", "swatch"]
