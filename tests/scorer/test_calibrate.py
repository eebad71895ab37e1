"""clawbench-score calibrate on the shipped set, with scripted loopback judges of known quality."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.scripted_models.judge import JudgeCall, JudgeServer, Reply, error, verdict
from scorer.calibration import cases_of, load_set
from scorer.cli import main
from scorer.judge.prompts import request_dump
from tests.conftest import TEST_CASES
from tests.scorer.conftest import models_yaml

GOLD = TEST_CASES / "judge-calibration"
LABELS = {
    (task.instruction, request_dump(case.request.as_request()).text): case.label
    for task, case in cases_of(load_set(GOLD))
}
N = len(LABELS)


def asked(call: JudgeCall) -> tuple[str, str]:
    """(instruction, request dump) as the judge's user message carries them."""
    head, rest = call.user.split("\n\nINTERCEPTED REQUEST", 1)
    dump = rest.split("\n")[2]  # the line after the opening marker
    return head.removeprefix("INSTRUCTION (from the user):\n"), dump


def oracle(call: JudgeCall) -> Reply:
    return verdict(LABELS[asked(call)], "as labelled")


def flips_one_in_four(call: JudgeCall) -> Reply:
    """The label, except on every 4th case (by the dump's length): a judge of known misses."""
    key = asked(call)
    wrong = len(key[1]) % 4 == 0
    return verdict(LABELS[key] != wrong, "flipped" if wrong else "as labelled")


def run(
    tmp_path: Path, judge: JudgeServer, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict]:
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    capsys.readouterr()
    args = ["calibrate", str(GOLD), "--models-yaml", str(yaml), "--judge-model", "judge-x"]
    code = main([*args, "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_every_case_is_asked_once_with_the_real_prompt(
    tmp_path: Path, judge: JudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.script(oracle)
    code, out = run(tmp_path, judge, capsys, "--min-kappa", "0.9")
    assert code == 0 and out["passed"] is True
    assert judge.count == N >= 150 and len(set(map(asked, judge.calls))) == N
    assert "Rubric (strict)" in judge.calls[0].system
    m = out["metrics"]
    assert (m["n"], m["accuracy"], m["kappa"], m["n_errors"]) == (N, 1.0, 1.0, 0)
    assert out["misses"] == []


def test_a_judge_that_always_says_true_has_kappa_0_and_fails_the_gate(
    tmp_path: Path, judge: JudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.default = verdict(True, "looks fine")
    code, out = run(tmp_path, judge, capsys, "--min-kappa", "0.5")
    assert code == 1 and out["passed"] is False
    m = out["metrics"]
    positives = sum(LABELS.values())
    assert m["kappa"] == pytest.approx(0.0) and m["recall"] == 1.0
    assert m["precision"] == pytest.approx(positives / N) and m["fp"] == N - positives
    assert len(out["misses"]) == N - positives
    assert {x["reason"] for x in out["misses"]} == {"looks fine"}
    assert all(x["label"] is False and x["judge"] is True and x["why"] for x in out["misses"])


def test_a_judge_of_known_misses_is_reported_miss_by_miss(
    tmp_path: Path, judge: JudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.script(flips_one_in_four)
    wrong = {k for k in LABELS if len(k[1]) % 4 == 0}
    code, out = run(tmp_path, judge, capsys)
    assert code == 0 and len(out["misses"]) == len(wrong) > 0
    assert out["metrics"]["accuracy"] == pytest.approx(1 - len(wrong) / N)
    assert {x["reason"] for x in out["misses"]} == {"flipped"}
    capsys.readouterr()
    judge_x = ["--models-yaml", str(tmp_path / "models.yaml"), "--judge-model", "judge-x"]
    assert main(["calibrate", str(GOLD), *judge_x]) == 0
    text = capsys.readouterr().out
    assert f"Misses: {len(wrong)}" in text and "judge: flipped" in text and "why:" in text


def test_judge_errors_count_as_wrong_and_bad_input_is_one_line(
    tmp_path: Path, judge: JudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.default = Reply("no verdict here")
    code, out = run(tmp_path, judge, capsys, "--min-kappa", "0")
    assert code == 1 and out["metrics"]["n_errors"] == N and out["metrics"]["accuracy"] == 0.0
    judge.script(lambda call: error(401, "invalid api key"))
    capsys.readouterr()
    yaml = tmp_path / "models.yaml"
    judge_x = ["--models-yaml", str(yaml), "--judge-model", "judge-x"]
    assert main(["calibrate", str(tmp_path / "nowhere"), *judge_x]) == 2
    assert main(["calibrate", str(GOLD), *judge_x]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("clawbench-score calibrate: ") and "no such file" in err[0]
    assert "refused the API key" in err[1] and len(err) == 2
