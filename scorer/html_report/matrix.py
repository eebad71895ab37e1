"""The task x model matrix: one row per task, one column per (batch, model, harness) entry,
each cell coloured by the outcome of the run that counts (re-runs and extra runs are left out,
so the cells add up to the summary's counts)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from proxy_addon.records import Category
from scorer.batch import NOT_JUDGED
from scorer.html_report.details import run_outcome, swatch
from scorer.html_report.load import EntryView, Report, row_entry
from scorer.html_report.markup import Markup, el
from scorer.html_report.outcomes import INTERCEPTED, OUTCOMES, outcome

Cell = tuple[str, str | None]  # (outcome key, anchor of the run's details or None)


def legend() -> Markup:
    """Every outcome's swatch and label."""
    items = [el("span", swatch(o.key), o.label, class_="item") for o in OUTCOMES]
    return el("div", items, class_="legend", role="list")


def entry_label(entry: EntryView, several_batches: bool) -> str:
    """model · harness, and the batch's directory name when the report spans several batches."""
    text = f"{entry.entry.model} · {entry.entry.harness}"
    return f"{text} · {entry.batch.path.name}" if several_batches else text


def cells(report: Report) -> dict[tuple[str, str, str], dict[str, Cell]]:
    """Per entry key, per task: the counted run's outcome (and anchor), or missing."""
    out: dict[tuple[str, str, str], dict[str, Cell]] = {}
    for batch in report.batches:
        keys = {(e.entry.model, e.entry.harness): e.key for e in batch.entries}
        for run in batch.runs:
            row = run.row
            key = keys.get(row_entry(row))
            if key is None or row.status != "counted":
                continue
            task = row.test_case or str(row.task_id or run.dir.name)
            out.setdefault(key, {})[task] = (run_outcome(run), run.anchor)
        for row in batch.summary.tasks:
            key = keys.get(row_entry(row))
            if key is not None and row.status == "missing" and row.test_case:
                out.setdefault(key, {}).setdefault(row.test_case, ("missing", None))
    return out


def _head(entry: EntryView, label: str, several_batches: bool) -> Markup:
    """A rotated column head: the model, then harness (and batch) in a smaller second line."""
    rest = entry.entry.harness + (f" · {entry.batch.path.name}" if several_batches else "")
    return el(
        "th",
        el("span", entry.entry.model, class_="m"),
        el("span", rest, class_="h"),
        class_="col",
        title=label,
    )


def _cell(task: str, label: str, cell: Cell | None) -> Markup:
    if cell is None:  # the entry ran another corpus: no run and not missing either
        return el("td", "", class_="cell", title=f"{task} · {label}: not in this batch")
    key, anchor = cell
    o = outcome(key)
    inner = el("a", o.glyph, href=f"#{anchor}") if anchor else o.glyph
    return el(
        "td", inner, class_=f"cell o-{key}", title=f"{task} · {label}: {o.label}", data_outcome=key
    )


def _task_passes(entries: Sequence[EntryView], found: Sequence[Cell | None]) -> Markup:
    """A task's passes over its runs in judged entries only: a Stage-1-only entry has no passes
    to count, and counting its runs would show 0/N for a batch nobody judged."""
    judged = [c for e, c in zip(entries, found, strict=True) if e.judged and c is not None]
    if not judged:
        return el("td", "—", class_="count num", title=NOT_JUDGED, data_passed=NOT_JUDGED)
    passes = sum(1 for key, _ in judged if key == Category.PASSED)
    left_out = sum(c is not None for c in found) - len(judged)
    title = f"over the judged entries' runs ({left_out} not judged)" if left_out else None
    return el("td", f"{passes}/{len(judged)}", class_="count num", title=title, data_passed=passes)


def matrix(report: Report, entries: Sequence[EntryView]) -> Markup:
    """The matrix table (in a scrolling box), columns in leaderboard order."""
    grid = cells(report)
    several = len(report.batches) > 1
    labels = [entry_label(e, several) for e in entries]
    tasks = sorted({task for column in grid.values() for task in column})
    head = el(
        "tr",
        el("th", "task", class_="task"),
        [_head(e, label, several) for e, label in zip(entries, labels, strict=True)],
        el("th", "passed", class_="col"),
    )
    rows = []
    for task in tasks:
        found = [grid.get(e.key, {}).get(task) for e in entries]
        rows.append(
            el(
                "tr",
                el("th", task, class_="task", title=task),
                [_cell(task, label, c) for label, c in zip(labels, found, strict=True)],
                _task_passes(entries, found),
                data_task=task,
            )
        )
    passed, intercepted = [], []
    for e in entries:
        counts = Counter(key for key, _ in grid.get(e.key, {}).values())
        shown = counts[Category.PASSED] if e.judged else NOT_JUDGED
        passed.append(el("th", shown, title="runs passed", class_="num", data_passed=shown))
        n = sum(counts[k] for k in INTERCEPTED)
        intercepted.append(el("th", n, title="runs intercepted", class_="num", data_intercepted=n))
    foot = [
        el("tr", el("th", "intercepted", class_="task"), intercepted, el("th", "")),
        el("tr", el("th", "passed", class_="task"), passed, el("th", "")),
    ]
    table = el("table", el("thead", head), el("tbody", rows), el("tfoot", foot), class_="matrix")
    return el("div", table, class_="matrix-wrap")


__all__ = ["cells", "entry_label", "legend", "matrix"]
