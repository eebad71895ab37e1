"""What clawbench-score shows: a rich table per batch, and a progress bar while judging.

Tables are drawn from the summary as written to rescore-summary.json (a plain dict), so what the
table shows is what the file holds.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from proxy_addon.records import Category, JudgeVerdict
from scorer.agreement import Agreement, render_agreement, render_ranking_agreement
from scorer.judge import JudgeResult
from scorer.scoring import ScoreResult
from scorer.table import print_table, summary_table


class Tally:
    """Verdicts received so far, by verdict (None: a judge error)."""

    def __init__(self) -> None:
        self.counts: Counter[JudgeVerdict | None] = Counter()

    def add(self, verdict: JudgeVerdict | None) -> None:
        self.counts[verdict] += 1

    def text(self, sep: str) -> str:
        c = self.counts
        return sep.join(
            (
                f"match {c[JudgeVerdict.MATCH]}",
                f"mismatch {c[JudgeVerdict.NO_MATCH]}",
                f"cannot tell {c[JudgeVerdict.CANNOT_TELL]}",
                f"error {c[None]}",
            )
        )


class ProgressReporter:
    """A rich progress bar on the given console (stderr), with verdict tallies."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.progress: Any = None
        self.task: Any = None
        self.tally = Tally()

    def queued(self, n: int) -> None:
        if self.progress is None:
            self.progress = Progress(
                TextColumn("judging"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[tally]}"),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self.task = self.progress.add_task("judge", total=0, tally="")
            self.progress.start()
        self.progress.update(self.task, total=self.progress.tasks[0].total + n)

    def judged(self, result: JudgeResult) -> None:
        self.tally.add(result.reply.verdict)
        self.progress.update(self.task, advance=1, tally=self.tally.text("  "))

    def done(self) -> None:
        if self.progress is not None:
            self.progress.stop()


class PlainProgress:
    """--progress without a TTY (a log, a CI job): a plain line every ~10% or every few seconds.

    rich's bar is transient and draws nothing when stderr is not a terminal, so it would show
    nothing at all there.
    """

    def __init__(
        self,
        stream: TextIO,
        every_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.every_s = every_s
        self.clock = clock
        self.total = 0
        self.count = 0
        self.tally = Tally()
        self.started: float | None = None
        self.shown_at = 0.0
        self.shown_count = 0

    def queued(self, n: int) -> None:
        if self.started is None:
            self.started = self.shown_at = self.clock()
        self.total += n

    def judged(self, result: JudgeResult) -> None:
        self.count += 1
        self.tally.add(result.reply.verdict)
        step = max(1, math.ceil(self.total / 10))
        now = self.clock()
        if self.count - self.shown_count >= step or now - self.shown_at >= self.every_s:
            self._line(now)

    def done(self) -> None:
        if self.count != self.shown_count:
            self._line(self.clock())

    def _line(self, now: float) -> None:
        elapsed = now - (self.started or now)
        self.stream.write(
            f"judging {self.count}/{self.total}: {self.tally.text(', ')} ({elapsed:.1f} s)\n"
        )
        self.stream.flush()
        self.shown_at, self.shown_count = now, self.count


def _problems(summary: dict[str, Any], limit: int = 10) -> list[str]:
    out = []
    for t in summary.get("tasks", []):
        if t["status"] != "counted":
            continue
        problem = t.get("infra_reason")
        if not problem and t.get("result_category") == Category.JUDGE_ERROR:
            problem = f"judge error: {t.get('judge_error')}"
        if not problem and t.get("result_category") == Category.JUDGE_CANNOT_TELL:
            problem = f"the judge could not see: {t.get('judge_missing') or t.get('reason_strict')}"
        recheck = t.get("recheck") or {}
        if not problem and recheck.get("status") == "fail":
            problem = "re-check failed: " + "; ".join(recheck.get("reasons", []))
        if problem:
            out.append(f"{t['result_category']} {t['run_dir']}: {problem}")
    if len(out) > limit:
        out = [*out[:limit], f"... and {len(out) - limit} more (see tasks[] in the summary)"]
    return out


def agent_usage_line(usage: dict[str, Any] | None) -> str | None:
    """The agents' own model calls and cost in a line; None when no run recorded usage."""
    if not usage or not usage.get("runs_with_usage"):
        return None
    line = (
        f"agent model calls {usage['calls']}, tokens in {usage['input_tokens']} "
        f"({usage['cached_tokens']} cached) out {usage['output_tokens']}"
    )
    if usage.get("cost_usd") is not None:
        line += f", cost ${usage['cost_usd']:.4f}"
    elif usage.get("runs_unpriced"):
        line += (
            f", cost unknown: {usage['runs_unpriced']} runs' models have no price "
            "(price_per_million_tokens in their models.yaml entry)"
        )
    notes = []
    if usage.get("runs_without_usage"):
        notes.append(f"{usage['runs_without_usage']} runs recorded none")
    if usage.get("calls_without_usage"):
        notes.append(f"{usage['calls_without_usage']} replies named no usage (not counted)")
    if usage.get("runs_usage_incomplete"):
        notes.append(
            f"usage incomplete in {usage['runs_usage_incomplete']} runs: the agent also called "
            "a model API that is not its model host (not counted)"
        )
    return line + (f" ({'; '.join(notes)})" if notes else "")


def judge_usage_line(s: dict[str, Any]) -> str:
    """The judges' own tokens and what they cost (or which judge has no price)."""
    tokens = s.get("tokens", {})
    line = f"tokens in {tokens.get('input_tokens', 0)} out {tokens.get('output_tokens', 0)}"
    usage = s.get("judge_usage") or {}
    if usage.get("cost_usd") is not None:
        return f"{line}, cost ${usage['cost_usd']:.4f}"
    if usage.get("unpriced"):
        return (
            f"{line}, cost unknown: no price_per_million_tokens for {', '.join(usage['unpriced'])} "
            "in --models-yaml"
        )
    return line


def _judges(s: dict[str, Any]) -> str:
    names = s.get("judges") or [s["judge_model"]]
    return f"judges {', '.join(names)}" if len(names) > 1 else f"judge {names[0]}"


def print_summary(s: dict[str, Any], title: str, console: Console) -> None:
    """One batch: the table, the judge line, the runs worth a look."""
    print_table(s, title, console)
    if s.get("judge_model"):
        console.print(
            f"{_judges(s)}  rubric {s['rubric']}  prompt {s['prompt_version']}  "
            f"{judge_usage_line(s)}",
            highlight=False,
        )
    else:
        console.print(
            "Stage 1 only, not judged: intercepted counts only, nothing is passed until a judge "
            "gives its verdict (clawbench-score with --judge-model)",
            highlight=False,
        )
    if (usage := agent_usage_line(s.get("agent_usage"))) is not None:
        console.print(usage, highlight=False, markup=False)
    if s.get("agreement"):
        shown = render_agreement(Agreement.model_validate(s["agreement"]))
        console.print(f"decided by {s.get('decide')}; {shown}", highlight=False, markup=False)
    for line in _problems(s):
        console.print(f"  {line}", highlight=False, markup=False)


def result_line(result: ScoreResult) -> str:
    """What this invocation did: runs, verdicts asked and reused, the judge's statistics."""
    line = f"this run: {result.runs} runs, {result.to_judge} verdicts asked, {result.cached} "
    line += f"cached, {result.reused_priors} reference verdicts reused"
    for judge, stats in result.calls.items():
        by = f" by {judge}" if len(result.calls) > 1 else ""
        tokens = stats.tokens
        line += (
            f"; {stats.calls} calls{by}, {stats.throttled} rate-limited (429), {stats.errors} "
            f"judge errors, tokens in {tokens.input_tokens} out {tokens.output_tokens}, "
            f"{stats.wall_s:.1f} s"
        )
        if not stats.json_mode:
            line += f"; JSON mode off (the judge{by} refused response_format)"
    if result.kept_on_error:
        line += f"; {result.kept_on_error} failed re-asks (--force) kept their saved verdict"
    for err in result.write_errors:
        line += f"\nwrite failed: {err}"
    return line


def print_result(result: ScoreResult, console: Console) -> None:
    """Every batch's table, then the line about this invocation."""
    for b in result.batches:
        title = str(b.path)
        if not b.single_run:
            note = "→ rescore-summary.json" if b.written else "rescore-summary.json unchanged"
            title += f"  ({note})"
        print_summary(b.summary.to_json(), title, console)
    if result.ranking is not None:
        shown = render_ranking_agreement(result.ranking)
        console.print(shown.rstrip("\n"), highlight=False, markup=False)
    console.print(result_line(result), highlight=False)


__all__ = [
    "PlainProgress",
    "ProgressReporter",
    "agent_usage_line",
    "judge_usage_line",
    "print_result",
    "print_summary",
    "result_line",
    "summary_table",
]
