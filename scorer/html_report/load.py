"""Everything the report shows, read from disk: batches (rescore-summary.json) and their runs.

Known keys go through the scorer's own models and readers (rescore_summary.parse_summary,
RunMeta, JudgeRecord, InterceptionView); keys a newer version adds are read from the raw JSON and
rendered when present. A missing or broken file is a note on its batch or run,
never an exception: a report of a half-finished batch is still a report.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorer.batch import (
    DiscoveryError,
    Entry,
    Summary,
    SummaryError,
    TaskRow,
    find_batches,
    parse_summary,
)
from scorer.html_report.runfiles import RunView, load_run_view
from scorer.html_report.runpage import ShotBudget, inlined
from scorer.stats import wilson_interval

SUMMARY = "rescore-summary.json"


class ReportError(ValueError):
    """Nothing to report under the paths given (the message says why)."""


def row_entry(row: TaskRow) -> tuple[str, str]:
    """The (model, harness) entry a tasks[] row counts in ("unknown" where the row names none,
    as the scorer groups runs)."""
    return (row.model or "unknown", row.harness or "unknown")


@dataclass
class EntryView:
    """One (model, harness) of one batch: its counts and the intervals of its rates."""

    entry: Entry
    raw: dict[str, Any]
    batch: BatchView
    judged: bool

    @property
    def key(self) -> tuple[str, str, str]:
        return (str(self.batch.path), self.entry.model, self.entry.harness)

    @property
    def runs(self) -> list[RunView]:
        """The batch's runs of this entry (counted, re-runs and extras)."""
        own = (self.entry.model, self.entry.harness)
        return [r for r in self.batch.runs if row_entry(r.row) == own]

    @property
    def passed(self) -> int | None:
        """Passes as the leaderboard counts them; None when nothing was judged (Stage 1 only:
        an interception is no pass)."""
        if not self.judged:
            return None
        if self.entry.leaderboard is not None and self.entry.leaderboard.passed is not None:
            return self.entry.leaderboard.passed
        return self.entry.n_passed or 0

    @property
    def rate(self) -> float | None:
        """The pass rate; None when not judged."""
        if self.passed is None:
            return None
        return self.passed / self.entry.n_total if self.entry.n_total else 0.0

    @property
    def intercepted_rate(self) -> float:
        return self.entry.n_intercepted / self.entry.n_total if self.entry.n_total else 0.0

    @property
    def interval(self) -> tuple[float, float] | None:
        """The pass rate's 95% interval: the summary's when it has one, else Wilson's here;
        None when not judged."""
        if self.passed is None:
            return None
        key = "pass_rate_with_judge_ci"
        given = _interval(self.raw.get(key))
        if given is None and len(self.batch.entries) == 1:
            given = _interval(self.batch.raw.get(key))  # the batch's totals are this entry's
        return given if given is not None else _wilson(self.passed, self.entry.n_total)


@dataclass
class BatchView:
    """One scored batch: its summary (validated known keys, raw extras) and its runs."""

    path: Path
    raw: dict[str, Any]
    summary: Summary
    entries: list[EntryView] = field(default_factory=list)
    runs: list[RunView] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def judged(self) -> bool:
        return self.summary.pass_rate_with_judge is not None

    @property
    def judges(self) -> list[str]:
        """Judge model names: the summary's judges list (several judges), else its judge_model."""
        names = self.raw.get("judges")
        if isinstance(names, list) and names:
            return [str(n) for n in names]
        return [self.summary.judge_model] if self.judged and self.summary.judge_model else []

    @property
    def agreement(self) -> dict[str, Any] | None:
        value = self.raw.get("agreement")
        return value if isinstance(value, dict) and value else None


@dataclass
class Report:
    """The batches found under the paths, and what could not be read."""

    batches: list[BatchView]
    problems: list[str]
    out_dir: Path


def _wilson(passed: int, total: int) -> tuple[float, float] | None:
    """The Wilson 95% interval, for summaries written before they carried one."""
    return wilson_interval(passed, total) if total > 0 else None


def _interval(value: Any) -> tuple[float, float] | None:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        low, high = value
        if isinstance(low, (int, float)) and isinstance(high, (int, float)) and low <= high:
            return (float(low), float(high))
    return None


def load_batch(path: Path, out_dir: Path) -> BatchView:
    """One batch directory holding rescore-summary.json; ReportError when it cannot be read."""
    file = path / SUMMARY
    try:
        raw = json.loads(file.read_bytes())
    except FileNotFoundError:
        raise ReportError(f"{path}: no {SUMMARY} (run clawbench-score on it first)") from None
    except (OSError, ValueError) as e:
        raise ReportError(f"{file}: unreadable or truncated JSON: {e}") from e
    try:
        summary = parse_summary(raw, file)
    except SummaryError as e:
        raise ReportError(str(e)) from e
    batch = BatchView(path=path, raw=raw, summary=summary)
    raw_entries = raw.get("entries") if isinstance(raw.get("entries"), list) else []
    for i, entry in enumerate(summary.entries):
        extra = raw_entries[i] if i < len(raw_entries) and isinstance(raw_entries[i], dict) else {}
        batch.entries.append(EntryView(entry, extra, batch, batch.judged))
    for row in summary.tasks:
        if row.run_dir is not None:
            batch.runs.append(load_run_view(path / row.run_dir, row, out_dir))
    return batch


def load_report(paths: Sequence[Path], out: Path) -> Report:
    """Every scored batch under paths (a batch, or a directory of batches); links relative to
    out's directory. ReportError when no batch under any path has a summary."""
    out_dir = out.resolve().parent
    batches: list[BatchView] = []
    problems: list[str] = []
    seen: set[Path] = set()
    for path in paths:
        try:
            found = [b.path for b in find_batches(path)]
        except DiscoveryError as e:
            problems.append(str(e))
            continue
        if (path / SUMMARY).is_file() and path not in found:
            found.insert(0, path)
        for batch_dir in found:
            key = batch_dir.resolve()
            if key in seen:
                continue
            seen.add(key)
            try:
                batches.append(load_batch(batch_dir, out_dir))
            except ReportError as e:
                problems.append(str(e))
    if not batches:
        raise ReportError("; ".join(problems) or "no scored batch found")
    budget = ShotBudget()
    for n, batch in enumerate(batches):
        for i, run in enumerate(batch.runs):
            run.anchor = f"run-{n + 1}-{i + 1}"
            if run.timeline is not None:
                run.shot_uris = inlined(run.timeline, budget)
    return Report(batches, problems, out_dir)


__all__ = [
    "SUMMARY",
    "BatchView",
    "EntryView",
    "Report",
    "ReportError",
    "load_batch",
    "load_report",
    "row_entry",
]
