"""clawbench-score: re-grade runs offline (Stage 1 re-check, Stage 2 LLM judges, summaries).

    clawbench-score PATH [--tasks DIR] [--judge-model NAME ...] [--decide RULE] [--no-judge] ...
    clawbench-score compare BATCH_A BATCH_B [--tasks DIR] [--json]     (scorer.cli_compare)
    clawbench-score calibrate [GOLD] --judge-model NAME [--require KIND=MIN] (scorer.cli_calibrate)
    clawbench-score goldset blind|agree ...  the gold set's blind second labelling (cli_goldset)

PATH is a batch directory, a directory of batches, or one run directory (./compare for a
directory of that name). The work is scorer.scoring.score(); this module turns argv into its
options and its result into output.
"""

from __future__ import annotations

import argparse
import importlib
import json
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from proxy_addon.cli_options import OneLineParser, UsageError, count, positive_int, seconds
from scorer.batch import DECIDE_RULES, NoProgress, Progress
from scorer.completeness import (
    EXIT_INCOMPLETE,
    Incomplete,
    incomplete_line,
    incompleteness,
    rerun_command,
    score_command,
)
from scorer.display import PlainProgress, ProgressReporter, print_result
from scorer.judge import DUMP_LIMIT, RUBRIC_CHOICES
from scorer.models_yaml import DEFAULT_JUDGE, JudgeKeyMissing, add_models_yaml_option
from scorer.scoring import SCORING_ERRORS, ScoreOptions, ScoreResult, score

COMMANDS = {
    "compare": "scorer.cli_compare",
    "calibrate": "scorer.cli_calibrate",
    "goldset": "scorer.cli_goldset",
}
"""Subcommand → its module, imported when chosen (calibrate's data is no part of scoring)."""
EXIT_WRITE_FAILED = 1
EXIT_USAGE = 2
NO_JUDGE_HINT = ", or pass --no-judge for Stage 1 only"
"""What the built-in judge's missing key adds here: this command can score without a judge."""
EXIT_INTERRUPTED = 130
EXIT_CODES = f"""exit codes:
  0    scored, and complete: every counted run has its verdict and none is an infra failure
       (or --allow-incomplete)
  {EXIT_WRITE_FAILED}    a file could not be written (the rest is written; run again)
  {EXIT_USAGE}    bad input, or a judge that cannot serve (pre-flight failed, key refused, no such
       model), before any verdict is asked
  {EXIT_INCOMPLETE}    incomplete: a verdict is missing (judge errors, timeouts, --limit) or a
       run is an infra failure (model_api_failure included); one line names them and the
       command that completes it (the same clawbench-score asks only for the missing verdicts)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C or SIGTERM); the verdicts received are saved"""


def _judge_arguments(p: argparse.ArgumentParser) -> None:
    """Which judges, how they decide, how they are called."""
    add_models_yaml_option(p)
    p.add_argument(
        "--judge-model",
        action="append",
        metavar="NAME",
        help=f"judge entry name (default {DEFAULT_JUDGE}, built in: DEEPSEEK_API_KEY); give it "
        "again for more judges: the first one's verdicts go to data/judge.json, each other's to "
        "data/judge.<model>.json",
    )
    p.add_argument(
        "--decide",
        choices=DECIDE_RULES,
        default="first",
        help="which judges decide final_pass: the first (default), a majority of all, or all "
        "of them (unanimous)",
    )
    p.add_argument(
        "--rubric",
        choices=tuple(RUBRIC_CHOICES),
        default="strict",
        help="the judge's rubric: strict (every detail the instruction gives; default), lenient "
        "(only an explicit contradiction fails), or both (strict decides final_pass)",
    )
    p.add_argument("--no-judge", action="store_true", help="Stage 1 only; no judge key needed")
    p.add_argument(
        "--concurrency",
        type=positive_int,
        default=16,
        metavar="N",
        help="judge calls in flight at most (adapts down on 429); default 16",
    )
    p.add_argument(
        "--timeout",
        type=seconds(zero_ok=False),
        default=60.0,
        metavar="S",
        help="seconds per judge call (default 60)",
    )
    p.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip the one-token call to each judge before the first verdict is asked",
    )


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="clawbench-score",
        description="Re-grade ClawBench runs without re-running agents: Stage 1 (the proxy's "
        "interception, re-checked), Stage 2 (an LLM judge), rescore-summary.json per batch and "
        "leaderboard rows. Also: clawbench-score compare A B (two batches task by task), "
        "clawbench-score calibrate [GOLD] (a judge against labelled cases), clawbench-score "
        "goldset blind|agree (the gold set's blind second labelling).",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "path",
        nargs="?",
        type=Path,
        metavar="PATH",
        help="a batch, a directory of batches, or a run",
    )
    p.add_argument(
        "--only-batch", type=Path, metavar="DIR", help="same as PATH (the scoring document's form)"
    )
    p.add_argument(
        "--tasks",
        type=Path,
        metavar="DIR",
        help="the task corpus the runs came from: sets N, "
        "missing and extra runs, judge_context and the Stage-1 re-check",
    )
    p.add_argument(
        "--n-total",
        type=positive_int,
        metavar="N",
        help="N to divide by, a published corpus size (default: --tasks' task count, else the "
        "number of tasks run)",
    )
    _judge_arguments(p)
    p.add_argument("--force", action="store_true", help="judge again, ignoring saved verdicts")
    p.add_argument("--limit", type=count, metavar="N", help="judge at most N runs this time")
    p.add_argument(
        "--enforce-recheck",
        action="store_true",
        help="a failed Stage-1 re-check withdraws the interception credit",
    )
    p.add_argument(
        "--dataset",
        metavar="NAME",
        help="the dataset name of the leaderboard row (default: unknown)",
    )
    p.add_argument(
        "--dump-limit",
        type=positive_int,
        default=DUMP_LIMIT,
        metavar="BYTES",
        help=f"bytes of the request shown to the judge (default {DUMP_LIMIT})",
    )
    p.add_argument(
        "--csv", type=Path, metavar="FILE", help="merge the leaderboard rows into this CSV file"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print each summary as one JSON line (several judges: then a ranking_agreement line)",
    )
    p.add_argument(
        "--progress",
        action="store_true",
        help="show progress even without a TTY (plain lines on stderr)",
    )
    p.add_argument(
        "--allow-incomplete",
        action="store_true",
        help=f"exit 0 on an incomplete result (missing verdicts, infra failures) instead of "
        f"{EXIT_INCOMPLETE}; it is still said on stderr",
    )
    p.add_argument("--debug", action="store_true", help="tracebacks on errors")
    return p


def options(args: argparse.Namespace) -> ScoreOptions:
    """ScoreOptions from parsed arguments (UsageError when they do not fit together)."""
    path = args.path or args.only_batch
    if path is None or (args.path and args.only_batch and args.path != args.only_batch):
        raise UsageError("give one PATH (or --only-batch PATH)")
    return ScoreOptions(
        paths=[path],
        judges=[] if args.no_judge else (args.judge_model or [DEFAULT_JUDGE]),
        decide=args.decide,
        models_yaml=args.models_yaml,
        tasks=args.tasks,
        n_total=args.n_total,
        rubric=args.rubric,
        concurrency=args.concurrency,
        force=args.force,
        limit=args.limit,
        enforce_recheck=args.enforce_recheck,
        dataset=args.dataset,
        csv=args.csv,
        timeout=args.timeout,
        dump_limit=args.dump_limit,
        preflight=not args.no_preflight,
    )


def _progress(args: argparse.Namespace) -> Progress:
    if sys.stderr.isatty():
        from rich.console import Console

        return ProgressReporter(Console(stderr=True))
    if args.progress:  # a log or a pipe: rich's transient bar would draw nothing there
        return PlainProgress(sys.stderr)
    return NoProgress()


def _sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # finish the write in progress, then stop, as on Ctrl-C


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM stops the scoring as Ctrl-C does, for the duration (main thread only)."""
    try:
        previous = signal.signal(signal.SIGTERM, _sigterm)
    except ValueError:  # not the main thread (an embedding caller): leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _output(args: argparse.Namespace, result: ScoreResult) -> None:
    if args.json:
        for b in result.batches:
            sys.stdout.write(json.dumps(b.summary.to_json(), ensure_ascii=False) + "\n")
        if result.ranking is not None:  # several judges: one more line, under its own key
            ranking = result.ranking.model_dump(mode="json")
            sys.stdout.write(json.dumps({"ranking_agreement": ranking}) + "\n")
        for err in result.write_errors:  # stdout holds JSON only
            print(f"clawbench-score: write failed: {err}", file=sys.stderr)
        return
    from rich.console import Console

    print_result(result, Console())


def main(argv: Sequence[str] | None = None) -> int:
    """Run clawbench-score (or its compare and calibrate commands); exit codes: EXIT_CODES."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        return importlib.import_module(COMMANDS[argv[0]]).main(argv[1:])
    try:
        args = parser().parse_args(argv)
    except UsageError as e:
        print(f"clawbench-score: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        with _sigterm_interrupts():
            result = score(options(args), _progress(args))
    except UsageError as e:
        print(f"clawbench-score: {e}", file=sys.stderr)
        return EXIT_USAGE
    except SCORING_ERRORS as e:
        if args.debug:
            raise
        print(
            f"clawbench-score: {e}{NO_JUDGE_HINT if isinstance(e, JudgeKeyMissing) else ''}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(
            "clawbench-score: interrupted; the verdicts received are saved, run the same "
            "command again to finish",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    _output(args, result)
    if result.write_errors:
        return EXIT_WRITE_FAILED
    found = incompleteness(result)
    if not found:
        return 0
    line = incomplete_line(found, _again(args), _rerun(found))
    print(f"clawbench-score: {line}", file=sys.stderr)
    return 0 if args.allow_incomplete else EXIT_INCOMPLETE


def _again(args: argparse.Namespace) -> str:
    """The clawbench-score command that asks for the missing verdicts (saved ones are reused)."""
    path = args.path or args.only_batch
    return score_command(path, args.judge_model or (), args.models_yaml, args.tasks)


def _rerun(found: Incomplete) -> str | None:
    """The batch --resume command for the infra failures, when one batch holds them all."""
    return rerun_command(found.batches[0]) if len(found.batches) == 1 else None


if __name__ == "__main__":
    sys.exit(main())
