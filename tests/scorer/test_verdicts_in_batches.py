"""Scripted judges of each kind scoring a batch through clawbench-score: the outcome each kind of
reply makes, what the files and the exit status say, and when a saved verdict is reused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.batches import task_json
from bench.reference_batches import reference_run
from proxy_addon.records import JudgeVerdict
from scorer.cli import EXIT_INCOMPLETE, main
from scorer.judge import prompts
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import FakeModelAPI
from tests.support.judges import MALFORMED, cannot_tell_judge, malformed, v2_reply
from tests.support.table_text import read_table

REQUEST = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"qty": 1}}


def batch_of(tmp: Path, n: int = 2) -> Path:
    batch = tmp / "batch-20260101-120000"
    for i in range(n):
        case = f"case-{i:02d}"
        reference_run(batch, case, task_json(case, task_id=i), request=REQUEST)
    return batch


def run(batch: Path, judge: FakeModelAPI, *extra: str, **settings: str) -> int:
    yaml = models_yaml(batch.parent / "models.yaml", judge, **settings)
    return main([str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x", *extra])


def summary(batch: Path) -> dict:
    return json.loads((batch / "rescore-summary.json").read_text())


def files(batch: Path, name: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(batch.rglob(name))]


def test_a_judge_that_reasons_first_leaves_its_checks_in_judge_json(
    tmp_path: Path, judge: FakeModelAPI
) -> None:
    judge.script(lambda call: v2_reply(JudgeVerdict.MATCH, "one mug"))
    batch = batch_of(tmp_path)
    assert run(batch, judge) == 0
    record = files(batch, "data/judge.json")[0]
    assert (record["verdict"], record["match"], record["missing"]) == ("match", True, "")
    assert [c["met"] for c in record["requirements"]] == ["yes", "yes"]
    assert record["judge_settings"]["model"] == "judge-x" and record["prompt_version"]
    s = summary(batch)
    assert (s["n_passed"], s["n_judge_match"], s["n_judge_cannot_tell"]) == (2, 2, 0)


def test_cannot_tell_is_a_verdict_counted_apart_and_never_a_pass(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    judge.script(cannot_tell_judge)
    batch = batch_of(tmp_path)
    capsys.readouterr()
    assert run(batch, judge) == 0  # a verdict: the result is complete
    out = capsys.readouterr().out
    (shown,) = read_table(out).values()
    assert shown["cannot tell"] == "2" and "the judge could not see: the body's values" in out
    s = summary(batch)
    assert (s["n_passed"], s["n_judge_cannot_tell"], s["n_judge_error"]) == (0, 2, 0)
    assert (s["n_judge_mismatch"], s["n_cannot_tell_strict"], s["n_judge_err_strict"]) == (0, 2, 0)
    assert s["pass_rate_with_judge"] == 0.0
    row = s["tasks"][0]
    assert (row["result_category"], row["match_strict"], row["verdict_strict"]) == (
        "judge_cannot_tell",
        False,
        "cannot_tell",
    )
    assert row["judge_missing"] == "the body's values" and row["final_pass"] is False
    meta = files(batch, "run-meta.json")[0]
    assert (meta["judge_verdict"], meta["judge_match"], meta["final_pass"]) == (
        "cannot_tell",
        False,
        False,
    )
    assert s["entries"][0]["leaderboard"]["judge_cannot_tell"] == "2"
    assert judge.count == 2
    assert run(batch, judge) == 0 and judge.count == 2  # a saved verdict: never asked again


@pytest.mark.parametrize("kind", ["no_verdict", "yes", "unsupported_match", "prose"])
def test_a_malformed_reply_is_a_judge_error_never_a_pass(
    tmp_path: Path, judge: FakeModelAPI, kind: str
) -> None:
    judge.script(malformed(kind))
    batch = batch_of(tmp_path, 1)
    assert run(batch, judge) == EXIT_INCOMPLETE  # no verdict: the result is incomplete
    assert run(batch, judge, "--allow-incomplete") == 0
    s = summary(batch)
    assert (s["n_passed"], s["n_judge_error"], s["n_judge_cannot_tell"]) == (0, 1, 0)
    record = files(batch, "data/judge.json")[0]
    assert record["match"] is None and record["verdict"] is None and record["error"]
    assert record["raw"] == MALFORMED[kind][:4000]
    assert files(batch, "run-meta.json")[0]["judge_verdict"] is None
    calls = judge.count
    run(batch, judge, "--allow-incomplete")
    assert judge.count == calls + 1  # no verdict was saved: a re-run asks again


def test_the_string_false_is_a_mismatch(tmp_path: Path, judge: FakeModelAPI) -> None:
    judge.script(malformed("string_false"))
    batch = batch_of(tmp_path, 1)
    assert run(batch, judge) == 0
    s = summary(batch)
    assert (s["n_passed"], s["n_judge_mismatch"], s["n_judge_error"]) == (0, 1, 0)


def test_a_changed_model_setting_or_prompt_asks_again(
    tmp_path: Path, judge: FakeModelAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge.script(lambda call: v2_reply(JudgeVerdict.NO_MATCH, "no"))
    batch = batch_of(tmp_path, 1)
    run(batch, judge, temperature="0")
    run(batch, judge, temperature="0")
    assert judge.count == 1  # unchanged: reused
    run(batch, judge, temperature="0.7")
    assert judge.count == 2  # another setting: another judge
    monkeypatch.setitem(prompts.SYSTEM, "strict", prompts.SYSTEM["strict"] + " Be brief.")
    run(batch, judge, temperature="0.7")
    assert judge.count == 3  # another prompt: asked again, under its own version
    record = files(batch, "data/judge.json")[0]
    assert record["prompt_version"] == prompts.prompt_version("strict")
    assert record["judge_settings"]["temperature"] == 0.7


def test_a_prior_verdict_is_reused_only_when_it_names_this_judge(
    tmp_path: Path, judge: FakeModelAPI
) -> None:
    judge.script(lambda call: v2_reply(JudgeVerdict.NO_MATCH, "no"))
    batch = batch_of(tmp_path, 3)
    runs = sorted(p for p in batch.rglob("openclaw-case-*") if p.is_dir())
    priors = [{"match": True}, {"match": True, "judge_model": "old-judge"}]
    priors.append({"match": True, "judge_model": "judge-x"})
    for run_dir, prior in zip(runs, priors, strict=True):
        (run_dir / "judge.json").write_text(json.dumps(prior))
    run(batch, judge)
    assert judge.count == 2  # the unnamed and the other judge's are asked again (#363)
    rows = {t["test_case"]: t for t in summary(batch)["tasks"]}
    assert rows["case-02"]["verdict_source"] == "reference:judge.json"
    assert rows["case-00"]["verdict_source"] == rows["case-01"]["verdict_source"] == "judge"
