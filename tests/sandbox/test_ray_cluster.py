"""clawbench-sandbox batch --backend ray on a real two-node Ray cluster (tests/support/raycluster),
in the tests' closed world (the internal network and the fake site of tests/sandbox/topology).

The driver runs as its own process (`clawbench-sandbox batch --backend ray`), as a user runs it;
the runs land on both nodes and must come back as the same batch a local run writes. Then the
faults: a node killed mid-run, the driver killed and resumed, Ctrl-C.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import docker.errors
import pytest

from proxy_addon.records import read_run_meta
from sandbox.cli import main as sandbox_main
from sandbox.cluster.order import NodeInfo
from sandbox.container.contract import INSTRUCTION_FILE
from sandbox.host.docker_api import BATCH_LABEL
from tests.conftest import require
from tests.sandbox.conftest import CASES, closed_args
from tests.support.fake_api import start_judge_server, verdict

pytestmark = [pytest.mark.docker, pytest.mark.ray]
BIN = Path(sys.executable).parent
NODE_LABEL = "io.clawbench.ray-node"

# One agent for every task: it proves it got the key (a hash, never the key) and acts on the
# instruction: three commits that match, a wrong payload, an agent that gives up, and one that
# exits 127 before any request. A task whose instruction says
# "Slowly" makes it wait $SLOW seconds first.
AGENT = f"""printf %s "$CB_KEY" | sha256sum
ls /my-info 2>/dev/null
i=$(cat {INSTRUCTION_FILE})
case "$i" in Slowly*) sleep "$SLOW" ;; esac
case "$i" in
  *"two lamps"*) curl -sS -X POST -H 'Content-Type: application/json' \\
      -d '{{"item": "lamp", "qty": 2}}' https://shop.clawbench.test/api/checkout ;;
  *Subscribe*) curl -sS 'https://shop.clawbench.test/api/subscribe?list=weekly' ;;
  *"Place the order"*) curl -sS -X POST -d qty=1 https://shop.clawbench.test/api/order ;;
  *"desk lamps"*) curl -sS -X POST -H 'Content-Type: application/json' \\
      -d '{{"item": "mug"}}' https://shop.clawbench.test/api/order-form ;;
  *"Nothing to do"*) sleep 6; exit 3 ;;
  *) exit 127 ;;
esac"""
SIX = {
    "a-checkout": "shop-checkout",
    "b-subscribe": "get-commit",
    "c-order": "direct-order",
    "d-wrong-payload": "form-order",
    "e-gives-up": "quick-null",
}


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    try:
        import ray
    except ImportError:
        ray = None
    require(ray is not None, "Ray (scripts/setup.sh --extra ray)")
    from tests.support.raycluster import start_cluster

    cluster = start_cluster(workers=1)
    try:
        yield cluster
    finally:
        cluster.shutdown()


def _corpus(
    root: Path, cases: dict[str, str], cannot_start: bool = False, slow: tuple[str, ...] = ()
) -> Path:
    for name, case in cases.items():
        shutil.copytree(CASES / case, root / name)
        if name in slow:
            task = json.loads((root / name / "task.json").read_text())
            task["instruction"] = f"Slowly: {task['instruction']}"
            (root / name / "task.json").write_text(json.dumps(task))
    if cannot_start:
        (root / "f-cannot-start").mkdir(parents=True)
        task = {
            "instruction": "Start nothing.",
            "eval_schema": {"url_pattern": "shop\\.clawbench\\.test/never", "method": "POST"},
            "time_limit": 1,
        }
        (root / "f-cannot-start" / "task.json").write_text(json.dumps(task))
    return root


def _args(internet: Any, image: str, out: Path) -> list[str]:
    return [
        *closed_args(internet, image, out),
        *("--agent-cmd", AGENT, "--env", "CB_KEY", "--cpus", "1", "--memory", "1g"),
    ]


def _driver(cluster: Any, corpus: Path, args: list[str]) -> list[str]:
    return [
        str(BIN / "clawbench-sandbox"),
        "batch",
        str(corpus),
        *args,
        "--backend",
        "ray",
        "--ray-address",
        cluster.address,
    ]


@contextlib.contextmanager
def _driving(cluster: Any, corpus: Path, args: list[str], env: dict[str, str]) -> Iterator[Any]:
    """The driver as a background process (killed on the way out if it still runs)."""
    proc = subprocess.Popen(
        _driver(cluster, corpus, args),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _wait_for[T](proc: Any, what: str, probe: Callable[[], T], timeout_s: float = 120) -> T:
    """probe() once it is truthy; the test fails with the driver's stderr if it never is."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := probe():
            return found
        time.sleep(0.3)
    proc.kill()
    pytest.fail(f"never {what}: {proc.communicate()[1]}")


def _runs(batch: Path) -> dict[str, list[Path]]:
    """The batch's run directories by case, oldest first."""
    found: dict[str, list[Path]] = {}
    for meta in sorted((batch / "none").glob("*/run-meta.json")):
        found.setdefault(read_run_meta(meta).test_case or "?", []).append(meta.parent)
    return found


def _assert_whole(batch: Path) -> None:
    """Every run directory in the batch is whole: its records all there and readable."""
    for run in (batch / "none").iterdir():
        for record in ("run-meta.json", "task.json", "data/interception.json"):
            assert json.loads((run / record).read_text()), (run, record)


def _node_id(meta: Any) -> str:
    node = NodeInfo.of_run(meta)
    assert node is not None, "no sandbox.node in run-meta.json"
    return node.ray_node_id


def _node_of(run: Path) -> str:
    return _node_id(read_run_meta(run / "run-meta.json"))


def _interception(run: Path) -> dict[str, Any]:
    view = json.loads((run / "data" / "interception.json").read_text())
    view.pop("intercepted_at", None)
    return view


def _batch_containers(client: Any, batch: Path) -> list[Any]:
    return [
        c
        for c in client.containers.list(all=True, filters={"label": BATCH_LABEL})
        if c.labels[BATCH_LABEL].endswith(f":{batch.resolve()}")
    ]


def test_a_batch_on_two_nodes_is_the_batch_a_local_run_writes(
    ray_cluster, docker_client, sandbox_image, internet, tmp_path, monkeypatch
) -> None:
    key = f"sk-test-{secrets.token_hex(16)}"
    monkeypatch.setenv("CB_KEY", key)  # the cluster's processes were started without it
    corpus = _corpus(tmp_path / "corpus", SIX, cannot_start=True)
    judged: list[float] = []

    def judge_reply(call: Any) -> Any:
        judged.append(time.time())
        return verdict(True)

    judge = start_judge_server(judge_reply)
    models = tmp_path / "models.yaml"
    models.write_text(
        f"scripted:\n  base_url: {judge.base_url}\n  api_type: openai-completions\n"
        "  api_key: judge-key\n"
    )
    scoring = ["--judge-model", "scripted", "--models-yaml", str(models)]
    try:
        local_out, ray_out = tmp_path / "local", tmp_path / "ray"
        local_code = sandbox_main(
            ["batch", str(corpus), *_args(internet, sandbox_image, local_out), *scoring]
        )
        judged.clear()
        args = [*_args(internet, sandbox_image, ray_out), *scoring]
        started = time.time()
        proc = subprocess.run(
            _driver(ray_cluster, corpus, args),
            env=ray_cluster.env,
            capture_output=True,
            text=True,
            timeout=400,
        )
    finally:
        judge.close()
    assert local_code == 0
    assert proc.returncode == 0, proc.stderr
    (local,) = local_out.glob("batch-*")
    (remote,) = ray_out.glob("batch-*")
    local_runs, ray_runs = _runs(local), _runs(remote)
    assert set(ray_runs) == set(local_runs) == {*SIX, "f-cannot-start"}, proc.stderr

    categories = {}
    for case, (run,) in ray_runs.items():
        (twin,) = local_runs[case]
        mine, theirs = read_run_meta(run / "run-meta.json"), read_run_meta(twin / "run-meta.json")
        assert (mine.result_category, mine.stop_reason) == (
            theirs.result_category,
            theirs.stop_reason,
        ), case
        assert _interception(run) == _interception(twin), case
        assert (run / "task.json").read_bytes() == (twin / "task.json").read_bytes()
        assert run.name.startswith(f"custom-{case}-none-")
        categories[case] = mine.result_category
        # the key reached every agent (its hash is the first line the agent printed)
        first = (run / "data" / "agent.log").read_text().split()[0]
        assert first == hashlib.sha256(key.encode()).hexdigest(), case
    assert categories == {
        "a-checkout": "passed",
        "b-subscribe": "passed",
        "c-order": "passed",
        "d-wrong-payload": "model_not_intercepted",
        "e-gives-up": "model_not_intercepted",
        "f-cannot-start": "model_not_intercepted",  # the shell started: the agent's exit
    }
    nodes = {_node_of(run) for (run,) in ray_runs.values()}
    assert nodes == {n.node_id for n in ray_cluster.nodes}  # both nodes ran some
    # the task's extra_info travelled with it: the agent on the node listed its /my-info/
    assert "shopping-list.txt" in (ray_runs["a-checkout"][0] / "data" / "agent.log").read_text()

    summaries = [json.loads((b / "batch-summary.json").read_text()) for b in (local, remote)]
    statuses = [{j["case"]: j["status"] for j in s["jobs"]} for s in summaries]
    assert statuses[0] == statuses[1] and summaries[1]["max_concurrent"] == 2
    rescore = json.loads((remote / "rescore-summary.json").read_text())
    assert (rescore["n_total"], rescore["n_intercepted"], rescore["n_infra_failure"]) == (6, 3, 0)
    # judged as the runs landed: before the slowest run (the agent that gives up) had ended
    slow = read_run_meta(ray_runs["e-gives-up"][0] / "run-meta.json")
    assert judged and min(judged) < slow.sandbox.timings["agent_ended"]
    assert min(judged) > started
    assert "dashboard: " in proc.stderr and " left; " in proc.stderr

    # The key: nowhere in Ray's files (logs, session, spilled objects) nor in any run file, nor
    # in what the driver printed.
    assert key not in proc.stdout + proc.stderr
    for path in ray_cluster.files() + [p for p in remote.rglob("*") if p.is_file()]:
        assert key.encode() not in path.read_bytes(), path
    assert _batch_containers(docker_client, remote) == []


def test_concurrency_caps_the_runs_in_flight_across_the_cluster(
    ray_cluster, sandbox_image, internet, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("CB_KEY", "k")
    corpus = _corpus(tmp_path / "corpus", {"a-order": "direct-order", "b-order": "direct-order"})
    out = tmp_path / "out"
    args = [*_args(internet, sandbox_image, out), "--concurrency", "1"]
    proc = subprocess.run(
        _driver(ray_cluster, corpus, args),
        env=ray_cluster.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (batch,) = out.glob("batch-*")
    timings = [read_run_meta(run / "run-meta.json").sandbox for (run,) in _runs(batch).values()]
    # two nodes free, one run at a time: the second container starts after the first agent ended
    first, second = sorted((b.timings for b in timings if b), key=lambda t: t["container_started"])
    assert second["container_started"] > first["agent_ended"], timings


def test_a_node_lost_mid_run_is_recorded_and_its_run_rerun_on_another(
    ray_cluster, docker_client, sandbox_image, internet, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("CB_KEY", "k")
    victim = ray_cluster.add_node()
    three = {k: SIX[k] for k in ("a-checkout", "b-subscribe", "c-order")}
    corpus = _corpus(tmp_path / "corpus", three, slow=tuple(three))
    out = tmp_path / "out"
    env = {**ray_cluster.env, "SLOW": "6"}
    args = [*_args(internet, sandbox_image, out), "--env", "SLOW"]
    with _driving(ray_cluster, corpus, args, env) as proc:
        label = f"{NODE_LABEL}={victim.node_id}"
        _wait_for(
            proc,
            "a run on the third node",
            lambda: docker_client.containers.list(filters={"label": label}),
        )
        ray_cluster.kill_node(victim)
        _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    (batch,) = out.glob("batch-*")
    runs = _runs(batch)
    lost = [case for case, dirs in runs.items() if len(dirs) == 2]
    assert len(lost) == 1, runs
    first, again = runs[lost[0]]
    meta = read_run_meta(first / "run-meta.json")
    assert (meta.result_category, meta.stop_reason) == ("infra_failure", "node_lost")
    assert _node_id(meta) == victim.node_id
    assert "re-run on another node" in meta.failure_reason
    rerun = read_run_meta(again / "run-meta.json")
    assert rerun.result_category == "intercepted"
    assert _node_id(rerun) != victim.node_id
    summary = json.loads((batch / "batch-summary.json").read_text())
    assert {j["status"] for j in summary["jobs"]} == {"intercepted"}
    assert _batch_containers(docker_client, batch) == []  # the lost node's too (one engine here)


def test_a_killed_driver_resumes_without_rerunning_what_came_back(
    ray_cluster, docker_client, sandbox_image, internet, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("CB_KEY", "k")
    four = {
        "a-checkout": "shop-checkout",
        "b-subscribe": "get-commit",
        "c-slow": "direct-order",
        "d-slow": "direct-order",
    }
    corpus = _corpus(tmp_path / "corpus", four, slow=("c-slow", "d-slow"))
    out = tmp_path / "out"
    args = [*_args(internet, sandbox_image, out), "--env", "SLOW"]
    env = {**ray_cluster.env, "SLOW": "8"}
    with _driving(ray_cluster, corpus, args, env) as proc:
        batch = _wait_for(
            proc,
            "a run back",
            lambda: next((b for b in out.glob("batch-*") if _runs(b)), None),
            timeout_s=180,
        )
        time.sleep(1)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    before = {
        case: [(d.name, (d / "run-meta.json").stat().st_mtime) for d in dirs]
        for case, dirs in _runs(batch).items()
    }
    assert 1 <= len(before) < 4
    _assert_whole(batch)
    # what a driver killed while unpacking leaves: a run half-extracted beside the batch's runs
    half = batch / ".incoming-0123456789ab" / "custom-c-slow-none-20260101-000000"
    (half / "data").mkdir(parents=True)
    shutil.copy(next(iter(_runs(batch).values()))[0] / "run-meta.json", half)
    (half / "data" / "interception.json").write_text('{"intercepted": tr')
    resumed = subprocess.run(
        [*_driver(ray_cluster, corpus, args), "--resume", str(batch)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    after = _runs(batch)
    assert set(after) == {"a-checkout", "b-subscribe", "c-slow", "d-slow"}
    for case, dirs in before.items():
        assert [(d.name, (d / "run-meta.json").stat().st_mtime) for d in after[case]] == dirs
    for case in set(after) - set(before):
        assert len(after[case]) == 1  # what was in flight at the kill never came back: run once
    summary = json.loads((batch / "batch-summary.json").read_text())
    jobs = {j["case"]: j for j in summary["jobs"]}
    assert {c for c, j in jobs.items() if j["resumed"]} == set(before)
    assert {j["status"] for j in jobs.values()} == {"intercepted"}
    assert _batch_containers(docker_client, batch) == []  # the killed driver's were swept
    assert not list(batch.glob(".incoming-*"))  # the half-extracted run removed, never placed
    _assert_whole(batch)


def test_ctrl_c_cancels_the_runs_and_removes_their_containers(
    ray_cluster, docker_client, sandbox_image, internet, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("CB_KEY", "k")
    two = {"c-order": "direct-order", "b-subscribe": "get-commit"}
    corpus = _corpus(tmp_path / "corpus", two, slow=tuple(two))
    out = tmp_path / "out"
    env = {**ray_cluster.env, "SLOW": "300"}
    args = [*_args(internet, sandbox_image, out), "--env", "SLOW"]
    with _driving(ray_cluster, corpus, args, env) as proc:

        def both_running() -> list[Any]:
            mine = str(out.resolve())
            found = docker_client.containers.list(filters={"label": NODE_LABEL})
            ours = [c for c in found if mine in c.labels.get(BATCH_LABEL, "")]
            return ours if len(ours) == 2 else []

        running = _wait_for(proc, "both runs going", both_running)
        # one on each node: Ctrl-C must reach both
        assert {c.labels[NODE_LABEL] for c in running} == {n.node_id for n in ray_cluster.nodes}
        time.sleep(2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    (batch,) = out.glob("batch-*")
    assert _batch_containers(docker_client, batch) == []
    summary = json.loads((batch / "batch-summary.json").read_text())
    assert summary["interrupted"] and {j["status"] for j in summary["jobs"]} == {"error"}
    for (run,) in _runs(batch).values():
        assert read_run_meta(run / "run-meta.json").stop_reason == "interrupted"


def _tiny_image(client: Any, tag: str, content: bytes) -> str:
    """A one-file image under tag (docker import); its ID."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        info = tarfile.TarInfo("marker")
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
    repo, _, name = tag.rpartition(":")
    client.api.import_image_from_data(raw.getvalue(), repository=repo, tag=name)
    return client.images.get(tag).id


def test_a_node_gets_the_drivers_image_through_ray_or_its_registry_and_refuses_another(
    ray_cluster, docker_client
) -> None:
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from sandbox.cluster.images import save_chunks
    from sandbox.cluster.node import prepare_node
    from tests.support.registry import SavedImageRegistry

    name, version = "clawbench-raytest", secrets.token_hex(4)
    tag = f"{name}:{version}"
    want = _tiny_image(docker_client, tag, b"the driver's image")
    chunks = list(save_chunks(docker_client, tag))
    registry = SavedImageRegistry(b"".join(chunks), name, version)
    ray.init(address=ray_cluster.address, logging_level="WARNING", log_to_driver=False)
    try:
        saved = [ray.put(chunk) for chunk in chunks]
        docker_client.images.remove(tag)  # the node (this engine) no longer has it
        on = NodeAffinitySchedulingStrategy(ray_cluster.nodes[-1].node_id, soft=False)
        prepare = ray.remote(num_cpus=0, max_retries=0)(prepare_node).options(
            scheduling_strategy=on
        )

        def ask(image: str, saved: Any) -> Any:
            return ray.get(prepare.remote(image, want, saved, "no-batch", "no-driver"), timeout=120)

        missing = ask(tag, None)
        assert (missing.ready, missing.how) == (False, "missing")
        loaded = ask(tag, saved)  # through the object store
        assert (loaded.ready, loaded.how) == (True, "loaded")
        assert docker_client.images.get(tag).id == want
        assert ask(tag, None).how == "present"

        docker_client.images.remove(want, force=True)
        pulled = ask(registry.image, None)  # a registry in the name: pulled, the same ID
        assert (pulled.ready, pulled.how) == (True, "pulled") and registry.pulls >= 1
        assert docker_client.images.get(registry.image).id == want

        other = _tiny_image(docker_client, tag, b"an image of the same name")
        refused = ask(tag, saved)
        assert (refused.ready, refused.how) == (False, "refused")
        assert want in refused.detail and other in refused.detail
        assert refused.node.ray_node_id == ray_cluster.nodes[-1].node_id
    finally:
        ray.shutdown()
        registry.close()
        for image in (tag, registry.image, want):
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_client.images.remove(image, force=True)


def test_a_node_whose_engine_fails_or_lacks_net_admin_is_excluded_and_its_runs_rerun_elsewhere(
    ray_cluster, docker_client, sandbox_image, internet, tmp_path, monkeypatch
) -> None:
    from tests.support.broken_engine import BrokenEngine

    monkeypatch.setenv("CB_KEY", "k")
    # Its first container create fails; the later ones start without NET_ADMIN (no firewall).
    sock = Path(tempfile.mkdtemp(prefix="cbe-", dir="/tmp")) / "docker.sock"
    engine = BrokenEngine(sock, fail_creates=1)
    monkeypatch.setenv("DOCKER_HOST", engine.docker_host)  # the new node's raylet inherits it
    broken = ray_cluster.add_node()
    monkeypatch.delenv("DOCKER_HOST")
    try:
        # five: the broken node fails each of its runs sooner than a run passes elsewhere, so it
        # meets three of them
        cases = {f"a-checkout-{n}": SIX["a-checkout"] for n in range(5)}
        corpus = _corpus(tmp_path / "corpus", cases)
        out = tmp_path / "out"
        proc = subprocess.run(
            _driver(ray_cluster, corpus, _args(internet, sandbox_image, out)),
            env=ray_cluster.env,
            capture_output=True,
            text=True,
            timeout=400,
        )
    finally:
        ray_cluster.kill_node(broken)
        engine.close()
    assert proc.returncode == 0, proc.stderr
    assert f"({broken.node_id[:8]}): excluded, no more runs go there" in proc.stderr
    assert engine.refused == 1 and engine.stripped >= 2, proc.stderr
    (batch,) = out.glob("batch-*")
    runs = _runs(batch)
    assert set(runs) == set(cases)
    failed = []
    for dirs in runs.values():
        *earlier, last = (read_run_meta(d / "run-meta.json") for d in dirs)
        assert last.result_category == "intercepted"
        assert _node_id(last) != broken.node_id
        for meta in earlier:  # each failure on the broken node, re-run once elsewhere
            assert meta.result_category == "infra_failure" and len(dirs) == 2
            assert _node_id(meta) == broken.node_id
            failed.append(meta)
    assert len(failed) == engine.refused + engine.stripped
    reasons = sorted(m.failure_reason for m in failed)
    assert "cannot create containers" in reasons.pop(0), reasons  # "engine: ..." sorts first
    for meta in failed:  # the others name the firewall the container could not install
        if meta.failure_reason in reasons:
            assert meta.stop_reason == "container_failed"
    assert all(r.startswith("firewall: ") for r in reasons), reasons
    summary = json.loads((batch / "batch-summary.json").read_text())
    assert {j["status"] for j in summary["jobs"]} == {"intercepted"}
    assert _batch_containers(docker_client, batch) == []


def test_a_run_directory_with_hostile_names_is_refused_on_extraction_and_recorded(
    ray_cluster, sandbox_image, tmp_path
) -> None:
    """What a hostile or broken node can send back: through the object store to the driver's
    own receiving end (cluster.returns), refused whole, recorded as the run's infra failure."""
    import ray

    from proxy_addon.records import Category, Ending, StopReason
    from sandbox.cluster.node import Landed
    from sandbox.cluster.returns import Returns
    from sandbox.cluster.transfer import RETURN_LIMIT
    from sandbox.host import AgentChoice, RunRequest
    from tests.support.hostile_archives import HOSTILE, crafted

    batch = tmp_path / "batch"
    batch.mkdir()
    case = CASES / "direct-order"
    template = RunRequest(task_dir=case, agent=AgentChoice("null"), out=batch, image=sandbox_image)
    returns = Returns(template, batch, RETURN_LIMIT, {0: case})
    node = NodeInfo(hostname="hostile-node", ray_node_id=ray_cluster.nodes[-1].node_id)
    claimed = Ending(Category.INTERCEPTED, StopReason.INTERCEPTED)  # what the node says
    kinds = {
        "absolute": "'/etc/cron.d/evil': an absolute path",
        "dot-dot": "'..' path component",
        "symlink": "agent/link': a link",
        "symlink-then-write": "agent': a link",
        "hardlink": "agent/h': a link",
        "fifo": "agent/fifo': not a file or directory",
    }
    ray.init(address=ray_cluster.address, logging_level="WARNING", log_to_driver=False)
    try:
        for kind, says in kinds.items():
            landed = Landed(node, 0, 1, "none", crafted(*HOSTILE[kind]), claimed, 1.0)
            result = returns.settle(ray.put(landed), 0, node, 1.0, lambda e: "not lost")
            reason = result.ending.failure_reason or ""
            assert result.ending.category == Category.INFRA_FAILURE, kind
            assert reason.startswith("transfer: node hostile-node (") and says in reason, reason
            meta = read_run_meta(result.run_dir / "run-meta.json")
            assert meta.result_category == "infra_failure" and NodeInfo.of_run(meta) == node
            assert _interception(result.run_dir)["intercepted"] is False
    finally:
        ray.shutdown()
    # nothing written anywhere but the driver's own records, one per refused archive
    assert [p.name for p in batch.iterdir()] == ["none"]
    records = list((batch / "none").iterdir())
    assert len(records) == len(kinds)
    for run in records:
        assert {p.name for p in run.iterdir()} == {"run-meta.json", "task.json", "data"}
    assert not Path("/etc/cron.d/evil").exists()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--env", "CB_KEY=sk-on-the-command-line"], "export CB_KEY and pass --env CB_KEY"),
        (["--agent-cmd", "API_KEY=sk-inline my-agent"], "secret-looking value"),
    ],
)
def test_secrets_on_the_command_line_are_refused_before_ray_records_them(
    extra: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        require(False, "Ray (scripts/setup.sh --extra ray)")
    corpus = _corpus(tmp_path / "corpus", {"c-order": "direct-order"})
    code = sandbox_main(
        ["batch", str(corpus), *extra, "--backend", "ray", "--ray-address", "127.0.0.1:1"]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert says in err and "sk-on-the-command-line" not in err and "sk-inline" not in err


def test_a_ray_address_needs_the_ray_backend(tmp_path: Path, capsys) -> None:
    corpus = _corpus(tmp_path / "corpus", {"c-order": "direct-order"})
    assert sandbox_main(["batch", str(corpus), "--ray-address", "127.0.0.1:1"]) == 2
    assert "--ray-address goes with --backend ray" in capsys.readouterr().err
