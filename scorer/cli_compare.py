"""clawbench-score compare: two scored batches, paired by task (scorer.compare).

    clawbench-score compare BATCH_A BATCH_B [--tasks DIR] [--json]

Each batch is read from its rescore-summary.json (score it first): per task the run that counts
(the newest), its final_pass (its interception when scored Stage 1 only), or uncertain when the
judge gave no verdict. With --tasks the
pairs are the corpus's tasks, and a task a batch did not run counts as not passed, as in its
score; without, tasks only one batch ran are listed apart.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from proxy_addon.records import Category
from scorer.batch import CorpusError, SummaryError, load_corpus, read_summary
from scorer.compare import Comparison, compare, render_comparison

EXIT_USAGE = 2


class CompareError(ValueError):
    """A batch that cannot be compared; the message says which and why."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clawbench-score compare",
        description="Compare two scored batches task by task: won, lost and tied tasks, the "
        "difference in pass rate with a 95% interval for paired data, the exact McNemar "
        "p-value and the tasks that flipped.",
        epilog="exit codes:\n  0    compared\n  2    bad input: a batch not scored, a "
        "summary that cannot be read, a bad --tasks corpus, a bad command line",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "batch_a", type=Path, metavar="A", help="a scored batch (holds rescore-summary.json)"
    )
    p.add_argument("batch_b", type=Path, metavar="B", help="the batch to compare it with")
    p.add_argument(
        "--tasks",
        type=Path,
        metavar="DIR",
        help="the corpus: pair over its tasks, one a batch lacks failed (default: the tasks "
        "both batches counted)",
    )
    p.add_argument("--json", action="store_true", help="the comparison as one JSON object")
    return p


def task_passes(batch: Path, corpus: Sequence[str] | None) -> tuple[str, dict[str, bool | None]]:
    """(model · harness, per task final_pass) of a scored batch; None: no verdict. A batch
    scored Stage 1 only counts interceptions, as its leaderboard row does."""
    summary = read_summary(batch)
    if len(summary.entries) != 1:
        names = ", ".join(f"{e.model} · {e.harness}" for e in summary.entries) or "none"
        raise CompareError(f"{batch}: holds {len(summary.entries)} entries ({names}); compare "
                           "takes batches of one model and harness each")  # fmt: skip
    entry = summary.entries[0]
    judged = summary.pass_rate_with_judge is not None
    passes: dict[str, bool | None] = {}
    for row in summary.tasks:
        if row.status == "counted":
            task = row.test_case or f"?{row.run_dir}"
            passed = row.final_pass if judged else row.intercepted
            passes[task] = None if row.result_category is Category.JUDGE_ERROR else passed
    if corpus is not None:
        passes = {task: passes.get(task, False) for task in corpus}
    return f"{entry.model} · {entry.harness}", passes


def comparison(batch_a: Path, batch_b: Path, tasks: Path | None) -> Comparison:
    """The two batches compared (CompareError, SummaryError, CorpusError on bad input)."""
    corpus = sorted(load_corpus(tasks).tasks) if tasks is not None else None
    label_a, a = task_passes(batch_a, corpus)
    label_b, b = task_passes(batch_b, corpus)
    if label_a == label_b:
        label_a, label_b = f"{label_a} ({batch_a.name})", f"{label_b} ({batch_b.name})"
    return compare(a, b, label_a, label_b)


def main(argv: Sequence[str] | None = None) -> int:
    """Run clawbench-score compare; 0 on success, 2 on bad input."""
    args = parser().parse_args(argv)
    try:
        result = comparison(args.batch_a, args.batch_b, args.tasks)
    except (CompareError, SummaryError, CorpusError) as e:
        print(f"clawbench-score compare: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        sys.stdout.write(result.model_dump_json() + "\n")
    else:
        sys.stdout.write(render_comparison(result))
    return 0


__all__ = ["CompareError", "comparison", "main", "parser", "task_passes"]
