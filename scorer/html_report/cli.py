"""clawbench-report: one self-contained HTML page from scored batches, or one run as text.

    clawbench-report PATH... [-o report.html] [--title TEXT] [--calibration FILE]
    clawbench-report RUN_DIR
    clawbench-report --har PATH...

PATH is a batch directory holding rescore-summary.json (written by clawbench-score), or a
directory of such batches. Links to run files are relative to the report's directory.
--calibration FILE adds the judge's calibration (written by clawbench-score calibrate --out).
A single run directory prints that run's timeline as text; --har writes data/traffic.har for
every run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from proxy_addon.cli_options import OneLineParser, UsageError
from proxy_addon.records import RUN_META
from scorer.calibrate import CalibrationFileError, read_result
from scorer.html_report.harfiles import refresh_hars
from scorer.html_report.load import ReportError, load_report
from scorer.html_report.render import write_report
from scorer.html_report.runtext import single_run_view, timeline_text

EPILOG = """\
one run directory (holding run-meta.json) as the only PATH: its timeline as text on stdout (the
agent's steps, model calls, requests grouped by host, near misses, the block, the verdicts).

exit codes:
  0    the report was written (the timeline printed, every traffic.har written)
  1    writing it failed (the message says why; no half-written file is left)
  2    bad input: a path without a scored batch (--har: without runs), an -o that cannot be
       written, a --calibration file clawbench-score calibrate --out did not write"""


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="clawbench-report",
        description="Write one self-contained HTML report (leaderboard, funnels, task x model "
        "matrix,\njudge agreement, every run's timeline and details) from batches scored by "
        "clawbench-score.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="a scored batch, a directory of them, or one run",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        default=Path("report.html"),
        metavar="FILE",
        help="where the page goes (default: report.html, here)",
    )
    p.add_argument(
        "--title",
        default="ClawBench report",
        metavar="TEXT",
        help="the page's title (default: %(default)s)",
    )
    p.add_argument(
        "--calibration",
        type=Path,
        metavar="FILE",
        help="the judge's calibration (clawbench-score calibrate --out FILE) to show beside the "
        "batches it scored",
    )
    p.add_argument(
        "--har",
        action="store_true",
        help="write or refresh data/traffic.har (HAR 1.2) of every run under the paths, ours "
        "or the reference's layout, instead of a report",
    )
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


def _hars(paths: list[Path]) -> int:
    done = refresh_hars(paths)
    for problem in done.unfound + done.failed:
        print(f"clawbench-report: {problem}", file=sys.stderr)
    print(f"traffic.har written for {len(done.written)} run(s)")
    if done.failed:
        return 1
    return 2 if done.unfound or not done.written else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: 0 on success, 1 when writing failed, 2 on bad input (a path with no scored
    batch, or no run for --har; an -o that cannot be written)."""
    try:
        args = parser().parse_args(argv)
    except UsageError as e:
        print(f"clawbench-report: {e}", file=sys.stderr)
        return 2
    if args.har:
        return _hars(args.paths)
    if len(args.paths) == 1 and (args.paths[0] / RUN_META).is_file():
        sys.stdout.write(timeline_text(single_run_view(args.paths[0])))
        return 0
    try:
        check_output(args.output)
        calibration = read_result(args.calibration) if args.calibration else None
        report = load_report(args.paths, args.output)
    except (ReportError, CalibrationFileError) as e:
        print(f"clawbench-report: {e}", file=sys.stderr)
        return 2
    try:
        out = write_report(report, args.output, args.title, calibration)
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
