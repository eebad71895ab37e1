"""The agent's word against the record: per entry, how many counted runs claimed success, how
many of those the proxy intercepted and the judge passed, and the runs that claimed success
without passing (the agent said "done" and nothing, or the wrong thing, was committed)."""

from __future__ import annotations

from scorer.batch.rescore_summary import NOT_JUDGED
from scorer.html_report.leaderboard import ranked
from scorer.html_report.load import Report
from scorer.html_report.markup import Markup, el
from scorer.html_report.matrix import entry_label
from scorer.html_report.runfiles import RunView


def _overclaim(run: RunView) -> Markup:
    row = run.row
    what = row.result_category or ("intercepted" if row.intercepted else "not intercepted")
    return el(
        "li",
        el("a", row.test_case or run.dir.name, href=f"#{run.anchor}", class_="mono"),
        f" — {what}",
        class_="overclaim",
    )


def claims(report: Report) -> Markup | None:
    """The claims section, or None when no run recorded an agent claim (no harness runs)."""
    several = len(report.batches) > 1
    rows, listed = [], []
    for e in ranked(report):
        runs = [r for r in e.runs if r.row.status == "counted" and r.agent_claim is not None]
        claimed = [r for r in runs if r.agent_claim and r.agent_claim.success is True]
        if not runs:
            continue
        intercepted = sum(r.row.intercepted for r in claimed)
        passed = sum(r.row.final_pass for r in claimed) if e.judged else NOT_JUDGED
        label = entry_label(e, several)
        cells = [label, len(runs), len(claimed), intercepted, passed]
        tds = [el("td", c, class_="num" if i else None) for i, c in enumerate(cells)]
        rows.append(el("tr", tds))
        over = [r for r in claimed if not r.row.final_pass]
        if over:
            listed += [el("h4", label), el("ul", [_overclaim(r) for r in over])]
    if not rows:
        return None
    heads = ["", "runs with a claim", "claimed success", "of which intercepted", "of which passed"]
    head = el("tr", [el("th", h, class_="num" if h else None) for h in heads])
    table = el("table", el("thead", head), el("tbody", rows), class_="grid claims")
    none = el("p", "Every run that claimed success passed.", class_="muted")
    return el(
        "section",
        el("h2", "The agent's claim"),
        el(
            "p",
            "What the agent said at the end (its harness's own result) against what the proxy "
            "recorded. Runs that claimed success and did not pass are listed.",
            class_="note",
        ),
        el("div", table, class_="table-wrap"),
        listed or none,
        class_="card",
        id="claims",
    )


__all__ = ["claims"]
