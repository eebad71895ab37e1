"""The report page: leaderboard with interval bars, funnels, the task x model matrix, judge
agreement and every run's details, in one self-contained HTML document (no script, no request).
"""

from __future__ import annotations

from pathlib import Path

from proxy_addon.records import write_bytes_atomic
from scorer.calibrate import CalibrationResult
from scorer.html_report.calibration import calibration_section
from scorer.html_report.claims import claims
from scorer.html_report.details import run_details
from scorer.html_report.generic import value_html
from scorer.html_report.leaderboard import funnel, leaderboard, ranked
from scorer.html_report.load import BatchView, Report
from scorer.html_report.markup import Markup, el
from scorer.html_report.matrix import entry_label, legend, matrix
from scorer.html_report.runpage import STYLE as RUN_PAGE_STYLE
from scorer.html_report.style import stylesheet

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)
"""Defence in depth: even markup that escaped escaping could load or run nothing."""


def agreement(batches: list[BatchView], several: bool) -> Markup | None:
    """The agreement section of every batch that has one (its keys shown as they are)."""
    parts = []
    for b in batches:
        if b.agreement is None:
            continue
        links: dict[str, str] = {}
        for run in b.runs:
            if run.row.run_dir:
                links[run.row.run_dir] = run.anchor
                links.setdefault(run.dir.name, run.anchor)
        judges = el("p", "judges: ", ", ".join(b.judges), class_="muted") if b.judges else None
        parts += [
            el("h3", b.path.name) if several else None,
            judges,
            value_html(b.agreement, links),
        ]
    if not parts:
        return None
    note = (
        "How far the judges agree: per-judge pass rates, Cohen's and Fleiss' kappa, and the "
        "runs they disagree on."
    )
    return _card("agreement", "Judge agreement", note, parts)


def _card(anchor: str, title: str, note: str, body: object) -> Markup:
    return el(
        "section", el("h2", title), el("p", note, class_="note"), body, class_="card", id=anchor
    )


def _calibration(report: Report, result: CalibrationResult | None) -> Markup | None:
    if result is None:
        return None
    note = (
        "How the judge did on a labelled set (clawbench-score calibrate): kappa and rates with "
        "their 95% intervals, the gates, and how many points its errors move a pass rate."
    )
    return _card(
        "calibration", "Judge calibration", note, calibration_section(result, report.batches)
    )


def _header(report: Report, title: str, calibrated: bool = False) -> Markup:
    runs = sum(len(b.runs) for b in report.batches)
    models = len({e.entry.model for b in report.batches for e in b.entries})
    judges = sorted({j for b in report.batches for j in b.judges})
    sub = f"{len(report.batches)} batch(es) · {runs} runs · {models} model(s)"
    sub += f" · judged by {', '.join(judges)}" if judges else " · Stage 1 only"
    toc = [
        ("leaderboard", "Leaderboard"),
        ("funnels", "Funnels"),
        ("matrix", "Task × model"),
        ("agreement", "Judge agreement"),
        ("calibration", "Judge calibration"),
        ("claims", "Agent's claim"),
        ("runs", "Runs"),
    ]
    if not any(b.agreement for b in report.batches):
        toc.remove(("agreement", "Judge agreement"))
    if not calibrated:
        toc.remove(("calibration", "Judge calibration"))
    if not any(r.agent_claim for b in report.batches for r in b.runs):
        toc.remove(("claims", "Agent's claim"))
    nav = el("nav", [el("a", text, href=f"#{a}") for a, text in toc], class_="toc")
    problems = (
        el(
            "div",
            el("strong", "Not included: "),
            el("ul", [el("li", p) for p in report.problems]),
            class_="problems",
        )
        if report.problems
        else None
    )
    return Markup(
        el("header", el("h1", title), el("p", sub, class_="sub"), nav, class_="top")
        + (problems or "")
    )


def _footer(report: Report) -> Markup:
    items = []
    for b in report.batches:
        prov = b.summary.provenance
        bits = ", ".join(f"{k} {v}" for k, v in sorted(prov.items()) if v)
        items.append(el("li", el("span", str(b.path), class_="mono"), f" — {bits}" if bits else ""))
    return el(
        "footer",
        el("p", "Batches (summaries written by clawbench-score):"),
        el("ul", items),
        el("p", "Self-contained: this page loads nothing and runs no script."),
    )


def render_report(
    report: Report, title: str = "ClawBench report", calibration: CalibrationResult | None = None
) -> str:
    """The whole HTML document (with the judge's calibration when one is given)."""
    entries = ranked(report)
    several = len(report.batches) > 1
    by_entry = [
        [
            el("h3", entry_label(e, several)),
            [run_details(r) for r in e.runs],
        ]
        for e in entries
    ]
    sections = [
        _card(
            "leaderboard",
            "Leaderboard",
            "Pass rate with its Wilson 95% interval (band); "
            "the dot is the rate. Rows without a judge count Stage 1 (intercepted) only.",
            leaderboard(entries, several),
        ),
        _card(
            "funnels",
            "Funnel per model",
            "From the tasks in N to the runs the proxy intercepted, to the runs the judge matched.",
            el("div", [funnel(e, several) for e in entries], class_="funnels"),
        ),
        _card(
            "matrix",
            "Task × model",
            "The outcome of the run that counts, per task and model. "
            "Click a cell for the run's details.",
            [legend(), matrix(report, entries)],
        ),
        agreement(report.batches, several),
        _calibration(report, calibration),
        claims(report),
        _card(
            "runs",
            "Runs",
            "Every run: instruction, recorded request, verdicts, near misses "
            "and files. Closed by default.",
            by_entry,
        ),
    ]
    head = el(
        "head",
        el("meta", charset="utf-8"),
        el("meta", http_equiv="Content-Security-Policy", content=CSP),
        el("meta", name="viewport", content="width=device-width, initial-scale=1"),
        el("meta", name="referrer", content="no-referrer"),
        el("title", title),
        el("link", rel="icon", href="data:,"),
        Markup(f"<style>{stylesheet()}{RUN_PAGE_STYLE}</style>"),
    )
    header = _header(report, title, calibration is not None)
    body = el("body", el("main", header, sections, _footer(report)))
    return f"<!doctype html>\n{el('html', head, body, lang='en')}\n"


def write_report(
    report: Report,
    out: Path,
    title: str = "ClawBench report",
    calibration: CalibrationResult | None = None,
) -> Path:
    """Render and write the report to out (UTF-8, atomically: never half a page); returns out."""
    page = render_report(report, title, calibration).encode("utf-8")
    write_bytes_atomic(out, page, durable=False)
    return out


__all__ = ["CSP", "render_report", "write_report"]
