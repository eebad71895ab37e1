"""clawbench-demo --sandbox end to end: the demo's runs in real sandbox containers.

The installed command, as the README's second step runs it, on the image under test: the demo
site in a container of its own on an internal network, headless Chromium and the curl agent each
in a fresh sandbox container (a browser agent and a CLI agent: the rest of the plan runs the same
way), the real scorer against a loopback judge, the report. Nothing is left running.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from proxy_addon.records import read_interception, read_run_meta
from sandbox.container.contract import contract_id
from sandbox.demo.scenarios import PLAN
from sandbox.demo.world import DEMO_LABEL
from sandbox.host.docker_api import BATCH_LABEL
from tests.conftest import require
from tests.demo.run_pages import check_demo_runs
from tests.support.demo_judge import KEY, KEY_VAR, judge_models_yaml, start_demo_judge
from tests.support.interrupt import interruptible

pytestmark = pytest.mark.docker
DEMO = Path(sys.executable).with_name("clawbench-demo")
AGENTS = ("chromium", "curl")


def _demo(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DEEPSEEK_API_KEY"}
    return subprocess.run(
        [str(DEMO), "--sandbox", "--out", str(tmp_path / "out"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "COLUMNS": "120", KEY_VAR: KEY},
        cwd=tmp_path,
        check=False,
    )


def _ours(client, label: str) -> list[str]:
    return [c.name for c in client.containers.list(all=True, filters={"label": label})]


def test_the_demo_in_the_sandbox_blocks_each_agents_commit_in_its_own_container(
    docker_client, sandbox_image, tmp_path
) -> None:
    labels = docker_client.images.get(sandbox_image).labels
    require(labels.get("io.clawbench.chromium") == "1", "a sandbox image built with --chromium")
    judge = start_demo_judge()
    try:
        models = judge_models_yaml(tmp_path / "models.yaml", judge)
        agents = [a for name in AGENTS for a in ("--agent", name)]
        proc = _demo(
            tmp_path,
            "--image",
            sandbox_image,
            *agents,
            "--models-yaml",
            str(models),
            "--judge-model",
            "loop",
        )
    finally:
        judge.close()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "through sandbox containers" in proc.stdout
    assert "commit requests among them: 0" in proc.stdout
    (batch,) = (tmp_path / "out").glob("batch-*")

    planned = [(slug, h, v) for slug, h, v in PLAN if h in AGENTS]
    runs = sorted(p.parent for p in batch.glob("scripted-demo/*/run-meta.json"))
    assert len(runs) == len(planned)
    containers, networks, verdicts = set(), set(), Counter()
    for run in runs:
        meta = read_run_meta(run / "run-meta.json")
        sandbox = meta.sandbox  # the Docker executor's record: a container of the image
        assert sandbox is not None and meta.demo is not None, run.name
        assert sandbox.image == sandbox_image and sandbox.container_exit_code == 0
        assert sandbox.network is not None and sandbox.network.startswith("clawbench-demo-")
        assert sandbox.mitm_options["clawbench_allow_private"][0].endswith("/32")
        containers.add(sandbox.container_name)
        networks.add(sandbox.network)
        got = read_interception(run / "data" / "interception.json")
        assert got.intercepted and got.request is not None, run.name
        verdict = json.loads((run / "data" / "judge.json").read_text())["match"]
        assert verdict is (meta.demo.variant == "correct"), run.name
        verdicts[meta.result_category] += 1
    assert len(containers) == len(runs)  # one container per run
    wanted = Counter(v for _, _, v in planned)
    assert verdicts == {"passed": wanted["correct"], "judge_mismatch": wanted["wrong"]}
    summary = json.loads((batch / "rescore-summary.json").read_text())
    assert summary["n_judge_match"] == wanted["correct"] and summary["n_infra_failure"] == 0
    batch_summary = json.loads((batch / "batch-summary.json").read_text())
    assert batch_summary["image"] == sandbox_image
    assert (batch / "report.html").is_file() and "Report:" in proc.stdout
    check_demo_runs(batch, runs, None, tmp_path)  # each run page: its steps, then its block

    # the demo's containers and network are gone (this demo's: others may run on the engine)
    (network,) = networks
    assert f"{network}-site" not in _ours(docker_client, DEMO_LABEL)
    assert not [c for c in _ours(docker_client, BATCH_LABEL) if c in containers]
    assert network not in [n.name for n in docker_client.networks.list()]
    for path in batch.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_without_the_image_the_sandbox_demo_names_the_build_command(
    docker_client, tmp_path
) -> None:
    proc = _demo(tmp_path, "--image", "clawbench-sandbox:no-such-tag", "--no-judge")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip()
    assert err.startswith("clawbench-demo: image clawbench-sandbox:no-such-tag is missing: ")
    assert "clawbench-sandbox build --chromium --harness browser-use" in err
    assert "--tag clawbench-sandbox:no-such-tag" in err and "\n" not in err
    assert not (tmp_path / "out").exists()


def test_an_image_built_from_other_code_is_refused_before_the_demo_starts(
    docker_client, sandbox_image, stale_images, tmp_path
) -> None:
    """Its container would fail reading our config.json: one error naming the rebuild, for the
    image itself and for a browser-use layer built on an older one (its runs are not skipped:
    the demo would be incomplete for a reason the build fixes)."""
    other, unlabelled = stale_images
    base = other.removesuffix("-browser-use")
    docker_client.images.get(sandbox_image).tag(base)  # the layer's base: this code's image
    try:
        for image, agent, has in (
            (unlabelled, [], "no io.clawbench.contract label"),
            (
                base,
                ["--agent", "browser-use"],
                "its io.clawbench.contract label is '0123456789abcdef'",
            ),
        ):
            out = tmp_path / image.rpartition(":")[2]
            out.mkdir()
            proc = _demo(out, "--image", image, *agent, "--no-judge")
            assert proc.returncode == 2, proc.stdout + proc.stderr
            err = proc.stderr.strip()
            named = other if agent else image
            assert err.startswith(
                f"clawbench-demo: image {named} was built from other clawbench code ({has}, this "
                f"code's is {contract_id()!r}): build it with `clawbench-sandbox build --chromium "
                f"--harness browser-use --tag {image}`"
            ), err
            assert "\n" not in err and not (out / "out").exists()
    finally:
        docker_client.images.remove(base)  # the tag only: the image keeps its own
    for image in stale_images:
        assert docker_client.containers.list(all=True, filters={"ancestor": image}) == []


def test_ctrl_c_stops_the_sandbox_demo_and_removes_its_containers_and_network(
    docker_client, sandbox_image, tmp_path
) -> None:
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "DEEPSEEK_API_KEY"}
    argv = [DEMO, "--sandbox", "--out", out, "--image", sandbox_image, "--agent", "curl"]
    demo = subprocess.Popen(
        interruptible([*argv, "--no-judge"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 300
        # Interrupt with a run's container up (the site's too).
        while len(running := _demo_parts(docker_client, out)[0]) < 2:
            assert demo.poll() is None and time.monotonic() < deadline, "no run container seen"
            time.sleep(0.2)
        demo.send_signal(signal.SIGINT)
        stdout, stderr = demo.communicate(timeout=120)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.communicate()
    assert demo.returncode == 130, stdout[-2000:] + stderr[-2000:]
    last = stderr.strip().splitlines()[-1]  # after the runs' progress lines
    assert last.startswith("clawbench-demo: interrupted; ") and "Traceback" not in stderr, stderr
    assert any(name.endswith("-site") for name in running)
    assert _demo_parts(docker_client, out) == ([], [])
    (batch,) = out.glob("batch-*")
    ended = Counter(read_run_meta(m).stop_reason for m in batch.rglob("run-meta.json"))
    assert ended["interrupted"] >= 1 and set(ended) <= {"interrupted", "intercepted"}, ended
    assert "interrupted: interrupted" not in stderr


def _demo_parts(client, out: Path) -> tuple[list[str], list[str]]:
    """The run containers (BATCH_LABEL), the site container and the networks (DEMO_LABEL) of the
    demo writing its batch into out, each label's value starting with the batch's name."""
    batches = [p.name for p in out.glob("batch-*")]
    if not batches:
        return [], []

    def ours(labels: dict[str, str] | None, label: str) -> bool:
        return (labels or {}).get(label, "").startswith(f"{batches[0]}-")

    containers = [
        c["Names"][0].lstrip("/")
        for label in (BATCH_LABEL, DEMO_LABEL)
        for c in client.api.containers(all=True, filters={"label": label})
        if ours(c["Labels"], label)
    ]
    nets = client.api.networks(filters={"label": DEMO_LABEL})
    return sorted(containers), [n["Name"] for n in nets if ours(n["Labels"], DEMO_LABEL)]
