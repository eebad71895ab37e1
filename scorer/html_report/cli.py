"""clawbench-report: one self-contained HTML page from scored batches.

    clawbench-report PATH... [-o report.html] [--title TEXT]

PATH is a batch directory holding rescore-summary.json (written by clawbench-score), or a
directory of such batches. Links to run files are relative to the report's directory.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from scorer.html_report.load import ReportError, load_report
from scorer.html_report.render import write_report

EXIT_CODES = """exit codes:
  0    the report was written
  1    writing it failed (the message says why; no half-written page is left)
  2    bad input: a path without a scored batch, an -o that cannot be written"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clawbench-report",
        description="Write one self-contained HTML report (leaderboard, funnels, task x model "
        "matrix, judge agreement, every run's details) from batches scored by clawbench-score.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", type=Path, help="a scored batch, or a directory of them")
    p.add_argument("-o", "--output", type=Path, default=Path("report.html"), help="report.html")
    p.add_argument("--title", default="ClawBench report", help="the page's title")
    return p


def check_output(out: Path) -> None:
    """-o names a file that can be written, or ReportError says what to change (checked before
    any batch is read)."""
    if out.is_dir():
        raise ReportError(f"-o {out}: is a directory; name a file, e.g. -o {out / 'report.html'}")
    parent = out.parent
    if not parent.is_dir():
        raise ReportError(f"-o {out}: the directory {parent} does not exist; create it first")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ReportError(f"-o {out}: cannot write in {parent} (permission denied)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: 0 on success, 1 when writing the page failed, 2 on bad input (a path with
    no scored batch, an -o that cannot be written)."""
    args = parser().parse_args(argv)
    try:
        check_output(args.output)
        report = load_report(args.paths, args.output)
    except ReportError as e:
        print(f"clawbench-report: {e}", file=sys.stderr)
        return 2
    try:
        out = write_report(report, args.output, args.title)
    except OSError as e:
        print(
            f"clawbench-report: -o {args.output}: cannot write: {e.strerror or e}", file=sys.stderr
        )
        return 1
    for problem in report.problems:
        print(f"clawbench-report: skipped: {problem}", file=sys.stderr)
    print(out)
    return 0


__all__ = ["main", "parser"]
