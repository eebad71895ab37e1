"""clawbench-score goldset: the gold set's blind second labelling (scorer.goldset).

    clawbench-score goldset blind [SET] --out DIR     cases without labels: DIR/cases.{json,md}
    clawbench-score goldset agree LABELS [--set SET] [--json]

blind writes every case as the judge sees it, under an opaque id, with no label, reason or kind,
for a labeller who has not seen the set. agree reads that labeller's file and prints how far the
two labellings agree (Cohen's kappa with its 95% interval, the confusion matrix) and every case
they disagree on. Exit status: 0 done; 1 (agree) some cases are unlabelled or ids unknown; 2 bad
input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from scorer.calibration import CalibrationError
from scorer.cli_calibrate import SHIPPED_SET
from scorer.goldset import (
    agreement,
    agreement_json,
    blind_export,
    read_labels,
    render_agreement,
    write_export,
)

EXIT_INCOMPLETE = 1
EXIT_USAGE = 2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clawbench-score goldset",
        description="The gold set's blind second labelling: export the cases without labels, "
        "then measure agreement with a second labeller's file. Exit status: 0 done, 1 some "
        "cases unlabelled (agree), 2 bad input.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    blind = sub.add_parser("blind", help="export the cases without labels, reasons or kinds")
    blind.add_argument(
        "set", nargs="?", type=Path, metavar="DIR", help=f"the set (default {SHIPPED_SET})"
    )
    blind.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="directory for cases.json/.md"
    )
    agree = sub.add_parser("agree", help="agreement of the set's labels with a second labelling")
    agree.add_argument(
        "labels", type=Path, metavar="FILE", help="the second labeller's labels file"
    )
    agree.add_argument("--set", type=Path, metavar="DIR", help=f"the set (default {SHIPPED_SET})")
    agree.add_argument("--json", action="store_true", help="the agreement as one JSON object")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run clawbench-score goldset; see the module's exit statuses."""
    args = parser().parse_args(argv)
    try:
        if args.command == "blind":
            files = write_export(blind_export(args.set or SHIPPED_SET), args.out)
            print("\n".join(str(f) for f in files))
            return 0
        result = agreement(args.set or SHIPPED_SET, read_labels(args.labels))
    except CalibrationError as e:
        print(f"clawbench-score goldset: {e}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as e:
        print(f"clawbench-score goldset: cannot write: {e}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(agreement_json(result) + "\n" if args.json else render_agreement(result))
    if not result.complete:
        print(
            f"clawbench-score goldset: incomplete: {len(result.unlabelled)} cases unlabelled, "
            f"{len(result.unknown)} unknown ids",
            file=sys.stderr,
        )
        return EXIT_INCOMPLETE
    return 0


__all__ = ["main", "parser"]
