"""The scorer as a library (scorer.scoring) and the sandbox's use of it (sandbox.judging)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import scorer.scoring as scoring_module
from bench.batches import task_json
from bench.reference_batches import reference_run
from sandbox.judging import JudgeUnavailable, check_judge, score_run, score_runs
from scorer.models_yaml import ConfigError
from scorer.scoring import ScoreOptions, resolve_judge, score
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import Call, FakeModelAPI, Reply, error, verdict

GOOD = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"qty": 1}}


def batch_of(tmp: Path) -> Path:
    """Three tasks: a matching commit, a mismatching one, one never intercepted."""
    batch = tmp / "batch-20260101-120000"
    reference_run(batch, "yes", task_json("yes", task_id=1), request=GOOD)
    reference_run(batch, "no", task_json("no", task_id=2), request=GOOD)
    reference_run(batch, "none", task_json("none", task_id=3))
    return batch


def by_case(call: Call) -> Reply:
    return verdict("(yes)" in call.user, "by case")


def test_the_public_surface_is_pinned() -> None:
    assert set(scoring_module.__all__) == {
        "SCORING_ERRORS",
        "BatchScore",
        "Progress",
        "RunScore",
        "ScoreOptions",
        "ScoreResult",
        "judge_spec",
        "resolve_judge",
        "resolve_judges",
        "score",
    }


def test_score_returns_every_run_typed_and_writes_the_summary(
    tmp_path: Path, judge: FakeModelAPI
) -> None:
    judge.script(by_case)
    batch = batch_of(tmp_path)
    config = resolve_judge("judge-x", models_yaml(tmp_path / "models.yaml", judge))
    result = score(ScoreOptions(paths=[batch], judges=[config]))
    (b,) = result.batches
    assert b.path == batch and b.written and not b.single_run
    assert b.summary.to_json() == json.loads((batch / "rescore-summary.json").read_text())
    runs = {r.test_case: r for r in b.runs}
    assert {k: (r.intercepted, r.judge_match, r.final_pass) for k, r in runs.items()} == {
        "yes": (True, True, True),
        "no": (True, False, False),
        "none": (False, None, False),
    }
    assert [runs[k].result_category for k in ("yes", "no", "none")] == [
        "passed",
        "judge_mismatch",
        "model_not_intercepted",
    ]
    assert runs["yes"].run_dir.parent.parent == batch
    assert result.to_judge == 2 and result.calls["judge-x"].calls == 2
    again = score(ScoreOptions(paths=[batch], judges=[config]))
    assert again.cached == 2 and again.calls == {} and not again.batches[0].written
    assert judge.count == 2


def test_a_judge_named_is_resolved_after_the_paths_are_found(tmp_path: Path) -> None:
    with pytest.raises(scoring_module.DiscoveryError):
        score(ScoreOptions(paths=[tmp_path / "nowhere"], judges=["no-such-judge"]))
    batch = batch_of(tmp_path)
    with pytest.raises(ConfigError, match="only deepseek-v4-pro is built in; pass --models-yaml"):
        score(ScoreOptions(paths=[batch], judges=["no-such-judge"]))
    assert not (batch / "rescore-summary.json").exists()
    stage1 = score(ScoreOptions(paths=[batch]))  # no judge: Stage 1 only
    assert stage1.batches[0].summary.pass_rate_with_judge is None


def test_resolve_judge_names_the_file_and_the_fix(tmp_path: Path, judge: FakeModelAPI) -> None:
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    with pytest.raises(ConfigError) as caught:
        resolve_judge("judge-y", yaml)
    message = str(caught.value)
    assert str(yaml) in message and "entries: judge-x" in message and "add an entry" in message


def test_the_sandbox_resolves_once_and_scores_through_the_library(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.script(by_case)
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    with pytest.raises(JudgeUnavailable, match="--judge-model: judge model 'nope' not found"):
        check_judge("nope", yaml)
    config = check_judge("judge-x", yaml)
    batch = batch_of(tmp_path)
    run = next(batch.rglob("openclaw-yes-*"))
    result = score_runs(run, config)
    assert [(r.run_dir, r.judge_match) for r in result.batches[0].runs] == [(run, True)]
    out = capsys.readouterr()
    assert out.out == "" and "this run: 1 runs" in out.err  # the table on stderr, stdout free
    judge.script(lambda call: error(401, "invalid api key"))
    assert score_run(batch, config) == (2, None)
    err = capsys.readouterr().err
    assert err.startswith("clawbench-score: the judge refused the API key of judge-x")
