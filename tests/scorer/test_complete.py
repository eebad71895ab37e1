"""Exit codes a script can trust: an incomplete result (a verdict missing, a run an infra
failure) exits 3 with one line naming what is missing and the command that completes it, unless
--allow-incomplete; and the judge's pre-flight stops a command before any verdict is asked."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from bench.batches import our_run, task_json
from proxy_addon.records import BatchSummary, write_summary
from scorer.cli import main
from tests.scorer.conftest import FAKE_KEY, models_yaml
from tests.scorer.test_judge_loopback import batch_of, judge_files, summary
from tests.support.fake_api import FakeModelAPI, error, verdict

ENTRY = "anthropic/claude-sonnet-4-6 · openclaw · "
"""How the incomplete line names batch_of's runs: model · harness · task."""


def _score(batch: Path, judge: FakeModelAPI, *extra: str) -> int:
    yaml = models_yaml(batch.parent / "models.yaml", judge)
    return main([str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x", *extra])


def test_a_judge_that_errors_on_every_call_leaves_it_incomplete_and_a_rerun_asks_only_those(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = batch_of(tmp_path, 3)
    judge.script([verdict(True)])  # case-00 gets its verdict, then every call fails
    judge.default = error(500, "the judge is down")
    assert _score(batch, judge, "--concurrency", "1") == 3
    err = capsys.readouterr().err
    yaml = batch.parent / "models.yaml"
    assert (
        f"clawbench-score: incomplete: 2 verdict(s) missing ({ENTRY}case-01, {ENTRY}case-02): "
        f"`clawbench-score "
        f"{batch} --judge-model judge-x --models-yaml {yaml}` asks the judge for those only"
    ) in err
    assert summary(batch)["n_judge_error"] == 2 and FAKE_KEY not in err
    asked = judge.count
    judge.default = verdict(True)
    assert _score(batch, judge) == 0  # complete now
    assert judge.count == asked + 2  # the two missing verdicts, nothing else
    assert summary(batch)["n_passed"] == 3 and "incomplete" not in capsys.readouterr().err
    assert _score(batch, judge) == 0 and judge.count == asked + 2


def test_allow_incomplete_exits_0_and_still_says_so(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = batch_of(tmp_path, 1)
    judge.default = error(500, "the judge is down")
    assert _score(batch, judge, "--allow-incomplete") == 0
    assert f"incomplete: 1 verdict(s) missing ({ENTRY}case-00)" in capsys.readouterr().err


def test_an_infra_failure_names_the_resume_that_reruns_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model_api_failure run stays one (its own kind of infra failure) through scoring."""
    batch = tmp_path / "out" / "batch-20260101-120000"
    run = our_run(batch, "c0", task_json("c0"), stop_reason="agent_exited")
    meta = json.loads((run / "run-meta.json").read_text())
    why = "model API failed: no reply in 3 call(s) (3 auth); last: HTTP 401 from http://m/v1/x"
    meta.update(result_category="model_api_failure", infra_failure=True, failure_reason=why)
    (run / "run-meta.json").write_text(json.dumps(meta))
    our_run(batch, "c1", task_json("c1"), stop_reason="agent_exited")
    corpus = tmp_path / "corpus"
    write_summary(
        batch,
        BatchSummary(
            started_at="a", finished_at="b", elapsed_seconds=1, max_concurrent=1,
            harness="browser-use", image="clawbench-sandbox:x", corpus=str(corpus),
        ),
    )  # fmt: skip
    assert main([str(batch), "--no-judge"]) == 3
    err = capsys.readouterr().err
    assert (
        "incomplete: 1 run(s) an infra failure, 1 of them model_api_failure (qwen/qwen3-coder · "
        "curl · c0): "
        f"`clawbench-sandbox batch {corpus} <the batch's options> --resume {batch}` re-runs them"
    ) in err
    s = summary(batch)
    assert (s["n_infra_failure"], s["n_model_api_failure"], s["n_model_not_intercepted"]) == (
        1,
        1,
        1,
    )
    (c0,) = [t for t in s["tasks"] if t["test_case"] == "c0"]
    assert c0["result_category"] == "model_api_failure" and why in c0["infra_reason"]
    rescored = json.loads((run / "run-meta.json").read_text())
    assert rescored["result_category"] == "model_api_failure"
    assert main([str(batch), "--no-judge", "--allow-incomplete"]) == 0


def test_the_line_names_each_run_by_its_entry_and_task_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One task run by two models and two harnesses, each run an infra failure: the line tells
    them apart (model · harness · task), and names a run re-run in a second batch once."""
    out = tmp_path / "out"
    for batch in (out / "batch-20260101-120000", out / "batch-20260102-120000"):
        for model, harness in (("qwen/qwen3-coder", "curl"), ("m2", "curl"), ("m2", "bu")):
            run = our_run(batch, "c0", task_json("c0"), model=model, harness=harness)
            meta = json.loads((run / "run-meta.json").read_text())
            meta.update(result_category="infra_failure", infra_failure=True, failure_reason="x")
            (run / "run-meta.json").write_text(json.dumps(meta))
    assert main([str(out), "--no-judge"]) == 3
    err = capsys.readouterr().err
    named = "m2 · bu · c0, m2 · curl · c0, qwen/qwen3-coder · curl · c0"
    assert f"incomplete: 6 run(s) an infra failure ({named}): " in err, err


def test_a_judge_that_fails_its_preflight_stops_before_any_verdict(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = batch_of(tmp_path, 2)
    judge.preflight = error(401, "Incorrect API key provided")
    assert _score(batch, judge) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "clawbench-score: pre-flight: judge 'judge-x' "
        f"({batch.parent / 'models.yaml'}): {judge.base_url}/chat/completions answered HTTP 401 "
        "(invalid_request_error: Incorrect API key provided): the key was refused: check the "
        "entry's api_key (and its environment variable) (--no-preflight skips this check)"
    )
    assert judge.count == 0 and judge.preflights == 1 and judge_files(batch) == []
    # --no-preflight: straight to the judge (whose calls this fake answers)
    assert _score(batch, judge, "--no-preflight") == 0
    assert judge.count == 2 and judge.preflights == 1
    # nothing left to ask: no pre-flight either
    assert _score(batch, judge) == 0 and judge.preflights == 1


def test_a_judge_nobody_listens_for_is_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    batch = batch_of(tmp_path, 1)
    yaml = tmp_path / "models.yaml"
    yaml.write_text(
        f"judge-x:\n  base_url: http://127.0.0.1:{port}/v1\n  api_type: openai-completions\n"
        f"  api_key: {FAKE_KEY}\n"
    )
    assert main([str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x"]) == 2
    err = capsys.readouterr().err
    assert f"could not reach http://127.0.0.1:{port}/v1/chat/completions" in err
    assert "check the base_url" in err and FAKE_KEY not in err
