"""The README runs as written: its YAML blocks load with the project's models.yaml loader, and
every command of its shell blocks exists and takes the flags it is given (an argparse parse:
nothing runs, nothing reaches the network). Its first two commands stay what a fresh clone runs,
and it stays a guide: short, with its contents and glossary first."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import shlex
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from scorer.models_yaml import entry_config, read_models_yaml, read_prices
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
FIRST_COMMANDS = """```sh
scripts/setup.sh && .venv/bin/clawbench-demo        # set up, then run the whole pipeline once
scripts/setup.sh && .venv/bin/python -m pytest      # the tests
```"""
MAX_WORDS = 1600
EXTERNAL = {"git": "the corpus's repository is cloned with it"}
"""Commands the README uses that are not ours: named here with why, their flags not checked."""


def blocks(kind: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README) if lang == kind]


def commands(block: str) -> list[list[str]]:
    """Each command of a shell block: continuations joined, comments and env assignments off,
    `a && b` split."""
    text = block.replace("\\\n", " ")
    out: list[list[str]] = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        current: list[str] = []
        for word in [*words, "&&"]:
            if word in ("&&", ";", "||"):
                while current and re.match(r"^[A-Z_][A-Z0-9_]*=", current[0]):
                    current.pop(0)
                if current:
                    out.append(current)
                current = []
            else:
                current.append(word)
    return out


def _score_parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    from scorer.cli import COMMANDS, parser

    if argv and argv[0] in COMMANDS:
        return importlib.import_module(COMMANDS[argv[0]]).parser()
    return parser()


def _parsers() -> dict[str, Callable[[Sequence[str]], tuple[argparse.ArgumentParser, list[str]]]]:
    from proxy_addon.tasks.cli import parser as tasks
    from sandbox.demo.cli import parser as demo
    from sandbox.options import parser as sandbox
    from scorer.html_report.cli import parser as report

    def sub(make: Callable[[Sequence[str]], argparse.ArgumentParser]) -> Callable[..., tuple]:
        def pick(argv: Sequence[str]) -> tuple[argparse.ArgumentParser, list[str]]:
            rest = list(argv[1:]) if argv and argv[0] in ("compare", "calibrate") else list(argv)
            return make(argv), rest

        return pick

    return {
        "clawbench-sandbox": lambda argv: (sandbox(), list(argv)),
        "clawbench-demo": lambda argv: (demo(), list(argv)),
        "clawbench-score": sub(_score_parser),
        "clawbench-report": lambda argv: (report(), list(argv)),
        "clawbench-tasks": lambda argv: (tasks(), list(argv)),
    }


def check(argv: list[str]) -> None:
    """The command exists and its flags parse (AssertionError saying which line and why)."""
    program, args = argv[0], argv[1:]
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    if program.startswith(".venv/bin/"):
        name = program.removeprefix(".venv/bin/")
        if name == "python":
            assert args[:1] == ["-m"] and importlib.util.find_spec(args[1]), argv
            return
        assert name in scripts, f"{name}: not a command this project installs"
        parse, rest = _parsers()[name](args)
        try:
            parse.parse_args(rest)
        except SystemExit as e:  # argparse's own error: it printed why
            raise AssertionError(f"{shlex.join(argv)}: argparse refused it ({e})") from e
        except ValueError as e:  # clawbench-sandbox's UsageError
            raise AssertionError(f"{shlex.join(argv)}: {e}") from e
        return
    if program.startswith("scripts/"):
        path = ROOT / program
        assert path.is_file() and os.access(path, os.X_OK), f"{program}: not an executable script"
        return
    assert program in EXTERNAL, f"{shlex.join(argv)}: not ours and not a known external tool"


def test_the_first_two_commands_are_what_a_fresh_clone_runs() -> None:
    assert FIRST_COMMANDS in README.split("## ", 1)[0]


@pytest.mark.parametrize("block", blocks("sh"), ids=lambda b: b.split("\n", 1)[0][:40])
def test_every_command_exists_and_takes_its_flags(block: str) -> None:
    found = commands(block)
    assert found
    for argv in found:
        check(argv)


def test_the_check_refuses_what_would_not_run() -> None:
    """The check above can fail: a flag a command does not take, a command we do not have."""
    with pytest.raises(AssertionError, match="unrecognized arguments: --no-judge"):
        check([".venv/bin/clawbench-sandbox", "batch", "corpus", "--no-judge"])
    with pytest.raises(AssertionError, match="argparse refused it"):
        check([".venv/bin/clawbench-score", "compare", "a-batch-only"])
    with pytest.raises(AssertionError, match="--memory"):
        check([".venv/bin/clawbench-sandbox", "run", "task", "--memory", "4"])
    with pytest.raises(AssertionError, match="not a command this project installs"):
        check([".venv/bin/clawbench-nothing"])
    with pytest.raises(AssertionError, match="not ours"):
        check(["hf", "download", "x"])


@pytest.mark.parametrize("block", blocks("yaml"), ids=lambda b: b.split(":", 1)[0])
def test_every_models_yaml_block_loads_with_the_projects_loader(block: str, tmp_path: Path) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(block)
    entries = read_models_yaml(path)
    env = {name: "sk-readme-test" for name in re.findall(r"\$\{(\w+)\}", block)}
    for name, raw in entries.items():
        config = entry_config(str(name), raw, str(path), env)
        assert config.api_keys, name
    read_prices(path)


def test_the_readme_is_a_guide() -> None:
    words = len(README.split())
    assert words <= MAX_WORDS, f"{words} words: move depth to docs/"
    heads = re.findall(r"^## (.+)$", README, re.M)
    assert heads[:2] == ["Contents", "Words used here"], heads
    glossary = README.split("## Words used here", 1)[1].split("\n## ", 1)[0]
    for word in (
        "task",
        "commit",
        "eval_schema",
        "Stage 1 / Stage 2",
        "final_pass",
        "infra failure",
    ):
        assert f"**{word}**" in glossary, word
    for link in re.findall(r"\]\(((?:docs|test-cases)/[^)#]+)", README):
        assert (ROOT / link).is_file(), link
