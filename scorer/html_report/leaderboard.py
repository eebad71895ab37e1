"""The leaderboard (pass rate with an interval bar drawn in inline SVG) and a funnel per
model (N -> intercepted -> judge match), one row or card per (batch, model, harness)."""

from __future__ import annotations

from scorer.batch import NOT_JUDGED, AgentUsageTotals, JudgeUsageTotals
from scorer.html_report.load import EntryView, Report
from scorer.html_report.markup import Markup, el, percent
from scorer.html_report.matrix import entry_label

BAR_WIDTH = 120


def ranked(report: Report) -> list[EntryView]:
    """Every entry of every batch, best pass rate first (ties: more passes, then by name);
    judged entries before Stage-1-only ones, which have no pass rate (by interceptions)."""
    entries = [e for b in report.batches for e in b.entries]

    def key(e: EntryView) -> tuple[bool, float, int, float, str, str]:
        rate, passed = e.rate or 0.0, e.passed or 0
        return (not e.judged, -rate, -passed, -e.intercepted_rate, e.entry.model, e.entry.harness)

    return sorted(entries, key=key)


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


def _entry_cell(e: EntryView, several_batches: bool) -> Markup:
    """The model in bold, then what else names the entry: harness, dataset, batch."""
    c = e.entry
    names = [c.harness, c.dataset, *([e.batch.path.name] if several_batches else [])]
    parts = [el("span", name, class_="nowrap") for name in names]
    return el(
        "td",
        el("div", c.model, class_="model"),
        el(
            "div",
            [p for i, part in enumerate(parts) for p in ([" · "] if i else []) + [part]],
            " ",
            el("span", "stage 1 only", class_="tag") if not e.judged else None,
            class_="sub",
        ),
        class_="entry-name",
    )


def _rate_cell(e: EntryView) -> Markup:
    """The pass rate, its interval bar and the interval in words (not judged: none)."""
    if e.rate is None:
        return el("td", el("span", NOT_JUDGED, class_="rate"))
    interval = e.interval
    ci_text = f"{percent(interval[0])} – {percent(interval[1])}" if interval else ""
    return el(
        "td",
        el("span", percent(e.rate), class_="rate"),
        interval_bar(e.rate, interval),
        el("div", ci_text, class_="ci-text"),
        class_="rate-cell",
    )


def compact(n: int) -> str:
    """A token count short enough for a table cell: 950, 38.5k, 1.24M."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k"
    return f"{n / 1_000_000:.2f}M"


def _tokens_cell(used: bool, tokens_in: int, tokens_out: int, note: Markup | None = None) -> Markup:
    if not used:
        return el("td", "—", class_="num")
    exact = f"{tokens_in:,} in / {tokens_out:,} out"
    shown = f"{compact(tokens_in)} / {compact(tokens_out)}"
    return el("td", shown, note, class_="num", title=exact)


def _cost_cell(cost: float | None, why: str | None, kind: str) -> Markup:
    shown = f"${cost:.4f}" if cost is not None else "—"
    return el("td", shown, class_=f"num {kind}", title=why, data_cost=cost)


def _usage_cells(u: AgentUsageTotals) -> list[Markup]:
    """The agents' tokens and cost ("—" where unknown: no usage recorded, or no price), and
    "usage incomplete" when an agent also called a model API the proxy did not count."""
    unpriced = f"{u.runs_unpriced} runs' models have no price in models.yaml"
    note = None
    if u.runs_usage_incomplete:
        why = f"{u.runs_usage_incomplete} runs also called a model API the proxy did not count"
        note = el("span", "usage incomplete", class_="tag", title=why)
    tokens = _tokens_cell(bool(u.runs_with_usage), u.input_tokens, u.output_tokens, note)
    return [tokens, _cost_cell(u.cost_usd, unpriced if u.runs_unpriced else None, "agent-cost")]


def _judge_cells(u: JudgeUsageTotals) -> list[Markup]:
    """The judges' own tokens and cost ("—" without a verdict of ours, or without a price)."""
    unpriced = f"no price in models.yaml for {', '.join(u.unpriced)}" if u.unpriced else None
    return [
        _tokens_cell(bool(u.verdicts), u.input_tokens, u.output_tokens),
        _cost_cell(u.cost_usd, unpriced, "judge-cost"),
    ]


def leaderboard(entries: list[EntryView], several_batches: bool) -> Markup:
    """One row per (batch, model, harness), narrow enough for a 1280 px window with every column
    in view; data-* attributes carry the counts shown."""
    agents = any(e.entry.agent_usage.runs_with_usage for e in entries)
    judges = any(e.entry.judge_usage.verdicts for e in entries)
    heads = [("#", None), ("model", None), ("passed", "num"), ("pass rate, 95% interval", None)]
    heads += [("intercepted", "num"), ("judge cannot tell", "num"), ("judge errors", "num")]
    heads += [("infra", "num")]
    heads += [("agent tokens in / out", "num"), ("agent cost", "num")] if agents else []
    heads += [("judge tokens in / out", "num"), ("judge cost", "num")] if judges else []
    head = el("tr", [el("th", h, class_=cls) for h, cls in heads])
    rows = []
    for rank, e in enumerate(entries, 1):
        c = e.entry
        rows.append(
            el(
                "tr",
                el("td", rank, class_="rank"),
                _entry_cell(e, several_batches),
                el(
                    "td",
                    el("span", NOT_JUDGED if e.passed is None else e.passed, class_="passed"),
                    " / ",
                    el("span", c.n_total, class_="total"),
                    el("span", f"{c.n_missing} missing", class_="missing sub")
                    if c.n_missing
                    else None,
                    class_="num",
                ),
                _rate_cell(e),
                el("td", c.n_intercepted, class_="num"),
                el("td", c.n_judge_cannot_tell if e.judged else "—", class_="num"),
                el("td", c.n_judge_error if e.judged else "—", class_="num"),
                el("td", c.n_infra_failure, class_="num"),
                _usage_cells(c.agent_usage) if agents else None,
                _judge_cells(c.judge_usage) if judges else None,
                class_="entry",
                data_model=c.model,
                data_harness=c.harness,
                data_batch=e.batch.path.name,
                data_passed=e.passed,
                data_total=c.n_total,
                data_intercepted=c.n_intercepted,
                data_missing=c.n_missing,
                data_judge_match=c.n_judge_match,
                data_judge_cannot_tell=c.n_judge_cannot_tell,
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
                f"mismatch, {c.n_judge_cannot_tell} cannot tell, {c.n_judge_error} judge error",
                class_="drop",
            )
        )
    else:
        steps.append(el("div", "not judged (Stage 1 only)", class_="drop"))
    title = entry_label(e, several_batches)
    return el("div", el("h3", title), steps, class_="funnel", data_entry=title)


__all__ = ["compact", "funnel", "interval_bar", "leaderboard", "ranked"]
