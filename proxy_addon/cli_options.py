"""What every clawbench command's command line shares: a parser whose errors are one line (exit
2, no usage dump), and argument types whose messages say what the option takes.

argparse prints `argument --flag: MESSAGE` for a type's ArgumentTypeError, so a message never
names the flag itself, and never a function name (argparse's own "invalid _positive value").
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import NoReturn


class UsageError(ValueError):
    """A bad command line; the command prints it as one line and exits 2."""


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad command line as a UsageError instead of printing its usage
    and exiting: the command says it in one line, naming the flag and where help is."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= minimum."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            bound = "at least 1" if minimum == 1 else f"{minimum} or more"
            raise argparse.ArgumentTypeError(f"must be {bound}, not {value}")
        return value

    return parse


positive_int = whole_number(1)
"""A whole number >= 1 (a concurrency, a step cap)."""
count = whole_number(0)
"""A whole number >= 0 (a limit that may be zero)."""


def seconds(*, zero_ok: bool) -> Callable[[str], float]:
    """An argparse type: a finite number of seconds, > 0 (or >= 0 with zero_ok)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
        if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
            bound = ">= 0" if zero_ok else "> 0"
            raise argparse.ArgumentTypeError(
                f"must be a finite number of seconds {bound}, not {text}"
            )
        return value

    return parse


__all__ = ["OneLineParser", "UsageError", "count", "positive_int", "seconds", "whole_number"]
