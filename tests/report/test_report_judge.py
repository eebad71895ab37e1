"""The report and the judge: a cannot_tell run shown apart (legend, leaderboard, funnel, the run's
verdict and what the judge could not see), and the judge's calibration beside the batch it scored
(clawbench-report --calibration FILE)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.batches import task_json
from bench.reference_batches import reference_run
from proxy_addon.records import JudgeVerdict
from scorer.calibrate import read_result
from scorer.calibration import cases_of, load_set
from scorer.cli import main as score
from scorer.html_report.cli import main
from tests.conftest import TEST_CASES
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import Call, FakeModelAPI, Reply, start_judge_server
from tests.support.judges import ReasoningJudge, case_key, v2_reply

CART = "https://shop.example.com/api/cart"
ONE_TASK = TEST_CASES / "judge-calibration" / "v2" / "08-grocery-list-cart.json"


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModelAPI]:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    server = start_judge_server()
    yield server
    server.close()


def _judge(call: Call) -> Reply:
    if "(case-00)" in call.user:
        return v2_reply(JudgeVerdict.MATCH, "one red mug")
    if "(case-01)" in call.user:
        return v2_reply(JudgeVerdict.CANNOT_TELL, "no body", "the <b>body</b> was unreadable")
    return v2_reply(JudgeVerdict.NO_MATCH, "wrong mug")


def _batch(tmp_path: Path, judge: FakeModelAPI) -> tuple[Path, Path]:
    batch = tmp_path / "batch-20260101-120000"
    for i in range(3):
        case = f"case-{i:02d}"
        body = None if i == 1 else {"item": "red mug"}
        request = {"url": CART, "method": "POST", "body": body, "body_unverified": i == 1}
        reference_run(batch, case, task_json(case, task_id=i), request=request)
    judge.script(_judge)
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    score([str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x"])
    return batch, yaml


def test_a_cannot_tell_run_is_shown_apart(tmp_path: Path, judge: FakeModelAPI) -> None:
    batch, _yaml = _batch(tmp_path, judge)
    s = json.loads((batch / "rescore-summary.json").read_text())
    assert (s["n_passed"], s["n_judge_mismatch"], s["n_judge_cannot_tell"]) == (1, 1, 1)
    out = tmp_path / "report.html"
    assert main([str(batch), "-o", str(out)]) == 0
    page = out.read_text()
    assert 'data-judge-cannot-tell="1"' in page and "judge cannot tell" in page
    assert "1 cannot tell" in page  # the funnel's drop line
    assert 'class="verdict v-unsure">cannot tell<' in page
    assert "could not see: the &lt;b&gt;body&lt;/b&gt; was unreadable" in page  # escaped
    assert "o-judge_cannot_tell" in page


def test_the_calibration_of_the_judge_that_scored_the_batch(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    batch, yaml = _batch(tmp_path, judge)

    judge.script(ReasoningJudge({case_key(t, c): c.label for t, c in cases_of(load_set(ONE_TASK))}))
    calibration = tmp_path / "calibration.json"
    args = ["calibrate", str(ONE_TASK), "--models-yaml", str(yaml), "--judge-model", "judge-x"]
    assert score([*args, "--out", str(calibration), "--batch", str(batch)]) == 0
    capsys.readouterr()
    out = tmp_path / "report.html"
    assert main([str(batch), "-o", str(out), "--calibration", str(calibration)]) == 0
    page = out.read_text()
    result = read_result(calibration)
    assert 'id="calibration"' in page and 'href="#calibration"' in page
    assert result.prompt_version in page and "judge-x" in page
    assert "kappa (three verdicts)" in page and "The calibration passed every gate." in page
    # the batch's own rate: 1 match of 3 judged runs, and what that does to its score over N
    assert "its own pass rate among judged runs (1 of 3)" in page
    assert "on its pass rate over N = 3: +0.0 points" in page
    assert "not the judge calibrated here" not in page
    # another judge's calibration is named as such
    other = json.loads(calibration.read_text())
    other["judge"] = "judge-y"
    calibration.write_text(json.dumps(other))
    assert main([str(batch), "-o", str(out), "--calibration", str(calibration)]) == 0
    assert "scored by judge-x with prompt" in out.read_text()
    # a file calibrate did not write is one line and exit 1
    calibration.write_text('{"judge": "x"}')
    capsys.readouterr()
    assert main([str(batch), "-o", str(out), "--calibration", str(calibration)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"clawbench-report: {calibration}: ") and "calibrate --out" in err
