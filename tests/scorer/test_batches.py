"""Whole batches through clawbench-score: the reference's layout and shapes, ours, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.batches import our_run, task_json, write_corpus
from bench.reference_batches import reference_meta, reference_run
from scorer.cli import main
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import Call, FakeModelAPI, Reply, verdict
from tests.support.table_text import read_table

GOOD = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"item": "red mug"}}
WRONG_URL = {"url": "https://shop.example.com/api/wishlist", "method": "POST", "body": {}}


def by_instruction(call: Call) -> Reply:
    """The judge says match unless the instruction mentions 'mismatch'."""
    return verdict("mismatch" not in call.user.split("INTERCEPTED REQUEST")[0], "scripted")


def score(batch: Path, judge: FakeModelAPI, *extra: str) -> int:
    yaml = models_yaml(batch.parent / "models.yaml", judge)
    return main([str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x", *extra])


def summary(batch: Path) -> dict:
    return json.loads((batch / "rescore-summary.json").read_text())


def row(s: dict, case: str, status: str = "counted") -> dict:
    return next(t for t in s["tasks"] if t["test_case"] == case and t["status"] == status)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    tasks = {f"t{i}": task_json(f"t{i}", task_id=i) for i in range(6)}
    tasks["t4"] = task_json("t4", task_id=4, instruction="This one is a mismatch")
    tasks["t5"] = task_json("t5", task_id=5, judge_context={"rubric": "only red mugs count"})
    return write_corpus(tmp_path / "corpus" / "v9", tasks)


def reference_batch(tmp_path: Path, corpus: Path) -> Path:
    """A batch in the reference's layout: 7 runs of 6 corpus tasks plus one outside it."""
    batch = tmp_path / "out" / "batch-20260101-120000"
    t = {d.name: json.loads((d / "task.json").read_text()) for d in corpus.iterdir()}
    reference_run(batch, "t0", t["t0"], request=GOOD)  # passed
    reference_run(batch, "t1", t["t1"], request=GOOD, ts="20260101-100000")  # superseded ...
    reference_run(batch, "t1", t["t1"], ts="20260101-130000")  # ... by a newer non-interception
    reference_run(
        batch,
        "t2",
        t["t2"],
        request=GOOD,  # the reference's prior verdict
        judge_file={"match": False, "reason": "prior", "judge_model": "judge-x"},
    )
    reference_run(batch, "t3", t["t3"], result_category="api_or_credit")  # infra
    reference_run(batch, "t4", t["t4"], request=GOOD)  # judge mismatch
    reference_run(batch, "zz", task_json("zz"), request=GOOD)  # not in the corpus
    return batch  # t5: missing


def test_reference_batch_with_a_corpus(tmp_path: Path, corpus: Path, judge: FakeModelAPI) -> None:
    judge.script(by_instruction)
    batch = reference_batch(tmp_path, corpus)
    (batch / "batch-summary.json").write_text(json.dumps({"elapsed_seconds": 7200}))
    csv = tmp_path / "leaderboard.csv"
    assert score(batch, judge, "--tasks", str(corpus), "--csv", str(csv)) == 3  # t2, t3: infra
    s = summary(batch)
    assert (s["n_total"], s["n_runs"], s["n_rerun"], s["n_extra"], s["n_missing"]) == (
        6,
        7,
        1,
        1,
        1,
    )
    assert (s["n_intercepted"], s["n_passed"]) == (3, 1)
    assert (s["n_judge_match"], s["n_judge_mismatch"], s["n_judge_error"]) == (1, 2, 0)
    assert (s["n_model_not_intercepted"], s["n_infra_failure"]) == (1, 1)
    assert s["pass_rate_stage1_only"] == pytest.approx(3 / 6)
    assert s["pass_rate_with_judge"] == pytest.approx(1 / 6)
    assert s["reward_pct_strict"] == pytest.approx(1 / 6) and s["n_match_strict"] == 1
    # the runs name their dataset (the reference's suite): --tasks's directory name does not
    # change it, so a batch's label is the same with --tasks or without
    assert s["dataset"] == "v2" and s["judge_model"] == "judge-x" and s["rubric"] == "strict"
    assert s["provenance"]["package"] == "clawbench-intercept" and s["prompt_version"]
    assert judge.count == 2  # t0 and t4; t2 reused the reference's verdict, zz is not judged
    assert row(s, "t2")["verdict_source"] == "reference:judge.json"
    assert row(s, "t3")["reference_category"] == "api_or_credit"
    assert row(s, "t1", "rerun")["intercepted"] is True and row(s, "t1")["intercepted"] is False
    assert row(s, "zz", "extra")["result_category"] == "intercepted"
    assert row(s, "t5", "missing")["final_pass"] is False
    assert row(s, "t0")["recheck"] == {"status": "pass", "reasons": []}
    assert csv.read_text().splitlines() == [
        "model,harness,dataset,passed,total,pass_rate,wall_hours,pass_rate_ci_low,pass_rate_ci_high,"
        "agent_input_tokens,agent_output_tokens,agent_cost_usd,intercepted,judge,judge_cannot_tell,"
        "judge_input_tokens,judge_output_tokens,judge_cost_usd",
        # Wilson 1/6; the reference's runs recorded no agent usage; no run was cannot_tell; the
        # judge's two verdicts' tokens, no price for judge-x
        "anthropic/claude-sonnet-4-6,openclaw,v2,1,6,16.67,2.00,3.01,56.35,,,,3,judge-x,0,240,30,",
    ]


def test_run_meta_keeps_the_reference_keys_and_gains_ours(
    tmp_path: Path, corpus: Path, judge: FakeModelAPI
) -> None:
    judge.script(by_instruction)
    batch = reference_batch(tmp_path, corpus)
    run = next(batch.rglob("openclaw-t4-*"))
    before = json.loads((run / "run-meta.json").read_text())
    assert len(before) >= 30
    score(batch, judge, "--tasks", str(corpus))
    after = json.loads((run / "run-meta.json").read_text())
    ours = {"intercepted", "result_category", "judge_match", "judge_verdict", "final_pass"}
    ours.add("runner_category")
    assert {k: v for k, v in after.items() if k not in ours} == {
        k: v for k, v in before.items() if k not in ours
    }
    assert list(after)[: len(before)] == list(before)  # the order kept
    assert after["result_category"] == "judge_mismatch" and after["judge_match"] is False
    assert after["judge_verdict"] == "no_match"
    assert after["final_pass"] is False and after["runner_category"] == "intercepted"
    infra = json.loads(next(batch.rglob("openclaw-t3-*/run-meta.json")).read_text())
    assert infra["result_category"] == "infra_failure"
    assert infra["reference_category"] == "api_or_credit"
    assert infra["failure_category"] == "api_or_credit"  # the reference's key, untouched
    # scoring again leaves every file as it is
    stamps = {p: p.stat().st_mtime_ns for p in batch.rglob("*.json")}
    score(batch, judge, "--tasks", str(corpus))
    assert {p: p.stat().st_mtime_ns for p in batch.rglob("*.json")} == stamps


def test_without_a_corpus_n_is_the_distinct_tasks(tmp_path: Path, judge: FakeModelAPI) -> None:
    batch = tmp_path / "batch-20260101-120000"
    for i in range(3):
        our_run(
            batch,
            f"c{i}",
            task_json(f"c{i}"),
            interception={
                "intercepted": True,
                "request": GOOD,
                "schema": {},
                "intercepted_at": 1.0,
            },
        )
    our_run(batch, "c0", task_json("c0"), ts="20251231-000000")  # older, not intercepted
    our_run(batch, "c3", task_json("c3"))
    assert score(batch, judge) == 0
    s = summary(batch)
    assert (s["n_total"], s["n_rerun"], s["n_passed"], s["n_model_not_intercepted"]) == (4, 1, 3, 1)
    assert s["dataset"] is None and s["entries"][0]["dataset"] == "unknown"
    assert row(s, "c1")["recheck"]["status"] == "pass"  # from the run's own task.json copy


def test_corrupt_files_make_one_infra_failure_and_the_rest_is_scored(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "batch-20260101-120000"
    runs = [reference_run(batch, f"c{i}", task_json(f"c{i}"), request=GOOD) for i in range(4)]
    meta = runs[0] / "run-meta.json"
    meta.write_text(meta.read_text()[:150])  # truncated mid-write by an old writer
    inter = runs[1] / "data" / "interception.json"
    inter.write_text(inter.read_text()[:40])
    (runs[2] / "data" / "interception.json").unlink()
    assert score(batch, judge) == 3  # incomplete: the corrupt runs are infra failures
    s = summary(batch)
    assert s["n_infra_failure"] == 3 and s["n_passed"] == 1 and judge.count == 1
    reasons = [t["infra_reason"] for t in s["tasks"] if t["infra_reason"]]
    assert any(str(meta) in r and "truncated JSON" in r for r in reasons)
    assert any(str(inter) in r for r in reasons)
    assert any("says intercepted but data/interception.json is missing" in r for r in reasons)
    assert meta.read_text().startswith("{")  # an unreadable run-meta.json is never rewritten
    assert len(meta.read_text()) == 150
    out = capsys.readouterr().out
    assert "truncated JSON" in out


@pytest.mark.parametrize(
    ("shape", "category"),
    [
        ({"url": GOOD["url"], "method": "POST", "body": {"a": 1}}, "intercepted"),
        ({"intercepted": True, "url": GOOD["url"], "method": "POST", "body": {}}, "intercepted"),
        (
            {"intercepted": False, "url": None, "method": None, "body": None},
            "model_not_intercepted",
        ),
        ({"url": None, "method": None, "body": None}, "model_not_intercepted"),
        (
            {"intercepted": False, "stop_reason": "agent_exited", "url": None, "body": None},
            "model_not_intercepted",
        ),
        ({"intercepted": True, "url": None, "method": None, "body": None}, "infra_failure"),
    ],
)
def test_the_scoring_documents_flat_shape_of_a_hit_and_a_miss(
    tmp_path: Path, shape: dict, category: str
) -> None:
    """The scoring document's flat shape (docs/formats.md, "data/interception.json"):
    url/method/body at top level; a miss writes them as nulls and is the model's."""
    batch = tmp_path / "batch-20260101-120000"
    our_run(batch, "c0", task_json("c0"), interception=shape)
    assert main([str(batch), "--no-judge"]) == (3 if category == "infra_failure" else 0)
    (task,) = summary(batch)["tasks"]
    assert task["result_category"] == category, task["infra_reason"]


def test_a_truncated_task_copy_is_an_infra_failure_unless_the_corpus_has_the_task(
    tmp_path: Path, judge: FakeModelAPI
) -> None:
    """Without --tasks the run's task.json copy is its task (re-check, judge_context): a copy
    that is not JSON makes the run an infra failure naming it; with --tasks it is a note."""
    corpus = write_corpus(
        tmp_path / "corpus" / "v9", {"c0": task_json("c0"), "c1": task_json("c1")}
    )
    batch = tmp_path / "batch-20260101-120000"
    runs = [reference_run(batch, f"c{i}", task_json(f"c{i}"), request=GOOD) for i in range(2)]
    copy = runs[0] / "task.json"
    copy.write_text(json.dumps(task_json("c0"))[:60])  # a copy cut short
    assert score(batch, judge) == 3  # incomplete: c0 is an infra failure
    s = summary(batch)
    assert (s["n_infra_failure"], s["n_passed"], judge.count) == (1, 1, 1)
    assert str(copy) in row(s, "c0")["infra_reason"]
    assert "truncated JSON" in row(s, "c0")["infra_reason"]
    assert score(batch, judge, "--tasks", str(corpus)) == 0
    s = summary(batch)
    assert (s["n_infra_failure"], s["n_passed"], judge.count) == (0, 2, 2)
    assert any(str(copy) in n for n in row(s, "c0")["notes"])


def test_enforce_recheck_withdraws_the_credit(
    tmp_path: Path, corpus: Path, judge: FakeModelAPI
) -> None:
    batch = tmp_path / "batch-20260101-120000"
    reference_run(batch, "t0", task_json("t0", task_id=0), request=WRONG_URL)
    reference_run(batch, "t1", task_json("t1", task_id=1), request=GOOD)
    assert score(batch, judge, "--tasks", str(corpus)) == 0
    s = summary(batch)
    assert s["n_passed"] == 2 and s["n_recheck_failed"] == 1
    assert "not found in" in row(s, "t0")["recheck"]["reasons"][0]
    assert score(batch, judge, "--tasks", str(corpus), "--enforce-recheck") == 0
    s = summary(batch)
    assert s["n_passed"] == 1 and s["n_intercepted"] == 1 and s["enforce_recheck"] is True
    assert row(s, "t0")["result_category"] == "model_not_intercepted"
    meta = json.loads(next(batch.rglob("openclaw-t0-*/run-meta.json")).read_text())
    assert meta["intercepted"] is False and meta["final_pass"] is False


def test_no_judge_needs_no_key_and_calls_nothing(tmp_path: Path, judge: FakeModelAPI) -> None:
    batch = tmp_path / "batch-20260101-120000"
    reference_run(batch, "a", task_json("a"), request=GOOD)
    reference_run(batch, "b", task_json("b"))
    csv = tmp_path / "board.csv"
    assert main([str(batch), "--no-judge", "--csv", str(csv)]) == 0
    s = summary(batch)
    assert s["pass_rate_stage1_only"] == 0.5 and s["pass_rate_with_judge"] is None
    assert s["judge_model"] is None and s["n_unjudged"] == 1 and judge.count == 0
    assert s["n_passed"] is None and s["entries"][0]["n_passed"] is None  # nothing is passed
    row = dict(zip(*(line.split(",") for line in csv.read_text().splitlines()), strict=True))
    assert (row["passed"], row["pass_rate"], row["pass_rate_ci_low"]) == ("", "", "")
    assert (row["intercepted"], row["total"], row["judge"]) == ("1", "2", "not judged")


@pytest.mark.parametrize("problem", ["no such directory", "a directory", "other columns"])
def test_a_csv_that_cannot_be_merged_is_one_error_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], problem: str
) -> None:
    batch = tmp_path / "batch-20260101-120000"
    reference_run(batch, "a", task_json("a"), request=GOOD)
    csv = {
        "no such directory": tmp_path / "nodir" / "board.csv",
        "a directory": tmp_path,
        "other columns": tmp_path / "board.csv",
    }[problem]
    if problem == "other columns":
        csv.write_text("a,b\n1,2\n")
    for scored_before in (False, True):  # before any scoring, then after one
        if scored_before:
            assert main([str(batch), "--no-judge"]) == 0
        else:
            assert not (batch / "rescore-summary.json").exists()
        capsys.readouterr()
        assert main([str(batch), "--no-judge", "--csv", str(csv)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"clawbench-score: {csv}") and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1
        if not scored_before:
            assert not (batch / "rescore-summary.json").exists()  # no work was done
    if problem == "other columns":
        assert csv.read_text() == "a,b\n1,2\n"


def test_one_leaderboard_row_per_model_harness_and_dataset(tmp_path: Path) -> None:
    root = tmp_path / "sweep"
    for ts in ("20260101-120000", "20260102-120000"):
        reference_run(root / f"batch-{ts}", "a", task_json("a"), request=GOOD)
    csv = tmp_path / "board.csv"
    assert main([str(root), "--no-judge", "--csv", str(csv), "--dataset", "v9"]) == 0
    assert len(csv.read_text().splitlines()) == 2  # the header and one row


def test_timeout_must_be_positive(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for bad in ("0", "-1", "nan"):
        assert main([str(tmp_path), "--timeout", bad]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("clawbench-score: argument --timeout: must be a finite number")
        assert "\n" not in err


def test_json_output_reports_a_failed_write_on_stderr(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "batch-20260101-120000"
    run = reference_run(batch, "a", task_json("a"), request=GOOD)
    (run / "data" / "judge.json").mkdir()  # the verdict cannot be written there
    assert score(batch, judge, "--json") == 1
    out = capsys.readouterr()
    json.loads(out.out)  # stdout stays one JSON line a batch
    assert "clawbench-score: write failed:" in out.err and "judge.json" in out.err


def test_only_batch_alias_directory_of_batches_and_single_run(
    tmp_path: Path, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "sweep"
    b1, b2 = root / "batch-20260101-000000", root / "batch-20260102-000000"
    reference_run(b1, "a", task_json("a"), request=GOOD)
    run = reference_run(b2, "b", task_json("b"), request=GOOD)
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    common = ["--models-yaml", str(yaml), "--judge-model", "judge-x", "--json"]
    assert main(["--only-batch", str(root), *common]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [json.loads(line)["batch_dir"] for line in lines] == [str(b1), str(b2)]
    assert (b1 / "rescore-summary.json").exists() and not (root / "rescore-summary.json").exists()
    shutil.rmtree(b1)
    assert main([str(run), *common]) == 0
    single = json.loads(capsys.readouterr().out)
    assert single["n_total"] == 1 and single["tasks"][0]["run_dir"] == "."
    assert main(["--only-batch", str(b2), str(tmp_path), *common]) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge-model", "deepseek-v4-pro"], "DEEPSEEK_API_KEY is not set"),
        (["--judge-model", "nope", "--models-yaml", "{yaml}"], "judge model 'nope' not found"),
        (["--tasks", "{tmp}/no-corpus"], "not a directory"),
    ],
)
def test_config_errors_come_before_any_work(
    tmp_path: Path,
    judge: FakeModelAPI,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    batch = tmp_path / "batch-20260101-120000"
    reference_run(batch, "a", task_json("a"), request=GOOD)
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    before = {p: p.stat().st_mtime_ns for p in batch.rglob("*")}
    args = [a.replace("{yaml}", str(yaml)).replace("{tmp}", str(tmp_path)) for a in args]
    assert main([str(batch), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert {p: p.stat().st_mtime_ns for p in batch.rglob("*")} == before
    assert judge.count == 0


def test_nothing_to_score(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path), "--no-judge"]) == 2
    assert "no runs found" in capsys.readouterr().err


def test_reference_run_meta_judge_block_is_a_prior(tmp_path: Path, judge: FakeModelAPI) -> None:
    batch = tmp_path / "batch-20260101-120000"
    run = reference_run(batch, "a", task_json("a"), request=GOOD)
    meta = reference_meta(
        "a",
        task_json("a"),
        model="m",
        harness="h",
        intercepted=True,
        ts="20260101-120000",
        judge={"match": True, "judge_model": "judge-x"},
    )
    (run / "run-meta.json").write_text(json.dumps(meta))
    assert score(batch, judge) == 0 and judge.count == 0
    assert row(summary(batch), "a")["verdict_source"] == "reference:run-meta.json"
    assert score(batch, judge, "--force") == 0 and judge.count == 1


def test_a_body_the_proxy_could_not_read_is_counted_apart_in_stage_1(
    tmp_path: Path, capsys
) -> None:
    batch = tmp_path / "batch-20261204-120000"
    task = task_json("mugs", url_pattern=r"shop\.example/api/checkout")
    request = {"url": "https://shop.example/api/checkout", "method": "POST", "body": None}
    for case, unread in (("001-a", True), ("002-b", False)):
        our_run(
            batch,
            case,
            task,
            interception={
                "intercepted": True,
                "request": {**request, "body_unverified": unread},
                "schema": task["eval_schema"],
                "intercepted_at": 1.0,
            },
        )
    assert main([str(batch), "--no-judge"]) == 0
    s = summary(batch)
    assert (s["n_intercepted"], s["n_body_unverified"]) == (2, 1)
    (shown,) = read_table(capsys.readouterr().out).values()
    assert (shown["intercepted"], shown["body unread"]) == ("2", "1")
