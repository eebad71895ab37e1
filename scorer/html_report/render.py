"""The report page: leaderboard with interval bars, funnels, the task x model matrix, judge
agreement and every run's details, in one self-contained HTML document (no script, no request).
"""

from __future__ import annotations

from pathlib import Path

from scorer.html_report.details import run_details
from scorer.html_report.generic import value_html
from scorer.html_report.load import BatchView, EntryView, Report
from scorer.html_report.markup import Markup, el, percent
from scorer.html_report.matrix import entry_label, legend, matrix
from scorer.html_report.style import stylesheet

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'"
)
"""Defence in depth: even markup that escaped escaping could load or run nothing."""
BAR_WIDTH = 180


def ranked(report: Report) -> list[EntryView]:
    """Every entry of every batch, best pass rate first (ties: more passes, then by name);
    judged entries before Stage-1-only ones, whose rate is only an upper bound of a pass rate."""
    entries = [e for b in report.batches for e in b.entries]
    return sorted(
        entries, key=lambda e: (not e.judged, -e.rate, -e.passed, e.entry.model, e.entry.harness)
    )


def interval_bar(rate: float, interval: tuple[float, float] | None) -> Markup:
    """An inline SVG: a 0-100% track, the 95% interval as a band, the rate as a dot."""
    w = BAR_WIDTH
    parts = [el("rect", x=0, y=8, width=w, height=2, rx=1, fill="#e4e7ec")]
    parts += [
        el("line", x1=w * t, x2=w * t, y1=5, y2=13, stroke="#d0d5dd", stroke_width=1)
        for t in (0.25, 0.5, 0.75)
    ]
    if interval is not None:
        low, high = interval
        parts.append(
            el(
                "rect",
                x=f"{w * low:.1f}",
                y=3,
                width=f"{max(w * (high - low), 2):.1f}",
                height=12,
                rx=4,
                fill="#c9d7fb",
            )
        )
    parts.append(el("circle", cx=f"{w * rate:.1f}", cy=9, r=4.5, fill="#2f5bd3"))
    text = f"{percent(rate)}" + (
        f", 95% interval {percent(interval[0])} to {percent(interval[1])}" if interval else ""
    )
    return el(
        "svg",
        el("title", text),
        parts,
        class_="ci",
        width=w,
        height=18,
        viewBox=f"0 0 {w} 18",
        role="img",
        aria_label=text,
    )


def leaderboard(entries: list[EntryView], several_batches: bool) -> Markup:
    """One row per (batch, model, harness); data-* attributes carry the counts shown."""
    heads = ["#", "model", "harness", "dataset"] + (["batch"] if several_batches else [])
    heads += ["passed", "pass rate", "95% interval", "intercepted", "judge errors", "infra"]
    numeric = {"passed", "pass rate", "intercepted", "judge errors", "infra"}
    head = el("tr", [el("th", h, class_="num" if h in numeric else None) for h in heads])
    rows = []
    for rank, e in enumerate(entries, 1):
        c = e.entry
        interval = e.interval
        ci_text = f"{percent(interval[0])} – {percent(interval[1])}" if interval else ""
        rows.append(
            el(
                "tr",
                el("td", rank, class_="rank"),
                el("td", c.model, class_="model"),
                el(
                    "td",
                    c.harness,
                    " ",
                    el("span", "stage 1 only", class_="tag") if not e.judged else None,
                ),
                el("td", c.dataset),
                el("td", e.batch.path.name, class_="muted nowrap") if several_batches else None,
                el(
                    "td",
                    el("span", e.passed, class_="passed"),
                    " / ",
                    el("span", c.n_total, class_="total"),
                    class_="num",
                ),
                el("td", percent(e.rate), class_="num rate"),
                el("td", interval_bar(e.rate, interval), el("div", ci_text, class_="ci-text")),
                el("td", c.n_intercepted, class_="num"),
                el("td", c.n_judge_error if e.judged else "—", class_="num"),
                el("td", c.n_infra_failure, class_="num"),
                class_="entry",
                data_model=c.model,
                data_harness=c.harness,
                data_batch=e.batch.path.name,
                data_passed=e.passed,
                data_total=c.n_total,
                data_intercepted=c.n_intercepted,
                data_judge_match=c.n_judge_match,
                data_judge_error=c.n_judge_error,
            )
        )
    table = el("table", el("thead", head), el("tbody", rows), class_="grid leaderboard")
    return el("div", table, class_="table-wrap")


def _step(name: str, n: int, total: int, fill: str, kind: str) -> Markup:
    width = 100 * n / total if total else 0
    return el(
        "div",
        el("span", name),
        el("div", el("div", class_=f"fill {fill}", style=f"width: {width:.1f}%"), class_="track"),
        el(
            "span",
            el("b", n, data_step=kind),
            f" {percent(n / total if total else 0, 0)}",
            class_="num",
        ),
        class_="step",
    )


def funnel(e: EntryView, several_batches: bool) -> Markup:
    """N -> intercepted -> judge match for one entry, with what was lost at each step."""
    c = e.entry
    lost = c.n_total - c.n_intercepted
    steps = [
        _step("tasks (N)", c.n_total, c.n_total, "n", "total"),
        _step("intercepted", c.n_intercepted, c.n_total, "i", "intercepted"),
        el(
            "div",
            f"−{lost}: {c.n_model_not_intercepted} not intercepted, "
            f"{c.n_infra_failure} infra, {c.n_missing} missing",
            class_="drop",
        ),
    ]
    if e.judged:
        steps.append(_step("judge match", c.n_judge_match, c.n_total, "p", "judge_match"))
        steps.append(
            el(
                "div",
                f"−{c.n_intercepted - c.n_judge_match}: {c.n_judge_mismatch} "
                f"mismatch, {c.n_judge_error} judge error",
                class_="drop",
            )
        )
    else:
        steps.append(el("div", "not judged (Stage 1 only)", class_="drop"))
    title = entry_label(e, several_batches)
    return el("div", el("h3", title), steps, class_="funnel", data_entry=title)


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


def _header(report: Report, title: str) -> Markup:
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
        ("runs", "Runs"),
    ]
    if not any(b.agreement for b in report.batches):
        toc.remove(("agreement", "Judge agreement"))
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


def render_report(report: Report, title: str = "ClawBench report") -> str:
    """The whole HTML document."""
    entries = ranked(report)
    several = len(report.batches) > 1
    by_entry = [
        [
            el("h3", entry_label(e, several)),
            [
                run_details(r)
                for r in e.batch.runs
                if (r.row.model or "unknown", r.row.harness or "unknown")
                == (e.entry.model, e.entry.harness)
            ],
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
        Markup(f"<style>{stylesheet()}</style>"),
    )
    body = el("body", el("main", _header(report, title), sections, _footer(report)))
    return f"<!doctype html>\n{el('html', head, body, lang='en')}\n"


def write_report(report: Report, out: Path, title: str = "ClawBench report") -> Path:
    """Render and write the report to out (UTF-8); returns out."""
    out.write_text(render_report(report, title), encoding="utf-8")
    return out


__all__ = ["CSP", "interval_bar", "leaderboard", "ranked", "render_report", "write_report"]
