"""Interrupting clawbench-score (kill -9, Ctrl-C) and running it again finishes the same job.

The scorer runs as a real subprocess against a slow loopback judge; it is killed mid-batch, then
run again. The result must equal an uninterrupted run on an identical copy: the same summary,
every file whole, no temp file left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.batches import task_json
from bench.reference_batches import reference_run
from tests.conftest import ROOT
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import Call, FakeModelAPI, Reply, start_judge_server, verdict
from tests.support.interrupt import interruptible

RUNS = 40


def by_case(call: Call) -> Reply:
    """Deterministic verdicts: even cases match, odd ones do not."""
    case = int(call.user.split("(case-")[1][:2])
    return verdict(case % 2 == 0, f"case {case}")


def make_batch(root: Path) -> Path:
    batch = root / "batch-20260101-120000"
    req = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"qty": 1}}
    for i in range(RUNS):
        case = f"case-{i:02d}"
        reference_run(batch, case, task_json(case, task_id=i), request=req)
    return batch


def command(batch: Path, yaml: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "scorer.cli",
        str(batch),
        "--models-yaml",
        str(yaml),
        "--judge-model",
        "judge-x",
        "--concurrency",
        "4",
    ]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def comparable(batch: Path) -> dict:
    data = json.loads((batch / "rescore-summary.json").read_text())
    data.pop("batch_dir")
    return data


def assert_whole(batch: Path) -> None:
    assert not [p for p in batch.rglob("*") if p.name.endswith(".tmp")]
    for p in batch.rglob("*.json"):
        json.loads(p.read_text())  # never half a file


@pytest.fixture(scope="module")
def slow_judge() -> Iterator[FakeModelAPI]:
    server = start_judge_server(by_case, latency=0.15)
    yield server
    server.close()


@pytest.fixture(scope="module")
def reference_result(tmp_path_factory: pytest.TempPathFactory, slow_judge: FakeModelAPI) -> dict:
    tmp = tmp_path_factory.mktemp("straight")
    batch = make_batch(tmp)
    yaml = models_yaml(tmp / "models.yaml", slow_judge)
    done = subprocess.run(command(batch, yaml), env=env(), capture_output=True)
    assert done.returncode == 0, done.stderr
    return comparable(batch)


def interrupted(tmp: Path, judge: FakeModelAPI, sig: int) -> tuple[Path, Path, int, str]:
    batch = make_batch(tmp / "cut")
    yaml = models_yaml(tmp / "models.yaml", judge)
    proc = subprocess.Popen(
        interruptible(command(batch, yaml)),
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while len(list(batch.rglob("data/judge.json"))) < 8:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=30)
    return batch, yaml, proc.returncode, err


@pytest.mark.parametrize(
    "sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM], ids=["kill-9", "ctrl-c", "sigterm"]
)
def test_interrupted_then_rerun_equals_an_uninterrupted_run(
    tmp_path: Path, slow_judge: FakeModelAPI, reference_result: dict, sig: int
) -> None:
    batch, yaml, code, err = interrupted(tmp_path, slow_judge, sig)
    judged = len(list(batch.rglob("data/judge.json")))
    assert 8 <= judged < RUNS
    if sig == signal.SIGKILL:
        assert code == -signal.SIGKILL
    else:
        assert code == 130 and "interrupted" in err and "run the same command again" in err
    assert not (batch / "rescore-summary.json").exists()
    for p in batch.rglob("*.json"):
        json.loads(p.read_text())
    # what a kill in the middle of os.write leaves: temp files beside their targets
    last = sorted(batch.rglob("openclaw-case-*"))[-1]
    (last / ".run-meta.json.4242.0.tmp").write_text('{"half": ')
    (last / "data" / ".judge.json.4242.1.tmp").write_text('{"match": tr')
    (batch / ".rescore-summary.json.4242.2.tmp").write_text("{")
    calls_before = slow_judge.count
    again = subprocess.run(command(batch, yaml), env=env(), capture_output=True)
    assert again.returncode == 0, again.stderr
    assert slow_judge.count - calls_before <= RUNS - judged + 4  # the saved verdicts are reused
    assert comparable(batch) == reference_result
    assert_whole(batch)
    shutil.rmtree(batch.parent)
