"""Every flag an error message suggests is one the same command accepts (its --help lists it).

Bad input from the README's commands, one case per hint: a hint naming another command's flag
(clawbench-sandbox has no --no-judge) sends the user in circles.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from sandbox.cli import main as sandbox_main
from sandbox.demo.cli import main as demo_main
from sandbox.demo.cli import parser as demo_parser
from sandbox.options import parser as sandbox_parser
from scorer.cli import main as score_main
from scorer.cli import parser as score_parser
from scorer.html_report.cli import main as report_main
from scorer.html_report.cli import parser as report_parser
from tests.conftest import ROOT

QUICK = str(ROOT / "tests" / "sandbox" / "cases" / "quick-null")
FLAG = re.compile(r"(?<![\w./-])--?[a-z][a-z0-9-]*")


def _help(text: str) -> set[str]:
    return set(FLAG.findall(text))


def _sandbox_flags(command: str) -> set[str]:
    top = sandbox_parser()
    sub = next(a for a in top._subparsers._group_actions if a.choices)  # type: ignore[union-attr]
    return _help(top.format_help()) | _help(sub.choices[command].format_help())


def _world(tmp: Path) -> dict[str, str]:
    """Files the cases point at: a corpus with a task that does not load, a run, no summary."""
    corpus = tmp / "corpus"
    shutil.copytree(QUICK, corpus / "quick-null")
    (corpus / "broken").mkdir()
    (corpus / "broken" / "task.json").write_text('{"instruction": "x"}')
    run = tmp / "batch-20260101-000000" / "m" / "run-1"
    run.mkdir(parents=True)
    (run / "run-meta.json").write_text(json.dumps({"test_case": "x", "model": "m"}))
    (tmp / "e.yaml").write_text("{}\n")
    return {"corpus": str(corpus), "batch": str(run.parents[1]), "tmp": str(tmp)}


Main = Callable[[Sequence[str]], int]
COMMANDS: dict[str, tuple[Main, Callable[[], set[str]]]] = {
    "sandbox run": (sandbox_main, lambda: _sandbox_flags("run")),
    "sandbox batch": (sandbox_main, lambda: _sandbox_flags("batch")),
    "demo": (demo_main, lambda: _help(demo_parser().format_help())),
    "score": (score_main, lambda: _help(score_parser().format_help())),
    "report": (report_main, lambda: _help(report_parser().format_help())),
}
CASES = [
    # (command, argv, a flag the hint must name)
    ("sandbox run", ["run", QUICK, "--judge-model", "deepseek-v4-pro"], "--judge-model"),
    ("sandbox run", ["run", QUICK, "--judge-model", "nosuch"], "--models-yaml"),
    ("sandbox run", ["run", QUICK, "--harness", "browser-use"], "--model"),
    ("sandbox run", ["run", QUICK, "--harness", "browser-use", "--model", "m"], "--models-yaml"),
    ("sandbox run", ["run", QUICK, "--memory", "4"], "--memory"),
    ("sandbox run", ["run", QUICK, "--agent", "scripted"], "--script"),
    ("sandbox batch", ["batch", "{corpus}", "--out", "{tmp}/out"], "--skip-invalid"),
    ("sandbox batch", ["batch", QUICK, "--judge-model", "deepseek-v4-pro"], "--judge-model"),
    ("demo", ["--judge-model", "deepseek-v4-pro", "--models-yaml", "{tmp}/e.yaml"], "--no-judge"),
    ("demo", ["--no-judge", "--agent-model", "x"], "--agent-model"),
    ("demo", ["--judge-model", "nosuch"], "--models-yaml"),
    ("score", ["{batch}", "--judge-model", "deepseek-v4-pro"], "--no-judge"),
    ("score", ["{batch}", "--judge-model", "nosuch"], "--models-yaml"),
    ("report", ["{tmp}", "-o", "{tmp}/no/r.html"], "-o"),
]


@pytest.mark.parametrize(
    ("command", "argv", "expected"), CASES, ids=[f"{c} {e}" for c, _, e in CASES]
)
def test_every_flag_a_hint_names_is_accepted_by_the_same_command(
    command, argv, expected, tmp_path, monkeypatch, capsys
) -> None:
    main, accepted = COMMANDS[command]
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")  # nothing starts
    world = _world(tmp_path)
    out = ["--out", f"{tmp_path}/o"] if command == "demo" else []
    assert main([*out, *(a.format(**world) for a in argv)]) == 2
    err = capsys.readouterr().err
    named = set(FLAG.findall(err))
    assert expected in named, err
    assert named <= accepted(), (named - accepted(), err)


BAD_VALUES = [
    ("score", ["{batch}", "--concurrency", "two"], "argument --concurrency: 'two' is not a whole"),
    ("score", ["{batch}", "--timeout", "soon"], "argument --timeout: 'soon' is not a number of"),
    ("score", ["{batch}", "--limit", "-1"], "argument --limit: must be 0 or more, not -1"),
    ("demo", ["--concurrency", "0"], "argument --concurrency: must be at least 1, not 0"),
    ("report", [], "the following arguments are required: PATH"),
]


@pytest.mark.parametrize(("command", "argv", "message"), BAD_VALUES)
def test_a_bad_value_is_one_line_naming_the_flag_before_any_work(
    command, argv, message, tmp_path, capsys
) -> None:
    main, _ = COMMANDS[command]
    world = _world(tmp_path)
    assert main([a.format(**world) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    prog = {"score": "clawbench-score", "demo": "clawbench-demo", "report": "clawbench-report"}
    assert err.startswith(f"{prog[command]}: {message}") and "\n" not in err, err
    assert f"(see `{prog[command]} --help`)" in err and "invalid" not in err
