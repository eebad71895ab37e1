"""clawbench-score calibrate: how good is a judge? Run it on a labelled set (scorer.calibrate).

    clawbench-score calibrate GOLD --judge-model NAME [--models-yaml FILE] [--rubric strict]
                              [--min-kappa K] [--json]

GOLD is a calibration set (test-cases/judge-calibration, or your own in its format). Prints
accuracy, precision, recall, specificity and Cohen's kappa against the labels, a row per kind,
and every miss with the judge's reason. Exits 1 when kappa is below --min-kappa (or undefined),
so a judge configuration can be gated in CI.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from scorer.calibrate import calibrate
from scorer.calibration import CalibrationError, render_report
from scorer.judge.prompts import DUMP_LIMIT
from scorer.judge.scheduler import CallSettings, JudgeFatal
from scorer.models_yaml import DEFAULT_JUDGE, ConfigError, resolve_judge
from scorer.preflight import PreflightFailed, check_judges

EXIT_BELOW = 1
EXIT_USAGE = 2


def _kappa(value: str) -> float:
    k = float(value)
    if not -1 <= k <= 1:
        raise argparse.ArgumentTypeError("kappa lies between -1 and 1")
    return k


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clawbench-score calibrate",
        description="Run the judge on a labelled calibration set and report how it agrees with "
        "the labels (accuracy, precision, recall, Cohen's kappa, every miss).",
        epilog="exit codes:\n  0    the judge agrees at least --min-kappa\n  1    it agrees "
        "less (below the gate)\n  2    bad input, or a judge that cannot serve (the pre-flight "
        "failed, key refused, no such model)\n  130  interrupted",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("gold", type=Path, help="the set: a directory of calibration files, or one")
    p.add_argument("--judge-model", default=DEFAULT_JUDGE, help=f"default {DEFAULT_JUDGE}")
    p.add_argument("--models-yaml", type=Path, help="models.yaml (the reference's format)")
    p.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip the one-token call to the judge before the set is judged",
    )
    p.add_argument("--rubric", choices=("strict", "lenient"), default="strict")
    p.add_argument("--min-kappa", type=_kappa, help="exit 1 when kappa is below this")
    p.add_argument("--concurrency", type=int, default=16, help="judge calls in flight at most")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per judge call")
    p.add_argument("--dump-limit", type=int, default=DUMP_LIMIT, help="bytes of each request")
    p.add_argument("--json", action="store_true", help="the figures and misses as one object")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run clawbench-score calibrate; 0, 1 below --min-kappa, 2 on bad input, 130 interrupted."""
    args = parser().parse_args(argv)
    calls = CallSettings(concurrency=max(1, args.concurrency), timeout=args.timeout)
    try:
        judge = resolve_judge(args.judge_model, args.models_yaml)
        if not args.no_preflight:
            check_judges([judge], args.timeout)
        run = calibrate(args.gold, judge, args.rubric, calls, args.dump_limit)
    except (CalibrationError, ConfigError, JudgeFatal, PreflightFailed) as e:
        print(f"clawbench-score calibrate: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("clawbench-score calibrate: interrupted", file=sys.stderr)
        return 130
    kappa = run.metrics.kappa
    below = args.min_kappa is not None and (kappa is None or kappa < args.min_kappa)
    if args.json:
        out = {**run.to_json(), "min_kappa": args.min_kappa, "passed": not below}
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_report(run.cases, run.predictions, run.reasons, judge.name))
        if args.min_kappa is not None:
            shown = "n/a" if kappa is None else f"{kappa:.3f}"
            verdict = "below" if below else "at or above"
            sys.stdout.write(f"kappa {shown} is {verdict} --min-kappa {args.min_kappa:g}\n")
    return EXIT_BELOW if below else 0


__all__ = ["main", "parser"]
