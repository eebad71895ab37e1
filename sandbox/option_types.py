"""Argument types of clawbench-sandbox's options: each rejects a bad value with a message that
says what it takes (argparse prints it with the option's name)."""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable

from proxy_addon.cli_options import positive_int, seconds
from sandbox.host import DEFAULT_IMAGE, parse_size


def default_image() -> str:
    return os.environ.get("CLAWBENCH_SANDBOX_IMAGE") or DEFAULT_IMAGE


def command(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("the command is empty")
    return text


def size(minimum: int = 1) -> Callable[[str], int]:
    """An argparse type: a size with a unit (512m, 2g), at least minimum bytes."""

    def parse(text: str) -> int:
        try:
            value = parse_size(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"{text} is below the least it can be, {minimum >> 20}m (write e.g. 512m or 2g)"
            )
        return value

    return parse


def cpus(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of CPUs") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of CPUs > 0, not {text}")
    return value


__all__ = ["command", "cpus", "default_image", "positive_int", "seconds", "size"]
