"""clawbench-report: one self-contained HTML page from scored batches.

    clawbench-report PATH... [-o report.html] [--title TEXT] [--calibration FILE]

PATH is a batch directory holding rescore-summary.json (written by clawbench-score), or a
directory of such batches. Links to run files are relative to the report's directory.
--calibration FILE adds the judge's calibration (written by clawbench-score calibrate --out).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from scorer.calibrate import CalibrationFileError, read_result
from scorer.html_report.load import ReportError, load_report
from scorer.html_report.render import write_report


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clawbench-report",
        description="Write one self-contained HTML report (leaderboard, funnels, task x model "
        "matrix, judge agreement, every run's details) from batches scored by clawbench-score.",
    )
    p.add_argument("paths", nargs="+", type=Path, help="a scored batch, or a directory of them")
    p.add_argument("-o", "--output", type=Path, default=Path("report.html"), help="report.html")
    p.add_argument("--title", default="ClawBench report", help="the page's title")
    p.add_argument(
        "--calibration",
        type=Path,
        help="the judge's calibration (clawbench-score calibrate --out FILE) to show beside the "
        "batches it scored",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: 0 on success, 1 when nothing could be reported, 2 on bad usage."""
    args = parser().parse_args(argv)
    try:
        calibration = read_result(args.calibration) if args.calibration else None
        report = load_report(args.paths, args.output)
        out = write_report(report, args.output, args.title, calibration)
    except (ReportError, CalibrationFileError, OSError) as e:
        print(f"clawbench-report: {e}", file=sys.stderr)
        return 1
    for problem in report.problems:
        print(f"clawbench-report: skipped: {problem}", file=sys.stderr)
    print(out)
    return 0


__all__ = ["main", "parser"]
