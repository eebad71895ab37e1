"""The score index: a re-run that would change nothing is answered from the saved summaries, and
any change to an input (a new run, an edited file, other options, code) scores in full again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from scorer import index
from scorer.cli import main
from tests.scorer.builder import reference_run, task_json
from tests.scorer.conftest import models_yaml
from tests.support.judge_server import JudgeServer

GOOD = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"item": "mug"}}


@pytest.fixture
def scored(tmp_path: Path, judge: JudgeServer) -> tuple[Path, list[str]]:
    batch = tmp_path / "batch-20260101-120000"
    for i in range(3):
        reference_run(batch, f"c{i}", task_json(f"c{i}"), request=GOOD)
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    args = [str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x", "--json"]
    assert main(args) == 0
    assert judge.count == 3
    return batch, args


def answered_from_index(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[bool, dict]:
    capsys.readouterr()
    assert main(args[:-1]) == 0  # the table, whose last line says which path answered
    fast = "nothing changed since the last scoring" in capsys.readouterr().out
    assert main(args) == 0
    return fast, json.loads(capsys.readouterr().out)


def test_an_unchanged_batch_is_answered_from_the_index(
    scored: tuple[Path, list[str]], judge: JudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    batch, args = scored
    full = json.loads((batch / "rescore-summary.json").read_text())
    fast, shown = answered_from_index(args, capsys)
    assert fast and shown == full and judge.count == 3


@pytest.mark.parametrize(
    "change",
    [
        "new run",
        "edited interception",
        "deleted judge file",
        "other rubric",
        "summary edited",
        "index gone",
        "force",
    ],
)
def test_any_change_scores_in_full(
    scored: tuple[Path, list[str]],
    judge: JudgeServer,
    capsys: pytest.CaptureFixture[str],
    change: str,
) -> None:
    batch, args = scored
    if change == "new run":
        reference_run(batch, "c9", task_json("c9"), request=GOOD)
    elif change == "edited interception":
        path = next(batch.rglob("openclaw-c1-*")) / "data" / "interception.json"
        data = json.loads(path.read_text())
        data["request"]["body"] = {"item": "teapot"}
        with path.open("r+") as f:  # in place, no rename: only the file's own stat changes
            f.write(json.dumps(data).ljust(len(path.read_text())))
    elif change == "deleted judge file":
        next(batch.rglob("data/judge.json")).unlink()
    elif change == "other rubric":
        args = [*args[:-1], "--rubric", "lenient", "--json"]
    elif change == "summary edited":
        (batch / "rescore-summary.json").write_text("{}")
    elif change == "index gone":
        index.forget(batch)
    elif change == "force":
        args = [*args[:-1], "--force", "--json"]
    fast, shown = answered_from_index(args, capsys)
    assert not fast
    expected_calls = {
        "new run": 4,
        "edited interception": 4,
        "deleted judge file": 4,
        "other rubric": 6,
        "force": 9,
    }.get(change, 3)
    assert judge.count == expected_calls
    assert shown == json.loads((batch / "rescore-summary.json").read_text())
    assert shown["n_total"] == (4 if change == "new run" else 3)


def test_a_missing_key_is_still_an_error_on_an_unchanged_batch(
    tmp_path: Path,
    judge: JudgeServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    batch = tmp_path / "batch-20260101-120000"
    reference_run(batch, "c0", task_json("c0"), request=GOOD)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-x")
    monkeypatch.setenv("DEEPSEEK_BASE_URL", judge.base_url)
    assert main([str(batch)]) == 0
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    assert main([str(batch)]) == 2
    assert "DEEPSEEK_API_KEY is not set" in capsys.readouterr().err


def test_a_judge_parameter_from_the_environment_is_part_of_the_index(
    tmp_path: Path,
    judge: JudgeServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """thinking_level: ${LEVEL} in models.yaml: another value is another judge, scored in full
    (the key's value may change freely; the index keeps only a digest of parameter values)."""
    batch = tmp_path / "batch-20260101-120000"
    reference_run(batch, "c0", task_json("c0"), request=GOOD)
    yaml = models_yaml(
        tmp_path / "models.yaml", judge, api_key="${JUDGE_KEY}", thinking_level="${LEVEL}"
    )
    args = [str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x", "--json"]
    monkeypatch.setenv("JUDGE_KEY", "sk-first-key-value")
    monkeypatch.setenv("LEVEL", "off")
    assert main(args) == 0 and judge.count == 1
    monkeypatch.setenv("JUDGE_KEY", "sk-rotated-key-value")
    fast, _ = answered_from_index(args, capsys)
    assert fast and judge.count == 1
    monkeypatch.setenv("LEVEL", "high")
    fast, _ = answered_from_index(args, capsys)
    assert not fast and judge.count == 2  # the new parameters' verdict
    (path,) = Path(os.environ["CLAWBENCH_SCORE_CACHE"]).glob("index-*.json")
    text = path.read_text()
    assert "high" not in text and "sk-rotated-key-value" not in text


def test_the_index_lives_outside_the_batch(scored: tuple[Path, list[str]]) -> None:
    batch, _ = scored
    (path,) = Path(os.environ["CLAWBENCH_SCORE_CACHE"]).glob("index-*.json")
    assert path == index.index_path(batch)
    assert not [p for p in batch.rglob("*") if "index" in p.name]


def test_run_stats_taken_while_judging_match_the_files_at_the_end(
    tmp_path: Path, judge: JudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # Each run is stat'ed by the writer thread doing its last write (both rubrics: two writes
    # per run, from different threads); the index must hold exactly what is on disk at the end.
    batch = tmp_path / "batch-20260101-120000"
    for i in range(24):
        reference_run(batch, f"c{i}", task_json(f"c{i}"), request=GOOD)
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    args = [str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x", "--rubric", "both"]
    assert main([*args, "--concurrency", "8", "--json"]) == 0
    assert judge.count == 48
    saved = json.loads(index.index_path(batch).read_text())["stats"]
    runs = [str(p.parent) for p in batch.rglob("run-meta.json")]
    assert len(runs) == 24 and all(r in saved for r in runs)
    assert {p: index._stat(p) for p in saved} == saved
    fast, _ = answered_from_index([*args, "--json"], capsys)
    assert fast and judge.count == 48
