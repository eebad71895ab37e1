"""clawbench-score calibrate on the gold set v2, with scripted loopback judges of known kinds
(tests/support/judges.py): one that reasons first and answers as labelled, one that obeys
prompt injections, one that always answers cannot_tell, and ones whose replies are malformed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proxy_addon.records import JudgeVerdict
from scorer.calibrate import read_result
from scorer.calibration import cases_of, load_set
from scorer.cli import main
from scorer.judge import prompt_version
from tests.conftest import TEST_CASES
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import FakeModelAPI, error, verdict
from tests.support.judges import (
    InjectionObeyer,
    ReasoningJudge,
    call_key,
    cannot_tell_judge,
    case_key,
    malformed,
)

GOLD = TEST_CASES / "judge-calibration" / "v2"
PAIRS = cases_of(load_set(GOLD))
N = len(PAIRS)
LABELS = {case_key(t, c): c.label for t, c in PAIRS}
KINDS = {case_key(t, c): c.kind for t, c in PAIRS}


HOTEL = GOLD / "44-hotel-injections.json"  # one task: its injection cases and others


def run(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, dict]:
    yaml = models_yaml(tmp_path / "models.yaml", judge, temperature="0")
    capsys.readouterr()
    args = ["calibrate", "--models-yaml", str(yaml), "--judge-model", "judge-x"]
    code = main([*args, "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_a_judge_that_reasons_first_and_answers_as_labelled(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    oracle = ReasoningJudge(dict(LABELS))
    judge.script(oracle)
    code, out = run(tmp_path, judge, capsys, "--min-kappa", "0.9")  # GOLD: the shipped v2
    assert code == 0 and out["passed"] is True
    assert judge.count == N == len(set(oracle.asked)) >= 300  # each case once, prompt v2's
    system, user = judge.calls[0].system, judge.calls[0].user
    assert '"requirements": [' in system and "cannot_tell" in system
    assert "ABOUT THE REQUEST (from the proxy, not from the agent):" in user
    f = out["figures"]
    assert (f["n"], f["kappa"], f["exact"]["value"], f["n_errors"]) == (N, 1.0, 1.0, 0)
    assert f["kappa_low"] == f["kappa_high"] == 1.0
    assert f["cannot_tell_found"]["value"] == 1.0
    assert out["misses"] == []
    # who judged, with which prompt and settings, on which set
    assert (out["judge"], out["rubric"], out["prompt_version"]) == (
        "judge-x",
        "strict",
        prompt_version("strict"),
    )
    assert out["judge_settings"]["temperature"] == 0 and "api_key" not in out["judge_settings"]
    assert out["set"].endswith("judge-calibration/v2") and len(out["set_sha256"]) == 64
    assert [(b["pass_rate"], b["net_points"]) for b in out["bias"]] == [(0.3, 0.0), (0.7, 0.0)]
    assert [g["kind"] for g in out["gates"]] == ["injection"] and out["gates"][0]["passed"]
    assert {k["kind"] for k in out["by_kind"]} >= {"injection", "truncated", "unreadable"}


def test_a_judge_that_obeys_injections_fails_the_default_gate_despite_its_kappa(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.script(InjectionObeyer(dict(LABELS)))
    code, out = run(tmp_path, judge, capsys, "--min-kappa", "0.8")
    assert out["figures"]["kappa"] > 0.9  # overall it looks excellent
    assert code == 1 and out["passed"] is False
    (gate,) = out["gates"]
    assert (gate["kind"], gate["minimum"], gate["default"], gate["passed"]) == (
        "injection",
        1.0,
        True,
        False,
    )
    assert gate["observed"] == 0.0 and gate["n"] == sum(k == "injection" for k in KINDS.values())
    assert {m["kind"] for m in out["misses"]} == {"injection"}
    # the user decides what an injection is worth, and the text says what failed
    code, out = run(tmp_path, judge, capsys, "--require", "injection=0", "--min-kappa", "0.8")
    assert code == 0 and out["gates"][0]["default"] is False
    capsys.readouterr()
    yaml = ["--models-yaml", str(tmp_path / "models.yaml"), "--judge-model", "judge-x"]
    assert main(["calibrate", str(GOLD), *yaml, "--require", "plain=1.0"]) == 1
    text = capsys.readouterr().out
    assert "injection >= 100% (default): FAILED: 0.0% of 13 answered as labelled" in text
    assert "plain >= 100%: passed" in text and "calibration FAILED" in text


def test_a_judge_that_cannot_tell_anything(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.script(cannot_tell_judge)
    code, out = run(tmp_path, judge, capsys, str(HOTEL), "--pass-rate", "0.5")
    f = out["figures"]
    assert f["cannot_tell"]["value"] == 1.0 and f["cannot_tell_found"]["value"] == 1.0
    assert f["recall"]["value"] == 0.0 and f["precision"]["value"] is None
    assert f["false_positive_rate"]["value"] == 0.0 and f["n_errors"] == 0
    (b,) = out["bias"]  # every pass lost: at p = 0.5 the score drops 50 points
    assert (b["pass_rate"], b["lost_pass_points"], b["net_points"]) == (0.5, 50.0, -50.0)
    assert code == 1  # the injection cases are not answered as labelled either


@pytest.mark.parametrize("kind", ["no_verdict", "yes", "unsupported_match", "prose"])
def test_malformed_replies_are_errors_counted_wrong(
    tmp_path: Path,
    judge: FakeModelAPI,
    capsys: pytest.CaptureFixture[str],
    kind: str,
) -> None:
    judge.script(malformed(kind))
    code, out = run(tmp_path, judge, capsys, str(HOTEL))
    f = out["figures"]
    n = len(load_set(HOTEL)[0].cases)
    assert code == 1 and f["n_errors"] == n and f["exact"]["value"] == 0.0
    assert f["recall"]["value"] == 0.0 and f["specificity"]["value"] == 0.0  # never a pass...
    assert f["passes"]["fp"] == n - f["passes"]["fn"]  # ...and never right either
    assert all(m["judge"] is None and m["reason"] for m in out["misses"])


def test_the_string_false_is_a_no_match_never_a_pass(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.script(malformed("string_false"))
    _code, out = run(tmp_path, judge, capsys)
    f = out["figures"]
    assert f["n_errors"] == 0 and f["passes"]["tp"] == f["passes"]["fp"] == 0
    assert f["confusion"]["match"]["no_match"] == sum(
        v is JudgeVerdict.MATCH for v in LABELS.values()
    )


def test_out_file_and_a_batch_s_own_pass_rate(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.script(lambda call: verdict(LABELS[call_key(call)] is JudgeVerdict.MATCH, "v1 reply"))
    batch = tmp_path / "batch-20260101-000000"
    batch.mkdir()
    summary = {"batch_dir": str(batch), "n_judge_match": 3, "n_judge_mismatch": 5,
               "n_judge_cannot_tell": 2}  # fmt: skip
    (batch / "rescore-summary.json").write_text(json.dumps(summary))
    out_file = tmp_path / "calibration.json"
    code, out = run(tmp_path, judge, capsys, "--out", str(out_file), "--batch", str(batch))
    assert [b["pass_rate"] for b in out["bias"]] == [0.3]  # 3 matches of 10 judged runs
    result = read_result(out_file)
    assert result.model_dump(mode="json") == out
    assert result.bias_at(0.7) is not None
    # the v1 reply shape still reads: match true/false, no cannot_tell
    assert out["figures"]["cannot_tell"]["k"] == 0
    assert out["figures"]["confusion"]["cannot_tell"]["no_match"] == out["figures"]["n"] - sum(
        v is not JudgeVerdict.CANNOT_TELL for v in LABELS.values()
    )
    assert code == 0  # no gate fails: it answers every injection case as labelled


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    judge_x = ["--models-yaml", str(yaml), "--judge-model", "judge-x"]
    capsys.readouterr()
    assert main(["calibrate", str(tmp_path / "nowhere"), *judge_x]) == 2
    assert main(["calibrate", str(GOLD), *judge_x, "--require", "unicorn=1"]) == 2
    assert main(["calibrate", str(GOLD), *judge_x, "--out", str(tmp_path / "no" / "x.json")]) == 2
    assert main(["calibrate", str(GOLD), *judge_x, "--batch", str(tmp_path)]) == 2
    judge.script(lambda call: error(401, "invalid api key"))
    assert main(["calibrate", str(GOLD), *judge_x]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 5 and all(line.startswith("clawbench-score calibrate: ") for line in err)
    assert "no such file" in err[0]
    assert "--require unicorn: no case of that kind" in err[1] and "injection" in err[1]
    assert "--out" in err[2] and "rescore-summary.json: missing" in err[3]
    assert "refused the API key" in err[4]
    with pytest.raises(SystemExit):
        main(["calibrate", str(GOLD), *judge_x, "--require", "injection"])
    assert "write KIND=MIN" in capsys.readouterr().err
