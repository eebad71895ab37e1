"""clawbench-score calibrate: how good is a judge? Run it on a labelled set (scorer.calibrate).

    clawbench-score calibrate [GOLD] --judge-model NAME [--models-yaml FILE] [--rubric strict]
                              [--require KIND=MIN ...] [--min-kappa K] [--pass-rate P ...]
                              [--batch DIR ...] [--out FILE] [--json]

GOLD is a calibration set (default: this checkout's test-cases/judge-calibration/v2). Prints the
judge, its settings and prompt version, kappa with its 95% interval, the confusion matrix,
recall, precision and the cannot_tell rate with intervals, a row per kind, the gates, the bias at
a few true pass rates (a batch's own with --batch, else 0.3 and 0.7) and every miss.

Exit status: 0 every gate passed; 1 a gate failed (a kind below its --require minimum, prompt
injection below 100% by default, kappa below --min-kappa); 2 bad input or a judge that cannot
serve; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from scorer.batch import SummaryError, read_summary
from scorer.calibrate import calibrate, write_result
from scorer.calibration import CalibrationError
from scorer.calibration_report import render
from scorer.calibration_stats import DEFAULT_GATES, DEFAULT_PASS_RATES
from scorer.judge import DUMP_LIMIT, CallSettings, JudgeFatal
from scorer.models_yaml import DEFAULT_JUDGE, ConfigError, add_models_yaml_option, resolve_judge
from scorer.preflight import PreflightFailed, check_judges

EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
SHIPPED_SET = Path(__file__).resolve().parents[1] / "test-cases" / "judge-calibration" / "v2"
"""The gold set v2 of a checkout (an installed package ships none: give GOLD)."""


def _kappa(value: str) -> float:
    k = float(value)
    if not -1 <= k <= 1:
        raise argparse.ArgumentTypeError("kappa lies between -1 and 1")
    return k


def _share(value: str) -> float:
    p = float(value)
    if not 0 <= p <= 1:
        raise argparse.ArgumentTypeError("a rate lies between 0 and 1")
    return p


def _requirement(value: str) -> tuple[str, float]:
    kind, sep, minimum = value.partition("=")
    if not sep or not kind.strip():
        raise argparse.ArgumentTypeError(f"{value!r}: write KIND=MIN, e.g. injection=1.0")
    return kind.strip(), _share(minimum)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clawbench-score calibrate",
        description="Run the judge on a labelled calibration set and report how it agrees with "
        "the labels: kappa with its interval, the confusion matrix, recall and precision per "
        "kind, cannot_tell, per-kind gates and the bias a pass rate would carry. Exit status: "
        "0 every gate passed, 1 a gate failed, 2 bad input or a judge that cannot serve, "
        "130 interrupted.",
    )
    p.add_argument(
        "gold", nargs="?", type=Path, metavar="DIR", help=f"the set (default {SHIPPED_SET})"
    )
    p.add_argument(
        "--judge-model",
        default=DEFAULT_JUDGE,
        metavar="NAME",
        help=f"the judge's entry name (default {DEFAULT_JUDGE}, built in: DEEPSEEK_API_KEY)",
    )
    add_models_yaml_option(p)
    p.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip the one-token call to the judge before the set is judged",
    )
    p.add_argument(
        "--rubric",
        choices=("strict", "lenient"),
        default="strict",
        help="the judge's rubric: strict (every detail the instruction gives; default) or "
        "lenient (only an explicit contradiction fails)",
    )
    gated = ", ".join(f"{k}={v:g}" for k, v in DEFAULT_GATES.items())
    p.add_argument(
        "--require",
        type=_requirement,
        action="append",
        default=[],
        metavar="KIND=MIN",
        help="fail (exit 1) when fewer than MIN of the kind's cases are answered as labelled; "
        f"repeat for more kinds (default {gated}; a v1 kind may be named by its last part)",
    )
    p.add_argument(
        "--min-kappa",
        type=_kappa,
        metavar="K",
        help="fail (exit 1) when kappa is below K (default: no kappa gate)",
    )
    p.add_argument(
        "--pass-rate",
        type=_share,
        action="append",
        default=[],
        metavar="RATE",
        help="a true pass rate to show the bias at (repeat; default "
        f"{' and '.join(str(x) for x in DEFAULT_PASS_RATES)}, or each --batch's own)",
    )
    p.add_argument(
        "--batch",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a scored batch: the bias at its own pass rate among judged runs (repeatable)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=16,
        metavar="N",
        help="judge calls in flight at most (default 16)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds per judge call (default 60)",
    )
    p.add_argument(
        "--dump-limit",
        type=int,
        default=DUMP_LIMIT,
        metavar="BYTES",
        help=f"bytes of each request shown to the judge (default {DUMP_LIMIT})",
    )
    p.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="write the result here (clawbench-report reads it; default: not written)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    return p


def _batch_rate(batch: Path) -> float:
    """A batch's own pass rate among its judged runs (SummaryError when it has none)."""
    s = read_summary(batch)
    judged = s.n_judge_match + s.n_judge_mismatch + s.n_judge_cannot_tell
    if not judged:
        raise SummaryError(f"{batch}: no judged run to take a pass rate from")
    return s.n_judge_match / judged


def main(argv: Sequence[str] | None = None) -> int:
    """Run clawbench-score calibrate; see the module's exit statuses."""
    args = parser().parse_args(argv)
    gold = args.gold or SHIPPED_SET
    calls = CallSettings(concurrency=max(1, args.concurrency), timeout=args.timeout)
    try:
        if args.out is not None and not args.out.parent.is_dir():
            raise CalibrationError(args.out, "", f"--out: directory {args.out.parent} is missing")
        rates = [*args.pass_rate, *(_batch_rate(b) for b in args.batch)] or DEFAULT_PASS_RATES
        judge = resolve_judge(args.judge_model, args.models_yaml)
        if not args.no_preflight:
            check_judges([judge], args.timeout)
        result = calibrate(
            gold,
            judge,
            args.rubric,
            calls,
            args.dump_limit,
            dict(args.require),
            args.min_kappa,
            rates,
        )
        if args.out is not None:
            write_result(args.out, result)
    except (CalibrationError, ConfigError, JudgeFatal, SummaryError, PreflightFailed) as e:
        print(f"clawbench-score calibrate: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"clawbench-score calibrate: {args.out}: cannot write: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("clawbench-score calibrate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.json:
        sys.stdout.write(json.dumps(result.model_dump(mode="json"), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render(result))
    return 0 if result.passed else EXIT_FAILED


__all__ = ["SHIPPED_SET", "main", "parser"]
