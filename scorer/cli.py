"""clawbench-score: re-grade runs offline (Stage 1 re-check, Stage 2 LLM judge, summaries).

    clawbench-score PATH [--tasks DIR] [--judge-model NAME --models-yaml FILE] [--no-judge] ...

PATH is a batch directory, a directory of batches, or one run directory.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scorer.defaults import DEFAULT_JUDGE, DUMP_LIMIT

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def _positive(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _seconds(value: str) -> float:
    n = float(value)
    if not n > 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return n


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clawbench-score",
        description="Re-grade ClawBench runs without re-running agents: Stage 1 (the proxy's "
        "interception, re-checked), Stage 2 (an LLM judge), rescore-summary.json per batch and "
        "leaderboard rows.",
    )
    p.add_argument("path", nargs="?", type=Path, help="a batch, a directory of batches, or a run")
    p.add_argument("--only-batch", type=Path, help="same as PATH (the scoring document's form)")
    p.add_argument(
        "--tasks",
        type=Path,
        help="the task corpus the runs came from: sets N, "
        "missing and extra runs, judge_context and the Stage-1 re-check",
    )
    p.add_argument("--n-total", type=_positive, help="N to divide by (a published corpus size)")
    p.add_argument("--models-yaml", type=Path, help="models.yaml (the reference's format)")
    p.add_argument(
        "--judge-model",
        default=DEFAULT_JUDGE,
        help=f"judge entry name (default {DEFAULT_JUDGE}, built in: DEEPSEEK_API_KEY)",
    )
    p.add_argument("--rubric", choices=("strict", "lenient", "both"), default="strict")
    p.add_argument("--no-judge", action="store_true", help="Stage 1 only; no judge key needed")
    p.add_argument(
        "--concurrency",
        type=_positive,
        default=16,
        help="judge calls in flight at most (adapts down on 429); default 16",
    )
    p.add_argument("--timeout", type=_seconds, default=60.0, help="seconds per judge call")
    p.add_argument("--force", action="store_true", help="judge again, ignoring saved verdicts")
    p.add_argument("--limit", type=int, help="judge at most N runs this time")
    p.add_argument(
        "--enforce-recheck",
        action="store_true",
        help="a failed Stage-1 re-check withdraws the interception credit",
    )
    p.add_argument("--dataset", help="the dataset name of the leaderboard row")
    p.add_argument(
        "--dump-limit",
        type=_positive,
        default=DUMP_LIMIT,
        help=f"bytes of the request shown to the judge (default {DUMP_LIMIT})",
    )
    p.add_argument("--csv", type=Path, help="merge the leaderboard rows into this CSV file")
    p.add_argument("--json", action="store_true", help="print each summary as one JSON line")
    p.add_argument(
        "--progress",
        action="store_true",
        help="show progress even without a TTY (plain lines on stderr)",
    )
    p.add_argument("--debug", action="store_true", help="tracebacks on errors")
    return p


def _sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # finish the writes in progress, then stop, as on Ctrl-C


def _index_key(args: argparse.Namespace, path: Path) -> dict[str, Any]:
    """The options that shape the result (not concurrency, timeouts or output)."""

    def resolved(p: Path | None) -> str | None:
        return str(p.resolve()) if p is not None else None

    return {
        "path": resolved(path),
        "tasks": resolved(args.tasks),
        "n_total": args.n_total,
        "models_yaml": resolved(args.models_yaml),
        "judge_model": None if args.no_judge else args.judge_model,
        "rubric": None if args.no_judge else args.rubric,
        "no_judge": args.no_judge,
        "enforce_recheck": args.enforce_recheck,
        "dataset": args.dataset,
        "dump_limit": args.dump_limit,
    }


def _output(args: argparse.Namespace, shown: list[Any], line: str) -> None:
    if args.json:
        for b in shown:
            sys.stdout.write(json.dumps(b.summary, ensure_ascii=False) + "\n")
        return
    from rich.console import Console

    from scorer.display import print_batches

    console = Console()
    print_batches(shown, console)
    console.print(line, highlight=False)


def _warm_table() -> None:
    """Draw an empty table where nobody sees it: rich's imports and its first-use work (emoji
    codes, cell widths) are then done while the judge calls are out, not after the last one."""
    import io

    from rich.console import Console

    from scorer.display import Shown, print_batches

    print_batches([Shown("·", {"entries": [], "tasks": []}, "→")], Console(file=io.StringIO()))


def _up_to_date(args: argparse.Namespace, path: Path, key: dict[str, Any]) -> bool:
    """Answer from the score index when nothing changed; False to score in full."""
    from scorer import index
    from scorer.batch.discovery import sweep_temp_files
    from scorer.display import Shown

    if args.force or (path / "run-meta.json").is_file():
        return False
    saved = index.up_to_date(path, key)
    if saved is None:
        return False
    sweep_temp_files(path)
    if args.csv:
        from scorer.batch.leaderboard import merge_csv

        rows = [e["leaderboard"] for s in saved for e in s["entries"] if e["leaderboard"]]
        merge_csv(args.csv, rows)
    shown = [Shown(s["batch_dir"], s, "rescore-summary.json up to date") for s in saved]
    _output(args, shown, "this run: nothing changed since the last scoring; no judge calls")
    return True


def _scored(result: Any) -> tuple[list[Any], str]:
    from scorer.display import Shown

    shown = []
    for br in result.batches:
        note = None
        if not br.batch.single_run:
            note = "→ rescore-summary.json" if br.written else "rescore-summary.json unchanged"
        shown.append(Shown(str(br.batch.path), br.summary_json, note))
    line = f"this run: {result.runs} runs, {result.to_judge} verdicts asked, {result.cached} "
    line += f"cached, {result.reused_priors} reference verdicts reused"
    if (stats := result.stats) is not None:
        line += (
            f"; {stats.calls} calls, {stats.throttled} rate-limited (429), {stats.errors} judge "
            f"errors, tokens in {stats.input_tokens} out {stats.output_tokens}, "
            f"{stats.wall_s:.1f} s"
        )
        if not stats.json_mode:
            line += "; JSON mode off (the judge refused response_format)"
    if result.kept_on_error:
        line += f"; {result.kept_on_error} failed re-asks (--force) kept their saved verdict"
    for err in result.write_errors:
        line += f"\nwrite failed: {err}"
    return shown, line


def main(argv: Sequence[str] | None = None) -> int:
    """Run clawbench-score; 0 on success, 1 if a write failed, 2 on bad input, 130 interrupted."""
    # The collector is off while the modules (openai's above all) are imported: they make no
    # garbage, and its scans of them cost ~60 ms. The pipeline turns it on before judging.
    gc.disable()
    try:
        return _main(argv)
    finally:
        gc.enable()


def _main(argv: Sequence[str] | None) -> int:
    args = parser().parse_args(argv)
    path = args.path or args.only_batch
    if path is None or (args.path and args.only_batch and args.path != args.only_batch):
        print("clawbench-score: give one PATH (or --only-batch PATH)", file=sys.stderr)
        return EXIT_USAGE
    if args.limit is not None and args.limit < 0:
        print("clawbench-score: --limit must be 0 or more", file=sys.stderr)
        return EXIT_USAGE
    key = _index_key(args, path)
    try:
        previous = signal.signal(signal.SIGTERM, _sigterm)
    except ValueError:  # not the main thread (an embedding caller): leave signals alone
        previous = None
    try:
        from scorer.batch.leaderboard import LeaderboardError, check_csv, merge_csv

        try:
            if args.csv:
                check_csv(args.csv)  # before any work: a CSV we could not merge into
            if _up_to_date(args, path, key):
                return 0
        except LeaderboardError as e:
            print(f"clawbench-score: {e}", file=sys.stderr)
            return EXIT_USAGE
        from scorer.batch.corpus import CorpusError
        from scorer.batch.discovery import DiscoveryError
        from scorer.judge.scheduler import JudgeFatal
        from scorer.models_yaml import ConfigError
        from scorer.scoring import ScoreOptions, score

        opts = ScoreOptions(
            path=path,
            tasks=args.tasks,
            n_total=args.n_total,
            models_yaml=args.models_yaml,
            judge_model=args.judge_model,
            rubric=args.rubric,
            no_judge=args.no_judge,
            concurrency=args.concurrency,
            force=args.force,
            limit=args.limit,
            enforce_recheck=args.enforce_recheck,
            dataset=args.dataset,
            timeout=args.timeout,
            dump_limit=args.dump_limit,
            index_key=key,
            warm=None if args.json else _warm_table,
        )
        reporter: Any = None
        if sys.stderr.isatty():
            from rich.console import Console

            from scorer.display import ProgressReporter

            reporter = ProgressReporter(Console(stderr=True))
        elif args.progress:  # a log or a pipe: rich's transient bar would draw nothing there
            from scorer.display import PlainProgress

            reporter = PlainProgress(sys.stderr)
        try:
            result = score(opts, reporter)
            if args.csv:
                rows = [
                    e.leaderboard.model_dump()
                    for b in result.batches
                    for e in b.summary.entries
                    if e.leaderboard is not None
                ]
                merge_csv(args.csv, rows)
        except (ConfigError, CorpusError, DiscoveryError, LeaderboardError, JudgeFatal) as e:
            if args.debug:
                raise
            print(f"clawbench-score: {e}", file=sys.stderr)
            return EXIT_USAGE
    except KeyboardInterrupt:
        print(
            "clawbench-score: interrupted; the verdicts received are saved, run the same "
            "command again to finish",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    shown, line = _scored(result)
    _output(args, shown, line)
    if args.json:  # stdout holds JSON only; the table's "write failed" lines go to stderr
        for err in result.write_errors:
            print(f"clawbench-score: write failed: {err}", file=sys.stderr)
    return 1 if result.write_errors else 0


def entry() -> None:
    """The clawbench-score command: main(), then a quick exit. When main() returns every file is
    written and closed; only the interpreter's teardown is left (freeing the thousands of classes
    openai defines costs 0.2-0.3 s), which this skips once the output is flushed."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: exit as Python would, with its message
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    entry()
