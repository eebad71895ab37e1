"""--progress when stderr is not a terminal (a pipe, a log): plain lines, not a silent bar."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from bench.batches import task_json
from bench.reference_batches import reference_run
from proxy_addon.records import JudgeVerdict
from scorer.display import PlainProgress
from scorer.judge import JudgeInput, JudgeJob, JudgeResult, request_view
from scorer.judge.verdict import Reply as ParsedReply
from tests.conftest import ROOT
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import Call, FakeModelAPI, Reply, verdict

LINE = re.compile(
    r"^judging (\d+)/(\d+): match (\d+), mismatch (\d+), cannot tell (\d+), error (\d+) "
    r"\([\d.]+ s\)$"
)
RUNS = 30


def by_case(call: Call) -> Reply:
    return verdict(int(call.user.split("(case-")[1][:2]) % 3 != 0, "scripted")


def scorer(batch: Path, judge: FakeModelAPI, *extra: str) -> subprocess.CompletedProcess[str]:
    yaml = models_yaml(batch.parent / "models.yaml", judge)
    cmd = [sys.executable, "-m", "scorer.cli", str(batch), "--models-yaml", str(yaml)]
    cmd += ["--judge-model", "judge-x", "--json", *extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(cmd, env=env, capture_output=True, text=True)  # stderr: a pipe


def a_batch(tmp_path: Path) -> Path:
    """RUNS intercepted runs in the reference's layout."""
    batch = tmp_path / "batch-20260101-120000"
    for i in range(RUNS):
        case = f"case-{i:02d}"
        request = {"url": "https://a/x", "method": "POST"}
        reference_run(batch, case, task_json(case, task_id=i), request=request)
    return batch


def test_progress_on_a_pipe_prints_plain_lines(tmp_path: Path, judge: FakeModelAPI) -> None:
    judge.script(by_case)
    batch = a_batch(tmp_path)
    done = scorer(batch, judge, "--progress")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    found = [LINE.match(line) for line in lines]
    assert all(found), lines
    counts = [(int(m[1]), int(m[2])) for m in found if m]
    assert 2 <= len(counts) <= 2 * 10 + 1  # about every 10%, never a line per verdict
    assert [c for c, _ in counts] == sorted({c for c, _ in counts})  # judged only goes up
    last = f"judging {RUNS}/{RUNS}: match 20, mismatch 10, cannot tell 0, error 0 ("
    assert lines[-1].startswith(last)
    # the verdicts are saved, so no judge call now: no progress to show
    again = scorer(batch, judge, "--progress")
    assert again.returncode == 0 and again.stderr == "" and judge.count == RUNS


def test_without_progress_a_pipe_gets_nothing(tmp_path: Path, judge: FakeModelAPI) -> None:
    batch = tmp_path / "batch-20260101-120000"
    reference_run(batch, "a", task_json("a"), request={"url": "https://a/x", "method": "POST"})
    done = scorer(batch, judge)
    assert done.returncode == 0 and done.stderr == "" and judge.count == 1


def result(verdict: JudgeVerdict | None) -> JudgeResult:
    data = JudgeInput("instruction", request_view({"url": "https://a/x", "method": "POST"}))
    job = JudgeJob(("run", "strict"), "strict", data)
    return JudgeResult(job, ParsedReply(verdict, "r", None if verdict is not None else "error"))


def test_a_slow_batch_gets_a_line_every_few_seconds() -> None:
    now = [100.0]
    out = io.StringIO()
    progress = PlainProgress(out, every_s=5.0, clock=lambda: now[0])
    progress.queued(1000)  # a step of 100 verdicts between the 10% lines
    y, no, ct = JudgeVerdict.MATCH, JudgeVerdict.NO_MATCH, JudgeVerdict.CANNOT_TELL
    for given, later in [(y, 1.0), (no, 1.0), (None, 4.0), (ct, 1.0)]:
        now[0] += later
        progress.judged(result(given))
    progress.done()
    assert out.getvalue().splitlines() == [
        "judging 3/1000: match 1, mismatch 1, cannot tell 0, error 1 (6.0 s)",  # 5 s in
        "judging 4/1000: match 1, mismatch 1, cannot tell 1, error 1 (7.0 s)",  # at the end
    ]


def test_the_installed_command_flushes_its_whole_output_and_exit_code(
    tmp_path: Path, judge: FakeModelAPI
) -> None:
    # the installed command: the table piped to another program arrives whole, the summary is
    # on disk, and the exit code is main()'s.
    command = Path(sys.executable).parent / "clawbench-score"
    batch = a_batch(tmp_path)
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    args = [str(command), str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # stdout buffered
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert f"this run: {RUNS} runs" in done.stdout  # the last line, wrapped at 80 columns
    assert done.stdout.endswith(" s\n")
    assert json.loads((batch / "rescore-summary.json").read_text())["n_total"] == RUNS
    as_json = subprocess.run([*args, "--json"], capture_output=True, text=True, env=env)
    assert json.loads(as_json.stdout)["n_total"] == RUNS
    bad = subprocess.run([str(command), str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert bad.returncode == 2 and "nowhere" in bad.stderr
