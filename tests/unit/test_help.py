"""Every command's --help names each value (FILE, DIR, NAME, N, ...), never argparse's raw
uppercased option name, gives every option and argument a line of help, and says the default
of each option that has one.
"""

from __future__ import annotations

import argparse
import tomllib
from collections.abc import Callable, Iterator

import pytest

from proxy_addon.addon.master import parser as proxy_parser
from proxy_addon.tasks.cli import parser as tasks_parser
from sandbox.demo.cli import parser as demo_parser
from sandbox.options import parser as sandbox_parser
from scorer.cli import parser as score_parser
from scorer.cli_calibrate import parser as calibrate_parser
from scorer.cli_compare import parser as compare_parser
from scorer.cli_goldset import parser as goldset_parser
from scorer.html_report.cli import parser as report_parser
from tests.conftest import ROOT

PARSERS: dict[str, Callable[[], argparse.ArgumentParser]] = {
    "clawbench-tasks": tasks_parser,
    "clawbench-score": score_parser,
    "clawbench-score calibrate": calibrate_parser,
    "clawbench-score compare": compare_parser,
    "clawbench-score goldset": goldset_parser,
    "clawbench-sandbox": sandbox_parser,
    "clawbench-demo": demo_parser,
    "clawbench-report": report_parser,
    "clawbench-proxy": proxy_parser,
}
UNSAID = (None, False, [], (), "", argparse.SUPPRESS)
"""Defaults that need no words: nothing, off, none given."""


def _commands(name: str) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """The command and its subcommands, each with its parser."""
    stack = [(name, PARSERS[name]())]
    while stack:
        command, p = stack.pop()
        yield command, p
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack += [(f"{command} {n}", sub) for n, sub in action.choices.items()]


def _problems(p: argparse.ArgumentParser) -> Iterator[str]:
    for action in p._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = "/".join(action.option_strings) or action.dest
        if not action.help:
            yield f"{name}: no help"
        if action.nargs == 0:
            continue  # a flag: no value to name, its default is off
        if action.metavar is None and action.choices is None:
            yield f"{name}: its value has no name (argparse shows {action.dest.upper()})"
        said = "default" in (action.help or "")
        if action.option_strings and action.default not in UNSAID and not said:
            yield f"{name}: its default {action.default!r} is not said"


def test_every_console_script_is_checked() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) <= set(PARSERS)


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_help_names_each_value_and_helps_each_option(command: str) -> None:
    problems = {name: found for name, p in _commands(command) if (found := list(_problems(p)))}
    assert problems == {}
