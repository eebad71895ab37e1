"""rescore-summary.json and leaderboard rows: pure aggregation over scored runs (SPEC section 7).

The unit of a score is an entry: one (model, harness) in a batch. N is the corpus size with
--tasks (or --n-total), else the number of distinct tasks among the entry's runs; a task with no
run is missing and counts as not passed; a run of a task outside the corpus is extra and left out
of N; re-runs count once (the newest). Runs nobody can be named for (run-meta.json unreadable,
the path not in the reference's layout) add only their own tasks to N and no leaderboard row.
The batch's top-level numbers add up its entries and keep the reference's keys. The file holds
no clock time, so a resumed run writes the same summary.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from scorer.batch.scored_run import Outcome

# Built by build_models() while the judge calls are out, or when first used: not on the way to the
# first call.
_FORBID = ConfigDict(extra="forbid", defer_build=True)


class Tokens(BaseModel):
    model_config = _FORBID

    input_tokens: int = 0
    output_tokens: int = 0


class LeaderboardRow(BaseModel):
    """model,harness,dataset,passed,total,pass_rate,wall_hours (pass_rate in percent)."""

    model_config = _FORBID

    model: str
    harness: str
    dataset: str
    passed: int
    total: int
    pass_rate: str
    wall_hours: str


class Counts(BaseModel):
    model_config = _FORBID

    n_total: int = 0
    n_runs: int = 0
    n_intercepted: int = 0
    n_passed: int = 0
    n_judge_match: int = 0
    n_judge_mismatch: int = 0
    n_judge_error: int = 0
    n_unjudged: int = 0
    n_model_not_intercepted: int = 0
    n_infra_failure: int = 0
    n_missing: int = 0
    n_extra: int = 0
    n_rerun: int = 0
    n_recheck_failed: int = 0
    n_recheck_skipped: int = 0
    pass_rate_stage1_only: float = 0.0
    pass_rate_with_judge: float | None = None


class Entry(Counts):
    """One (model, harness) of the batch."""

    model: str
    harness: str
    dataset: str
    wall_hours: float
    missing: list[str] = Field(default_factory=list)
    leaderboard: LeaderboardRow | None  # None: nobody to credit (runs no file or path names)


class TaskRow(BaseModel):
    """One row of tasks[]: a run (counted, re-run or extra) or a missing corpus task."""

    model_config = _FORBID

    task_id: int | str | None = None
    test_case: str | None = None
    status: Literal["counted", "rerun", "extra", "missing"]
    intercepted: bool = False
    result_category: str | None = None
    final_pass: bool = False
    model: str | None = None
    harness: str | None = None
    run_dir: str | None = None
    match_strict: bool | None = None
    reason_strict: str | None = None
    match_lenient: bool | None = None
    reason_lenient: str | None = None
    verdict_source: str | None = None
    judge_error: str | None = None
    recheck: dict[str, Any] | None = None
    reference_category: str | None = None
    infra_reason: str | None = None
    notes: list[str] = Field(default_factory=list)


class Summary(Counts):
    """<batch>/rescore-summary.json: the reference's keys first, ours after."""

    batch_dir: str
    n_match_strict: int | None = None
    n_mismatch_strict: int | None = None
    n_judge_err_strict: int | None = None
    reward_pct_strict: float | None = None
    n_match_lenient: int | None = None
    n_mismatch_lenient: int | None = None
    n_judge_err_lenient: int | None = None
    reward_pct_lenient: float | None = None
    judge_model: str | None = None
    rubric: str | None = None
    rubrics: list[str] = Field(default_factory=list)
    prompt_version: str | None = None
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    tokens: Tokens = Field(default_factory=Tokens)
    dataset: str | None = None
    corpus: str | None = None
    enforce_recheck: bool = False
    entries: list[Entry] = Field(default_factory=list)
    tasks: list[TaskRow] = Field(default_factory=list)
    provenance: dict[str, str | None] = Field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The file's content: per-rubric keys only for the rubrics that ran."""
        skip = {
            f"{k}_{r}"
            for r in ("strict", "lenient")
            if r not in self.rubrics
            for k in ("n_match", "n_mismatch", "n_judge_err", "reward_pct")
        }
        not_run = {
            f"{k}_{r}"
            for r in ("strict", "lenient")
            if r not in self.rubrics
            for k in ("match", "reason")
        }
        rows = [t.model_dump(exclude=not_run) for t in self.tasks]
        out = self.model_dump(mode="json", exclude=skip | {"tasks"})
        out["tasks"] = rows
        return out


@dataclass(frozen=True)
class Options:
    """What shapes the numbers, beside the runs themselves."""

    corpus_slugs: Sequence[str] | None = None
    corpus: str | None = None
    n_total: int | None = None
    judged: bool = True
    rubrics: tuple[str, ...] = ("strict",)
    rubric: str | None = "strict"
    judge_model: str | None = None
    prompt_versions: dict[str, str] | None = None
    dataset: str | None = None
    enforce_recheck: bool = False
    batch_elapsed_s: float | None = None
    provenance: dict[str, str | None] | None = None


class Keyed(Protocol):
    """What dedup needs of a run: an Outcome, or a RunKey before the run is read in full."""

    run_dir: Path
    model: str | None
    harness: str | None
    test_case: str | None
    timestamp: str | None
    corpus_slug: str | None


def task_key(o: Keyed) -> str:
    """The task a run counts for: its corpus slug, else its test_case, else its directory."""
    return o.corpus_slug or o.test_case or f"?{o.run_dir.name}"


def _newest_first[K: Keyed](runs: list[K]) -> list[K]:
    return sorted(runs, key=lambda o: (o.timestamp or "", o.run_dir.name), reverse=True)


def _entries[K: Keyed](outcomes: Sequence[K]) -> dict[tuple[str, str], list[K]]:
    groups: dict[tuple[str, str], list[K]] = {}
    for o in outcomes:
        groups.setdefault((o.model or "unknown", o.harness or "unknown"), []).append(o)
    return dict(sorted(groups.items()))


def _split[K: Keyed](runs: list[K], corpus_given: bool) -> tuple[dict[str, list[K]], list[K]]:
    """Runs by task (newest first), and the runs of tasks outside the corpus."""
    by_task: dict[str, list[K]] = {}
    extra: list[K] = []
    for o in runs:
        if corpus_given and o.corpus_slug is None:
            extra.append(o)
        else:
            by_task.setdefault(task_key(o), []).append(o)
    return {k: _newest_first(v) for k, v in sorted(by_task.items())}, extra


def counted_runs[K: Keyed](outcomes: Sequence[K], corpus_given: bool) -> list[K]:
    """The runs that count: per (model, harness, task) the newest, tasks outside the corpus out."""
    out: list[K] = []
    for runs in _entries(outcomes).values():
        by_task, _extra = _split(runs, corpus_given)
        out.extend(v[0] for v in by_task.values())
    return out


def _rate(n: int, total: int) -> float:
    return n / total if total else 0.0


def _count(counted: list[Outcome], c: Counts, judged: bool) -> None:
    # Counted here, set once: a pydantic attribute costs a microsecond per assignment.
    categories = Counter(o.result_category for o in counted)
    rechecked = Counter(o.recheck.status for o in counted if o.stage.intercepted)
    c.n_intercepted += sum(o.credited for o in counted)
    c.n_passed += sum(o.final_pass for o in counted)
    c.n_judge_match += categories["passed"]
    c.n_judge_mismatch += categories["judge_mismatch"]
    c.n_judge_error += categories["judge_error"]
    c.n_unjudged += categories["intercepted"]
    c.n_model_not_intercepted += categories["model_not_intercepted"]
    c.n_infra_failure += categories["infra_failure"]
    c.n_recheck_failed += rechecked["fail"]
    c.n_recheck_skipped += rechecked["skipped"]
    c.pass_rate_stage1_only = _rate(c.n_intercepted, c.n_total)
    c.pass_rate_with_judge = _rate(c.n_passed, c.n_total) if judged else None


def _relative(run_dir: Path, batch_dir: Path) -> str:
    """run_dir.relative_to(batch_dir) as a string, without pathlib's cost (1000 rows: 40 ms)."""
    run, batch = str(run_dir), str(batch_dir)
    if run == batch:
        return "."
    prefix = batch.rstrip(os.sep) + os.sep
    if run.startswith(prefix):
        return run[len(prefix) :]
    return str(run_dir.relative_to(batch_dir))


def _row(o: Outcome, status: str, batch_dir: Path) -> TaskRow:
    row = TaskRow(
        task_id=o.task_id,
        test_case=o.test_case,
        status=status,  # type: ignore[arg-type]
        intercepted=o.credited,
        result_category=o.result_category,
        final_pass=o.final_pass,
        model=o.model,
        harness=o.harness,
        run_dir=_relative(o.run_dir, batch_dir),
        recheck=o.recheck.to_json() if o.stage.intercepted else None,
        reference_category=o.stage.reference_category,
        infra_reason=o.stage.infra,
        notes=list(o.notes),
    )
    for rubric, v in o.verdicts.items():
        setattr(row, f"match_{rubric}", v.match)
        setattr(row, f"reason_{rubric}", v.reason)
    if (p := o.primary) is not None:
        row.verdict_source = p.source
        row.judge_error = p.error
    return row


def build_models() -> None:
    """Build the summary's validators and serialisers now (pydantic defers them)."""
    for model in (Tokens, LeaderboardRow, Counts, Entry, TaskRow, Summary):
        model.model_rebuild()


def summarize(batch_dir: Path, outcomes: Sequence[Outcome], opts: Options) -> Summary:
    """The batch's summary: entries per (model, harness), then their sums and the task rows."""
    groups = _entries(outcomes)
    corpus = list(opts.corpus_slugs) if opts.corpus_slugs is not None else None
    summary = Summary(
        batch_dir=str(batch_dir),
        judge_model=opts.judge_model,
        rubric=opts.rubric,
        rubrics=list(opts.rubrics) if opts.judged else [],
        prompt_version=(opts.prompt_versions or {}).get(opts.rubrics[0]) if opts.judged else None,
        prompt_versions=dict(opts.prompt_versions or {}) if opts.judged else {},
        dataset=opts.dataset,
        corpus=opts.corpus,
        enforce_recheck=opts.enforce_recheck,
        provenance=dict(opts.provenance or {}),
    )
    rows: list[TaskRow] = []
    counted_all: list[Outcome] = []
    named = sum(any(o.identified for o in runs) for runs in groups.values())
    for (model, harness), runs in groups.items():
        by_task, extra = _split(runs, corpus is not None)
        counted = []
        for newest, *older in by_task.values():
            counted.append(newest)
            rows.append(_row(newest, "counted", batch_dir))
            rows.extend(_row(o, "rerun", batch_dir) for o in older)
        rows.extend(_row(o, "extra", batch_dir) for o in extra)
        # An entry made only of runs that neither run-meta.json nor the directory's path
        # attributes (see records/runpath.py) is nobody's: its runs may belong to any entry, most
        # likely to one that already lists their task as missing. Counting them against a whole
        # corpus would add a corpus to the batch's N for one broken file and put an
        # "unknown,unknown" row on the leaderboard; so they count as what they are, a few failed
        # runs: N is their distinct tasks, nothing is missing, and no leaderboard row is made.
        identified = any(o.identified for o in runs)
        missing = sorted(set(corpus) - set(by_task)) if corpus is not None and identified else []
        n_total = len(by_task)
        if identified:
            n_total = opts.n_total or (len(corpus) if corpus is not None else len(by_task))
        durations = sum(o.duration_s or 0 for o in runs)
        elapsed = durations
        if identified and named == 1 and opts.batch_elapsed_s:
            elapsed = opts.batch_elapsed_s  # the batch's wall time is this entry's alone
        counts = Counts(
            n_total=n_total,
            n_runs=len(runs),
            n_missing=len(missing),
            n_extra=len(extra),
            n_rerun=len(runs) - len(counted) - len(extra),
        )
        _count(counted, counts, opts.judged)
        passed = counts.n_passed if opts.judged else counts.n_intercepted
        dataset = opts.dataset or "unknown"
        entry = Entry(
            **counts.model_dump(),
            model=model,
            harness=harness,
            dataset=dataset,
            wall_hours=round(elapsed / 3600, 4),
            missing=missing,
            leaderboard=LeaderboardRow(
                model=model,
                harness=harness,
                dataset=dataset,
                passed=passed,
                total=n_total,
                pass_rate=f"{100 * passed / n_total:.2f}" if n_total else "0.00",
                wall_hours=f"{elapsed / 3600:.2f}",
            )
            if identified
            else None,
        )
        summary.entries.append(entry)
        counted_all.extend(counted)
        if missing:
            rows.extend(
                TaskRow(test_case=slug, status="missing", model=model, harness=harness)
                for slug in missing
            )
    for name in ("n_total", "n_runs", "n_missing", "n_extra", "n_rerun"):
        setattr(summary, name, sum(getattr(e, name) for e in summary.entries))
    _count(counted_all, summary, opts.judged)
    for rubric in summary.rubrics:
        credited = [o for o in counted_all if o.credited]
        match = sum(1 for o in credited if (v := o.verdicts.get(rubric)) and v.match is True)
        mismatch = sum(1 for o in credited if (v := o.verdicts.get(rubric)) and v.match is False)
        setattr(summary, f"n_match_{rubric}", match)
        setattr(summary, f"n_mismatch_{rubric}", mismatch)
        setattr(summary, f"n_judge_err_{rubric}", len(credited) - match - mismatch)
        setattr(summary, f"reward_pct_{rubric}", _rate(match, summary.n_total))
    for o in outcomes:  # every verdict cost tokens, counted or not
        for v in o.verdicts.values():
            summary.tokens.input_tokens += v.input_tokens
            summary.tokens.output_tokens += v.output_tokens
    summary.tasks = rows
    return summary


__all__ = [
    "Entry",
    "LeaderboardRow",
    "Options",
    "Summary",
    "TaskRow",
    "build_models",
    "counted_runs",
    "summarize",
    "task_key",
]
