"""The terminal table of a scored batch: one row per entry (model, harness), a total row when
there are several, and the columns the batch needs (a column that is zero for every entry, like
re-runs or missing tasks in most batches, is left out).

It is drawn from the summary as written to rescore-summary.json (a plain dict), so what the
table shows is what the file holds. When the table does not fit the console's width (a pipe is
80 columns), the same cells are printed as a list, one block per entry, each line packed with
whole `label: value` items: nothing is cut or wrapped inside a word.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from scorer.batch import NOT_JUDGED

Row = dict[str, Any]


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}%"


def _rate(rate: float | None, interval: list[float] | None) -> str:
    """A rate with its 95% interval: 33.3% (9.7–70.0)."""
    if rate is None:
        return "-"
    if not interval:
        return _pct(rate)
    return f"{_pct(rate)} ({100 * interval[0]:.1f}–{100 * interval[1]:.1f})"


def _count(value: int | None) -> str:
    """A count; None is a count that does not exist (passed without a judge)."""
    return NOT_JUDGED if value is None else str(value)


def _tokens(usage: dict[str, Any], present: str) -> str:
    if not usage.get(present):
        return "-"
    return f"{usage['input_tokens']:,} / {usage['output_tokens']:,}"


def _cost(usage: dict[str, Any]) -> str:
    cost = usage.get("cost_usd")
    return "-" if cost is None else f"${cost:.4f}"


@dataclass(frozen=True)
class Column:
    """One column: its head, its cell of a row, and whether the batch needs it."""

    head: str
    cell: Callable[[Row], str]
    needed: Callable[[list[Row], bool], bool] = lambda rows, judged: True


def _nonzero(key: str) -> Callable[[list[Row], bool], bool]:
    return lambda rows, judged: any(r.get(key) for r in rows)


def _judged_only(rows: list[Row], judged: bool) -> bool:
    return judged


def _unjudged_among_judged(rows: list[Row], judged: bool) -> bool:
    """Runs left unjudged in a judged batch (without a judge, every interception is)."""
    return judged and any(r.get("n_unjudged") for r in rows)


def _used(block: str, present: str) -> Callable[[list[Row], bool], bool]:
    """Whether any row's usage block (agent_usage, judge_usage) recorded anything."""
    return lambda rows, judged: any((r.get(block) or {}).get(present) for r in rows)


def _key(key: str) -> Callable[[Row], str]:
    return lambda r: _count(r.get(key, 0))


def _pass_rate(r: Row) -> str:
    rate = r.get("pass_rate_with_judge")
    return NOT_JUDGED if rate is None else _rate(rate, r.get("pass_rate_with_judge_ci"))


COLUMNS = (
    Column("N", _key("n_total")),
    Column("passed", _key("n_passed")),
    Column("pass rate\n(95% CI)", _pass_rate, _judged_only),
    Column("intercepted", _key("n_intercepted")),
    Column(
        "Stage-1 rate\n(95% CI)",
        lambda r: _rate(r["pass_rate_stage1_only"], r.get("pass_rate_stage1_only_ci")),
    ),
    Column("body\nunread", _key("n_body_unverified"), _nonzero("n_body_unverified")),
    Column("mismatch", _key("n_judge_mismatch"), _judged_only),
    Column("cannot\ntell", _key("n_judge_cannot_tell"), _judged_only),
    Column("judge\nerror", _key("n_judge_error"), _judged_only),
    Column("not\njudged", _key("n_unjudged"), _unjudged_among_judged),
    Column("not\nintercepted", _key("n_model_not_intercepted")),
    Column("infra\nfailure", _key("n_infra_failure")),
    Column("of which\nmodel API", _key("n_model_api_failure"), _nonzero("n_model_api_failure")),
    Column("missing", _key("n_missing"), _nonzero("n_missing")),
    Column("extra", _key("n_extra"), _nonzero("n_extra")),
    Column("re-runs", _key("n_rerun"), _nonzero("n_rerun")),
    Column("re-check\nfailed", _key("n_recheck_failed"), _nonzero("n_recheck_failed")),
    Column(
        "agent tokens\nin / out",
        lambda r: _tokens(r.get("agent_usage") or {}, "runs_with_usage"),
        _used("agent_usage", "runs_with_usage"),
    ),
    Column(
        "agent\ncost",
        lambda r: _cost(r.get("agent_usage") or {}),
        _used("agent_usage", "runs_with_usage"),
    ),
    Column(
        "judge tokens\nin / out",
        lambda r: _tokens(r.get("judge_usage") or {}, "verdicts"),
        _used("judge_usage", "verdicts"),
    ),
    Column(
        "judge\ncost", lambda r: _cost(r.get("judge_usage") or {}), _used("judge_usage", "verdicts")
    ),
)


def _label(entry: Row, datasets: int) -> str:
    label = f"{entry['model']} · {entry['harness']}"
    return f"{label} · {entry['dataset']}" if datasets > 1 else label


def cells(summary: Row) -> tuple[list[str], list[list[str]]]:
    """The table's heads and rows (an entry's label first; `all` last with several entries)."""
    entries: list[Row] = list(summary["entries"])
    judged = summary.get("pass_rate_with_judge") is not None
    rows = [*entries, summary] if len(entries) > 1 else entries
    columns = [c for c in COLUMNS if c.needed(rows, judged)]
    judges = summary.get("judges") or []
    datasets = len({e["dataset"] for e in entries})
    heads = ["entry", *(c.head for c in columns)]
    heads += [f"by {j} alone" for j in judges] if len(judges) > 1 else []
    body = []
    for row in rows:
        label = "all" if row is summary else _label(row, datasets)
        line = [label, *(c.cell(row) for c in columns)]
        if len(judges) > 1:
            line += [_pct((row.get("judge_pass_rates") or {}).get(j)) for j in judges]
        body.append(line)
    return heads, body


def title_of(summary: Row, title: str) -> str:
    """The batch's title, with the dataset when every entry shares it."""
    datasets = {e["dataset"] for e in summary["entries"]}
    return f"{title}  dataset {datasets.pop()}" if len(datasets) == 1 else title


def summary_table(summary: Row, title: str) -> Table:
    """One row per entry, a total row `all` when there are several; cells never wrap."""
    heads, body = cells(summary)
    table = Table(title=title_of(summary, title), title_justify="left")
    for i, head in enumerate(heads):
        table.add_column(head, justify="left" if i == 0 else "right", no_wrap=True)
    for i, line in enumerate(body):
        total = len(body) > 1 and i == len(body) - 1
        table.add_row(*line, style="bold" if total else None)
    return table


def summary_list(summary: Row, title: str, width: int) -> list[str]:
    """The same cells as lines for a narrow console: per entry its label, then its
    `label: value` items packed into lines no wider than width (an item is never split)."""
    heads, body = cells(summary)
    lines = [title_of(summary, title)]
    for line in body:
        lines.append(line[0])
        items = [f"{' '.join(h.split())}: {v}" for h, v in zip(heads[1:], line[1:], strict=True)]
        current = ""
        for item in items:
            joined = f"{current} · {item}" if current else f"  {item}"
            if current and len(joined) > width:
                lines.append(current)
                joined = f"  {item}"
            current = joined
        lines.append(current)
    return lines


def print_table(summary: Row, title: str, console: Console) -> None:
    """The table when it fits the console's width, else the list."""
    table = summary_table(summary, title)
    unbounded = console.options.update(max_width=1 << 16)
    if Measurement.get(console, unbounded, table).maximum <= console.width:
        console.print(table)
        return
    for line in summary_list(summary, title, console.width):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


__all__ = ["cells", "print_table", "summary_list", "summary_table"]
