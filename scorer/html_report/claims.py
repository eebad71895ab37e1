"""The agent's word against the record: per entry, how many counted runs claimed success, how
many of those the proxy intercepted and the judge passed, and the runs that claimed success
without passing (the agent said "done" and nothing, or the wrong thing, was committed)."""

from __future__ import annotations

from scorer.batch import NOT_JUDGED
from scorer.html_report.details import run_outcome
from scorer.html_report.leaderboard import ranked
from scorer.html_report.load import Report
from scorer.html_report.markup import Markup, el
from scorer.html_report.matrix import entry_label
from scorer.html_report.outcomes import outcome
from scorer.html_report.runfiles import RunView


def _overclaim(run: RunView) -> Markup:
    return el(
        "li",
        el("a", run.row.test_case or run.dir.name, href=f"#{run.anchor}", class_="mono"),
        f" — {outcome(run_outcome(run)).label}",
        class_="overclaim",
    )


def _did_not_pass(run: RunView, judged: bool) -> bool:
    """Known not to pass: not intercepted, or judged and not passed (an intercepted run that
    nobody judged has not failed either)."""
    return not run.row.intercepted or (judged and not run.row.final_pass)


def _all_clear(in_judged: int, in_not_judged: int) -> str:
    """The sentence shown when no run is listed, from the claims of success in judged and in
    not-judged entries: no claim, every claim passed, or (not judged) every claim intercepted."""
    if not in_judged and not in_not_judged:
        return "No run claimed success."
    if not in_not_judged:
        return "Every run that claimed success passed."
    if not in_judged:
        return "Every run that claimed success was intercepted (not judged: none has passed yet)."
    return "Every run that claimed success passed, or was intercepted where not judged."


def claims(report: Report) -> Markup | None:
    """The claims section, or None when no run recorded an agent claim (no harness runs)."""
    several = len(report.batches) > 1
    rows, listed = [], []
    n_claimed = {True: 0, False: 0}  # claims of success, in judged and not-judged entries
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
        n_claimed[e.judged] += len(claimed)
        over = [r for r in claimed if _did_not_pass(r, e.judged)]
        if over:
            listed += [el("h4", label), el("ul", [_overclaim(r) for r in over])]
    if not rows:
        return None
    heads = ["", "runs with a result", "claimed success", "of which intercepted", "of which passed"]
    head = el("tr", [el("th", h, class_="num" if h else None) for h in heads])
    table = el("table", el("thead", head), el("tbody", rows), class_="grid claims")
    none = el("p", _all_clear(n_claimed[True], n_claimed[False]), class_="muted")
    return el(
        "section",
        el("h2", "The agent's claim"),
        el(
            "p",
            "What the agent said at the end (its harness's own result) against what the proxy "
            "recorded. Runs that claimed success and did not pass (not intercepted, or "
            "judged and not passed) are listed.",
            class_="note",
        ),
        el("div", table, class_="table-wrap"),
        listed or none,
        class_="card",
        id="claims",
    )


__all__ = ["claims"]
