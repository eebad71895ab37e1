"""A run whose run-meta.json is unreadable counts in its real entry, named by its path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.batches import task_json, write_corpus
from bench.reference_batches import reference_run
from proxy_addon.records import parse_run_dir
from proxy_addon.records.runpath import PathIdentity
from scorer.batch.leaderboard import LEADERBOARD_COLUMNS
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import Call, FakeModelAPI, Reply, verdict

GOOD = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"item": "red mug"}}
MODEL = "anthropic/claude-sonnet-4-6"
ROW = f"{MODEL},openclaw,v2,2,6,33.33,1.00,9.68,70.00,,,,3,judge-x,0,360,45,"
"""The runs' dataset (the reference's suite), no agent usage, none cannot_tell, the judge's
tokens, no price."""
SAFE = "anthropic--claude-sonnet-4-6"


@pytest.mark.parametrize(
    ("name", "parent", "harnesses", "slugs", "expected"),
    [
        (
            f"openclaw-t2-{SAFE}-20260101-120000",
            SAFE,
            (),
            (),
            PathIdentity(MODEL, "openclaw", "t2", "20260101-120000"),
        ),
        # a collision suffix; hyphens in the case, split at the first hyphen for lack of evidence
        (
            f"curl-v2-001-shop-{SAFE}-20260101-120000-2",
            SAFE,
            (),
            (),
            PathIdentity(MODEL, "curl", "v2-001-shop", "20260101-120000"),
        ),
        # a hyphen in the harness: a readable run of the batch names it
        (
            f"claude-code-v2-001-shop-{SAFE}-20260101-120000",
            SAFE,
            ("claude-code",),
            (),
            PathIdentity(MODEL, "claude-code", "v2-001-shop", "20260101-120000"),
        ),
        # ... or the corpus names the case
        (
            f"claude-code-v2-001-shop-{SAFE}-20260101-120000",
            SAFE,
            (),
            ("v2-001-shop", "shop"),
            PathIdentity(MODEL, "claude-code", "v2-001-shop", "20260101-120000"),
        ),
        # no readable run of this model: the model is its safe name
        (
            "h-c-qwen--qwen3-20260101-120000",
            "qwen--qwen3",
            (),
            (),
            PathIdentity("qwen--qwen3", "h", "c", "20260101-120000"),
        ),
        ("rerun-of-t3", "manual", (), (), None),
        (f"openclaw-{SAFE}-20260101-120000", SAFE, (), (), None),  # no case
        (f"openclaw-t2-{SAFE}-2026", SAFE, (), (), None),  # not a timestamp
        ("openclaw-t2-other-20260101-120000", SAFE, (), (), None),  # another model's name
    ],
)
def test_parse_run_dir(
    name: str,
    parent: str,
    harnesses: tuple[str, ...],
    slugs: tuple[str, ...],
    expected: PathIdentity | None,
) -> None:
    got = parse_run_dir(name, parent, models=[MODEL], harnesses=harnesses, slugs=slugs)
    assert got == expected


def by_instruction(call: Call) -> Reply:
    return verdict("mismatch" not in call.user.split("INTERCEPTED REQUEST")[0], "scripted")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    tasks = {f"t{i}": task_json(f"t{i}", task_id=i) for i in range(6)}
    tasks["t4"] = task_json("t4", task_id=4, instruction="This one is a mismatch")
    return write_corpus(tmp_path / "corpus" / "v9", tasks)


def make_batch(tmp_path: Path, corpus: Path) -> tuple[Path, Path]:
    """t0, t1 passed; t2 intercepted but its run-meta.json truncated; t3 not intercepted;
    t4 a judge mismatch; t5 never ran. One model, one harness."""
    batch = tmp_path / "out" / "batch-20260101-120000"
    t = {d.name: json.loads((d / "task.json").read_text()) for d in corpus.iterdir()}
    reference_run(batch, "t0", t["t0"], model=MODEL, request=GOOD)
    reference_run(batch, "t1", t["t1"], model=MODEL, request=GOOD)
    broken = reference_run(batch, "t2", t["t2"], model=MODEL, request=GOOD)
    reference_run(batch, "t3", t["t3"], model=MODEL)
    reference_run(batch, "t4", t["t4"], model=MODEL, request=GOOD)
    meta = broken / "run-meta.json"
    meta.write_text(meta.read_text()[:150])  # a writer killed mid-file
    (broken / "task.json").write_text(json.dumps(t["t2"], indent=2))  # the runner's copy
    (batch / "batch-summary.json").write_text(json.dumps({"elapsed_seconds": 3600}))
    return batch, meta


def score(batch: Path, judge: FakeModelAPI, *extra: str) -> dict:
    from scorer.cli import main

    yaml = models_yaml(batch.parent / "models.yaml", judge)
    args = [str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x", *extra]
    assert main([*args, "--allow-incomplete"]) == 0  # these batches hold infra failures
    return json.loads((batch / "rescore-summary.json").read_text())


def test_an_unreadable_run_meta_counts_in_its_real_entry(
    tmp_path: Path, corpus: Path, judge: FakeModelAPI
) -> None:
    judge.script(by_instruction)
    batch, meta = make_batch(tmp_path, corpus)
    csv = tmp_path / "board.csv"
    s = score(batch, judge, "--tasks", str(corpus), "--csv", str(csv))
    # Hand-computed: N = 6 (the corpus); intercepted t0 t1 t4 = 3; passed t0 t1 = 2;
    # mismatch t4; infra t2; not intercepted t3; missing t5.
    (entry,) = s["entries"]
    assert (entry["model"], entry["harness"]) == (MODEL, "openclaw")
    for counts in (entry, s):
        assert counts["n_total"] == 6 and counts["n_runs"] == 5
        assert (counts["n_intercepted"], counts["n_passed"], counts["n_judge_mismatch"]) == (
            3,
            2,
            1,
        )
        assert (counts["n_infra_failure"], counts["n_model_not_intercepted"]) == (1, 1)
        assert (counts["n_missing"], counts["n_extra"], counts["n_rerun"]) == (1, 0, 0)
        assert counts["pass_rate_stage1_only"] == pytest.approx(3 / 6)
        assert counts["pass_rate_with_judge"] == pytest.approx(2 / 6)
    assert entry["missing"] == ["t5"]
    assert entry["leaderboard"]["total"] == 6 and entry["leaderboard"]["pass_rate"] == "33.33"
    assert csv.read_text().splitlines() == [
        ",".join(LEADERBOARD_COLUMNS),  # no agent usage recorded: its columns are empty
        ROW,
    ]
    (row,) = [t for t in s["tasks"] if t["test_case"] == "t2"]
    assert row["status"] == "counted" and row["result_category"] == "infra_failure"
    assert (row["model"], row["harness"], row["task_id"]) == (MODEL, "openclaw", 2)
    assert str(meta) in row["infra_reason"] and "truncated JSON" in row["infra_reason"]
    assert any("directory's name and its task.json copy" in n for n in row["notes"])
    assert [t["test_case"] for t in s["tasks"] if t["status"] == "missing"] == ["t5"]
    assert judge.count == 3  # t0, t1, t4; the broken run is not judged
    assert len(meta.read_text()) == 150  # an unreadable run-meta.json is never rewritten


def test_the_task_json_copy_names_the_task_over_the_path(
    tmp_path: Path, corpus: Path, judge: FakeModelAPI
) -> None:
    """A run directory whose case part is no corpus slug still finds its task by the copy."""
    judge.script(by_instruction)
    batch, _meta = make_batch(tmp_path, corpus)
    broken = next(batch.rglob("openclaw-t2-*"))
    broken.rename(broken.with_name(broken.name.replace("-t2-", "-task-two-")))
    s = score(batch, judge, "--tasks", str(corpus))
    assert (s["n_total"], s["n_missing"], s["n_infra_failure"], len(s["entries"])) == (6, 1, 1, 1)
    (row,) = [t for t in s["tasks"] if t["result_category"] == "infra_failure"]
    assert row["test_case"] == "task-two" and row["task_id"] == 2


def test_a_run_no_path_names_adds_no_corpus_and_no_leaderboard_row(
    tmp_path: Path, corpus: Path, judge: FakeModelAPI
) -> None:
    judge.script(by_instruction)
    batch, _meta = make_batch(tmp_path, corpus)
    stray = batch / "manual" / "rerun-of-t3"  # copied by hand: not the layout
    stray.mkdir(parents=True)
    (stray / "run-meta.json").write_text('{"test_case": "t3", "mod')
    csv = tmp_path / "board.csv"
    s = score(batch, judge, "--tasks", str(corpus), "--csv", str(csv))
    real, unknown = s["entries"]
    assert (unknown["model"], unknown["harness"]) == ("unknown", "unknown")
    # The stray run is one failed run of task t3 (its directory's name): N 1, not the corpus.
    assert (unknown["n_total"], unknown["n_runs"], unknown["n_infra_failure"]) == (1, 1, 1)
    assert unknown["missing"] == [] and unknown["leaderboard"] is None
    assert unknown["pass_rate_with_judge"] == 0.0
    assert (real["n_total"], real["n_passed"], real["missing"]) == (6, 2, ["t5"])
    assert real["wall_hours"] == 1.0  # the batch's elapsed time is still the real entry's
    assert (s["n_total"], s["n_runs"], s["n_passed"], s["n_infra_failure"]) == (7, 6, 2, 2)
    assert s["pass_rate_with_judge"] == pytest.approx(2 / 7)
    assert csv.read_text().splitlines()[1:] == [ROW]
    rows = [t for t in s["tasks"] if t["model"] is None]
    assert [(t["test_case"], t["status"], t["run_dir"]) for t in rows] == [
        (None, "counted", "manual/rerun-of-t3")
    ]
    # scored again: the same rows, still no unknown row in the CSV
    csv.unlink()
    score(batch, judge, "--tasks", str(corpus), "--csv", str(csv))
    assert csv.read_text().splitlines()[1:] == [ROW]
