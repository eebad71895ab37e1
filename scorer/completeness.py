"""Is a scored result complete? One rule for every command that publishes a number
(clawbench-score, clawbench-sandbox batch --judge-model, clawbench-demo): a verdict missing (a
judge error, a timeout, a run --limit left unjudged) or a run that is an infra failure (the
model API's included) makes it incomplete, and the command says so in one line, with the command
that completes it, and exits EXIT_INCOMPLETE unless the user asked for partial output
(--allow-incomplete).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from proxy_addon.records import Category, read_batch_summary
from scorer.scoring import ScoreResult

EXIT_INCOMPLETE = 3
"""The exit status of a complete run of a command whose result is incomplete."""
NAMED = 5
"""Runs named in the line, at most, per kind."""


@dataclass
class Incomplete:
    """What is missing from a scored result: runs without a verdict, infra failures."""

    batches: list[Path] = field(default_factory=list)
    unjudged: list[str] = field(default_factory=list)
    """Runs (run_name) whose verdict is missing: judge errors, not asked yet."""
    infra: list[str] = field(default_factory=list)
    model_api: int = 0
    """Of infra, those whose model API failed."""

    def __bool__(self) -> bool:
        return bool(self.unjudged or self.infra)


def run_name(model: str | None, harness: str | None, case: str | None, run_dir: str | None) -> str:
    """A run as the line names it: model · harness · task (a task is run by many entries), else
    its directory's name."""
    if model and harness and case:
        return f"{model} · {harness} · {case}"
    return Path(run_dir).name if run_dir else case or "?"


def _named(runs: list[str]) -> str:
    unique = list(dict.fromkeys(runs))  # two batches of one entry: the same run, re-run
    shown = ", ".join(unique[:NAMED])
    return shown + (f" and {len(unique) - NAMED} more" if len(unique) > NAMED else "")


def incompleteness(result: ScoreResult) -> Incomplete:
    """What the counted runs of every batch lack (re-runs a newer run replaced do not count)."""
    found = Incomplete()
    for batch in result.batches:
        summary = batch.summary
        before = (len(found.unjudged), len(found.infra))
        for row in summary.tasks:
            if row.status != "counted":
                continue
            name = run_name(row.model, row.harness, row.test_case, row.run_dir)
            category = row.result_category
            if summary.judge_model and category in (Category.JUDGE_ERROR, Category.INTERCEPTED):
                found.unjudged.append(name)
            elif category in (Category.INFRA_FAILURE, Category.MODEL_API_FAILURE):
                found.infra.append(name)
                found.model_api += category == Category.MODEL_API_FAILURE
        if (len(found.unjudged), len(found.infra)) != before:
            found.batches.append(batch.path)
    return found


def score_command(
    path: Path,
    judges: Sequence[str] = (),
    models_yaml: Path | None = None,
    tasks: Path | None = None,
) -> str:
    """The clawbench-score command that asks for a path's missing verdicts (saved ones are
    reused), quoted for a shell."""
    words = ["clawbench-score", str(path)]
    for judge in judges:
        words += ["--judge-model", judge]
    for flag, value in (("--models-yaml", models_yaml), ("--tasks", tasks)):
        if value is not None:
            words += [flag, str(value)]
    return " ".join(shlex.quote(w) for w in words)


def rerun_command(batch: Path) -> str | None:
    """`clawbench-sandbox batch CORPUS ... --resume BATCH` when batch-summary.json names the
    corpus the batch ran; None when it names none (a reference batch, the demo's)."""
    summary = read_batch_summary(batch)
    if summary is None or not summary.corpus or summary.image.startswith("none"):
        return None
    corpus = shlex.quote(summary.corpus)
    return (
        f"clawbench-sandbox batch {corpus} <the batch's options> --resume {shlex.quote(str(batch))}"
    )


def incomplete_line(
    found: Incomplete, score_again: str, rerun: str | None = None, also: str | None = None
) -> str:
    """One line: what is incomplete and the commands that complete it.

    score_again: the clawbench-score command that asks for the missing verdicts (and only
    them: saved verdicts are reused); rerun: the command that re-runs the infra failures
    (batch --resume), when the caller knows it; also: one more thing the caller lacks."""
    parts = []
    if found.unjudged:
        parts.append(
            f"{len(found.unjudged)} verdict(s) missing ({_named(found.unjudged)}): "
            f"`{score_again}` asks the judge for those only"
        )
    if found.infra:
        api = f", {found.model_api} of them model_api_failure" if found.model_api else ""
        how = f"`{rerun}` re-runs them" if rerun else "re-run them with batch --resume"
        parts.append(
            f"{len(found.infra)} run(s) an infra failure{api} ({_named(found.infra)}): {how}"
        )
    if also:
        parts.append(also)
    return "incomplete: " + "; ".join(parts) + " (--allow-incomplete exits 0 on partial output)"


__all__ = [
    "EXIT_INCOMPLETE",
    "Incomplete",
    "incomplete_line",
    "incompleteness",
    "rerun_command",
    "run_name",
    "score_command",
]
