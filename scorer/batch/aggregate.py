"""Scored runs → rescore-summary.json and leaderboard rows: pure aggregation (docs/formats.md,
"rescore-summary.json").

The unit of a score is an entry: one (model, harness) in a batch. N is the corpus size with
--tasks (or --n-total), else the number of distinct tasks among the entry's runs; a task with no
run is missing and counts as not passed; a run of a task outside the corpus is extra and left out
of N; re-runs count once (the newest). Runs nobody can be named for (run-meta.json unreadable,
the path not in the reference's layout) add only their own tasks to N and no leaderboard row.
The batch's top-level numbers add up its entries and keep the reference's keys.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from proxy_addon.records import INFRA_CATEGORIES, Category, JudgeVerdict, as_match
from scorer.agreement import agreement
from scorer.batch.agent_cost import leaderboard_columns, usage_totals
from scorer.batch.judge_cost import judge_leaderboard_columns, judge_usage_totals
from scorer.batch.rescore_summary import (
    NOT_JUDGED,
    Counts,
    Entry,
    LeaderboardRow,
    Summary,
    TaskRow,
)
from scorer.batch.scored_run import RunKey, ScoredRun
from scorer.models_yaml import Price
from scorer.stats import wilson_interval


@dataclass(frozen=True)
class SummaryOptions:
    """What shapes the numbers, beside the runs themselves."""

    corpus_slugs: Sequence[str] | None = None
    corpus: str | None = None
    n_total: int | None = None
    judged: bool = True
    rubrics: tuple[str, ...] = ("strict",)
    rubric: str | None = "strict"
    judge_model: str | None = None
    judges: tuple[str, ...] = ()
    decide: str = "first"
    prompt_versions: dict[str, str] | None = None
    dataset: str | None = None
    enforce_recheck: bool = False
    batch_elapsed_s: float | None = None
    provenance: dict[str, str | None] | None = None
    prices: Mapping[str, Price] | None = None  # models.yaml's, by entry name: agent cost


def task_key(o: RunKey) -> str:
    """The task a run counts for: its corpus slug, else its test_case, else its directory."""
    return o.corpus_slug or o.test_case or f"?{o.run_dir.name}"


def _newest_first[K: RunKey](runs: list[K]) -> list[K]:
    return sorted(runs, key=lambda o: (o.timestamp or "", o.run_dir.name), reverse=True)


def _entries[K: RunKey](runs: Sequence[K]) -> dict[tuple[str, str], list[K]]:
    groups: dict[tuple[str, str], list[K]] = {}
    for o in runs:
        groups.setdefault((o.model or "unknown", o.harness or "unknown"), []).append(o)
    return dict(sorted(groups.items()))


def _split[K: RunKey](runs: list[K], corpus_given: bool) -> tuple[dict[str, list[K]], list[K]]:
    """Runs by task (newest first), and the runs of tasks outside the corpus."""
    by_task: dict[str, list[K]] = {}
    extra: list[K] = []
    for o in runs:
        if corpus_given and o.corpus_slug is None:
            extra.append(o)
        else:
            by_task.setdefault(task_key(o), []).append(o)
    return {k: _newest_first(v) for k, v in sorted(by_task.items())}, extra


def counted_runs[K: RunKey](runs: Sequence[K], corpus_given: bool) -> list[K]:
    """The runs that count: per (model, harness, task) the newest, tasks outside the corpus out."""
    out: list[K] = []
    for group in _entries(runs).values():
        by_task, _extra = _split(group, corpus_given)
        out.extend(v[0] for v in by_task.values())
    return out


def _rate(n: int, total: int) -> float:
    return n / total if total else 0.0


def _count(counted: list[ScoredRun], c: Counts, judged: bool) -> None:
    categories = Counter(o.result_category for o in counted)
    rechecked = Counter(o.recheck.status for o in counted if o.stage.intercepted)
    c.n_intercepted += sum(o.credited for o in counted)
    c.n_body_unverified += sum(o.credited and o.stage.body_unverified for o in counted)
    # Without a judge nothing is passed, not even an interception: no count at all.
    c.n_passed = (c.n_passed or 0) + sum(o.final_pass for o in counted) if judged else None
    c.n_judge_match += categories[Category.PASSED]
    c.n_judge_mismatch += categories[Category.JUDGE_MISMATCH]
    c.n_judge_cannot_tell += categories[Category.JUDGE_CANNOT_TELL]
    c.n_judge_error += categories[Category.JUDGE_ERROR]
    c.n_unjudged += categories[Category.INTERCEPTED]
    c.n_model_not_intercepted += categories[Category.MODEL_NOT_INTERCEPTED]
    c.n_infra_failure += sum(categories[k] for k in INFRA_CATEGORIES)
    c.n_model_api_failure += categories[Category.MODEL_API_FAILURE]
    c.n_recheck_failed += rechecked["fail"]
    c.n_recheck_skipped += rechecked["skipped"]
    c.pass_rate_stage1_only = _rate(c.n_intercepted, c.n_total)
    c.pass_rate_stage1_only_ci = _interval(c.n_intercepted, c.n_total)
    c.pass_rate_with_judge = _rate(c.n_passed or 0, c.n_total) if judged else None
    c.pass_rate_with_judge_ci = _interval(c.n_passed or 0, c.n_total) if judged else None


def _interval(n: int, total: int) -> list[float] | None:
    """The Wilson 95% interval of n/total, rounded to 6 places; None when there is no N."""
    return [round(x, 6) for x in wilson_interval(n, total)] if total else None


def _relative(run_dir: Path, batch_dir: Path) -> str:
    run, batch = str(run_dir), str(batch_dir)
    if run == batch:
        return "."
    prefix = batch.rstrip(os.sep) + os.sep
    return run[len(prefix) :] if run.startswith(prefix) else str(run_dir.relative_to(batch_dir))


def _row(o: ScoredRun, status: str, batch_dir: Path) -> TaskRow:
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
    for rubric, v in o.first.items():
        setattr(row, f"match_{rubric}", as_match(v.verdict))
        setattr(row, f"verdict_{rubric}", v.verdict)
        setattr(row, f"reason_{rubric}", v.reason)
    if (p := o.primary) is not None:
        row.verdict_source = p.source
        row.judge_error = p.error
        row.judge_missing = p.missing or None
    if o.judges:
        given = o.deciding_verdicts()
        row.verdicts = {j: given[j] for j in o.judges if j in given}
    return row


@dataclass
class _EntryScore:
    """One entry scored: its summary entry, the runs that count, its task rows."""

    entry: Entry
    counted: list[ScoredRun]
    rows: list[TaskRow]


def _entry(
    key: tuple[str, str], runs: list[ScoredRun], named: int, batch_dir: Path, opts: SummaryOptions
) -> _EntryScore:
    model, harness = key
    corpus = list(opts.corpus_slugs) if opts.corpus_slugs is not None else None
    by_task, extra = _split(runs, corpus is not None)
    counted: list[ScoredRun] = []
    rows: list[TaskRow] = []
    for newest, *older in by_task.values():
        counted.append(newest)
        rows.append(_row(newest, "counted", batch_dir))
        rows.extend(_row(o, "rerun", batch_dir) for o in older)
    rows.extend(_row(o, "extra", batch_dir) for o in extra)
    # An entry made only of runs that neither run-meta.json nor the directory's path attributes
    # (see records/runpath.py) is nobody's: its runs may belong to any entry, most likely to one
    # that already lists their task as missing. Counting them against a whole corpus would add a
    # corpus to the batch's N for one broken file and put an "unknown,unknown" row on the
    # leaderboard; so they count as what they are, a few failed runs: N is their distinct
    # tasks, nothing is missing, and no leaderboard row is made.
    identified = any(o.identified for o in runs)
    missing = sorted(set(corpus) - set(by_task)) if corpus is not None and identified else []
    n_total = len(by_task)
    if identified:
        n_total = opts.n_total or (len(corpus) if corpus is not None else len(by_task))
    elapsed = sum(o.duration_s or 0 for o in runs)
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
    counts.agent_usage = usage_totals(runs, opts.prices or {})
    counts.judge_usage = judge_usage_totals(runs, opts.prices or {})
    dataset = opts.dataset or "unknown"
    entry = Entry(
        **counts.model_dump(),
        model=model,
        harness=harness,
        dataset=dataset,
        wall_hours=round(elapsed / 3600, 4),
        missing=missing,
        leaderboard=_leaderboard_row(key, dataset, _judge_label(opts), n_total, elapsed, counts)
        if identified
        else None,
        judge_pass_rates=_judge_rates(counted, opts.judges, n_total),
    )
    rows += [TaskRow(test_case=s, status="missing", model=model, harness=harness) for s in missing]
    return _EntryScore(entry, counted, rows)


def _judge_label(opts: SummaryOptions) -> str:
    """Who decided final_pass: the judge, `majority of a, b, c` for several, or NOT_JUDGED."""
    if not opts.judged:
        return NOT_JUDGED
    judges = list(opts.judges) or [opts.judge_model or "unknown"]
    return judges[0] if len(judges) == 1 else f"{opts.decide} of {', '.join(judges)}"


def _leaderboard_row(
    key: tuple[str, str],
    dataset: str,
    judge: str,
    n_total: int,
    elapsed_s: float,
    c: Counts,
) -> LeaderboardRow:
    """The entry's CSV row; without a judge its pass columns are empty (nothing is passed)."""
    row = LeaderboardRow(
        model=key[0],
        harness=key[1],
        dataset=dataset,
        passed=c.n_passed,
        total=n_total,
        pass_rate="",
        wall_hours=f"{elapsed_s / 3600:.2f}",
        intercepted=c.n_intercepted,
        judge=judge,
        **leaderboard_columns(c.agent_usage),
        **judge_leaderboard_columns(c.judge_usage),
    )
    if c.n_passed is not None:
        row.judge_cannot_tell = str(c.n_judge_cannot_tell)
        low, high = wilson_interval(c.n_passed, n_total) if n_total else (0.0, 0.0)
        row.pass_rate = f"{100 * c.n_passed / n_total:.2f}" if n_total else "0.00"
        row.pass_rate_ci_low, row.pass_rate_ci_high = f"{100 * low:.2f}", f"{100 * high:.2f}"
    return row


def _judge_rates(counted: list[ScoredRun], judges: Sequence[str], n: int) -> dict[str, float]:
    """Per judge, the pass rate its verdicts alone would give (credited runs it matched / N);
    empty with fewer than two judges."""
    if len(judges) < 2:
        return {}
    credited = [o.deciding_verdicts() for o in counted if o.credited]
    return {j: _rate(sum(v.get(j) is JudgeVerdict.MATCH for v in credited), n) for j in judges}


def _agreement(counted: list[ScoredRun], judges: Sequence[str], batch_dir: Path) -> dict[str, Any]:
    """How far the judges agree on the credited runs that count (run ids relative to the batch)."""
    verdicts = {
        _relative(o.run_dir, batch_dir): o.deciding_verdicts()
        for o in counted
        if o.credited and o.deciding_verdicts()
    }
    return agreement(verdicts, judges).model_dump(mode="json")


def _header(batch_dir: Path, opts: SummaryOptions) -> Summary:
    versions = dict(opts.prompt_versions or {}) if opts.judged else {}
    return Summary(
        batch_dir=str(batch_dir),
        judge_model=opts.judge_model,
        judges=list(opts.judges) if opts.judged else [],
        decide=opts.decide if opts.judged else None,
        rubric=opts.rubric,
        rubrics=list(opts.rubrics) if opts.judged else [],
        prompt_version=versions.get(opts.rubrics[0]) if opts.judged else None,
        prompt_versions=versions,
        dataset=opts.dataset,
        corpus=opts.corpus,
        enforce_recheck=opts.enforce_recheck,
        provenance=dict(opts.provenance or {}),
    )


def _per_rubric(summary: Summary, counted: list[ScoredRun]) -> None:
    """The reference's n_match_<rubric>, n_mismatch_..., n_judge_err_..., reward_pct_... keys,
    and our n_cannot_tell_<rubric> (neither a match nor a mismatch nor an error)."""
    credited = [o for o in counted if o.credited]
    for rubric in summary.rubrics:
        found = [v.verdict for o in credited if (v := o.first.get(rubric)) is not None]
        match, mismatch = found.count(JudgeVerdict.MATCH), found.count(JudgeVerdict.NO_MATCH)
        unsure = found.count(JudgeVerdict.CANNOT_TELL)
        setattr(summary, f"n_match_{rubric}", match)
        setattr(summary, f"n_mismatch_{rubric}", mismatch)
        setattr(summary, f"n_cannot_tell_{rubric}", unsure)
        setattr(summary, f"n_judge_err_{rubric}", len(credited) - match - mismatch - unsure)
        setattr(summary, f"reward_pct_{rubric}", _rate(match, summary.n_total))


def summarize(batch_dir: Path, runs: Sequence[ScoredRun], opts: SummaryOptions) -> Summary:
    """The batch's summary: entries per (model, harness), then their sums and the task rows."""
    groups = _entries(runs)
    summary = _header(batch_dir, opts)
    named = sum(any(o.identified for o in group) for group in groups.values())
    scored = [_entry(key, group, named, batch_dir, opts) for key, group in groups.items()]
    summary.entries = [s.entry for s in scored]
    for name in ("n_total", "n_runs", "n_missing", "n_extra", "n_rerun"):
        setattr(summary, name, sum(getattr(e, name) for e in summary.entries))
    counted = [o for s in scored for o in s.counted]
    _count(counted, summary, opts.judged)
    _per_rubric(summary, counted)
    summary.agent_usage = usage_totals(runs, opts.prices or {})
    summary.judge_usage = judge_usage_totals(runs, opts.prices or {})
    if len(opts.judges) > 1:
        summary.agreement = _agreement(counted, opts.judges, batch_dir)
    for o in runs:  # every verdict cost tokens, counted or not
        for by_rubric in o.verdicts.values():
            for v in by_rubric.values():
                summary.tokens += v.tokens
    summary.tasks = [row for s in scored for row in s.rows]
    return summary


__all__ = ["SummaryOptions", "counted_runs", "summarize", "task_key"]
