"""find_batches: which directory is each run's batch (docs/formats.md, "The run directory")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scorer.batch import DiscoveryError, find_batches
from scorer.batch.discovery import sweep_temp_files


def _run(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "run-meta.json").write_text("{}")
    return path


def _layout(batches: list) -> dict[str, list[str]]:
    out = {}
    for b in batches:
        root = b.path
        out[root.name] = [str(r.relative_to(root)) for r in b.runs]
    return out


def test_runs_group_under_their_nearest_batch_directory(tmp_path: Path) -> None:
    top = tmp_path / "results"
    _run(top / "batch-b" / "model" / "run-2")
    _run(top / "batch-b" / "model" / "run-1")
    _run(top / "batch-a" / "run-1")
    _run(top / "batch-a" / "inner" / "batch-c" / "run-9")  # nested: batch-c is the nearest
    _run(top / "loose" / "run-7")  # in no batch-*: the path given is its batch
    _run(top / "batch-run")  # a run named batch-*: a run, never a batch of itself
    (top / "batch-empty").mkdir()
    (top / ".hidden").mkdir()
    _run(top / ".hidden" / "run-0")  # hidden directories are not searched

    assert _layout(find_batches(top)) == {
        "batch-a": ["run-1"],
        "batch-b": ["model/run-1", "model/run-2"],
        "batch-c": ["run-9"],
        "results": ["batch-run", "loose/run-7"],
    }


def test_a_run_or_a_batch_given_directly(tmp_path: Path) -> None:
    run = _run(tmp_path / "batch-x" / "run-1")
    [single] = find_batches(run)
    assert single.single_run and single.runs == [run]
    [batch] = find_batches(tmp_path / "batch-x")
    assert batch.path == tmp_path / "batch-x" and batch.runs == [run]


def test_nothing_to_score_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DiscoveryError, match="no runs found"):
        find_batches(tmp_path)
    with pytest.raises(DiscoveryError, match="no such directory"):
        find_batches(tmp_path / "absent")


def test_stale_temp_files_of_our_writes_are_swept_and_nothing_else(tmp_path: Path) -> None:
    other = str(os.getpid() + 1)
    stale = [
        f".judge.json.{other}.0.tmp",
        f".judge_llm.json.{other}.3.tmp",
        f".judge.gpt-5.5.json.{other}.1.tmp",  # another judge's file
        f".judge_llm.openai--gpt-4o.json.{other}.2.tmp",
        f".run-meta.json.{other}.7.tmp",
        f".rescore-summary.json.{other}.0.tmp",
    ]
    kept = [
        f".judge.json.{os.getpid()}.0.tmp",  # a write of this process, in progress
        f".task.json.{other}.0.tmp",  # not a file the scorer writes
        "judge.json",
        f".judge.json.{other}.0.tmp.bak",
    ]
    for name in stale + kept:
        (tmp_path / name).write_text("x")
    assert sweep_temp_files(tmp_path) == len(stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)
