"""Ray benchmark: runs per hour local and through Ray (one node, two nodes), and what going
through Ray adds to each run.

    .venv/bin/python bench/bench_ray.py [--image NAME] [--runs 8] [--pairs 5]

Every run is the scripted agent answering on the sandbox's own submit page (intercepted, no
website needed) in a container on an --internal network the benchmark creates.

Throughput: RUNS runs as `clawbench-sandbox batch`, the command a user types: --backend local
at --concurrency 2; --backend ray on a cluster of one node holding two runs; and on two nodes
holding one run each (ray.cluster_utils.Cluster: real raylets on this machine, tests/support/
raycluster). All three hold two runs at once on the same two cores, so two nodes here cannot
beat one: the figure shows what the cluster's machinery costs. A gain needs nodes that are
other machines (docs/scale-out.md sizes them).

Overhead, side by side: PAIRS runs one at a time in this process through the run pipeline
(sandbox.host.executor.run_task), then PAIRS through Ray on the one-node cluster (the driver's
dispatcher: shipped, run on the node, packed, returned, unpacked and placed), one at a time;
the difference of the medians is what Ray adds per run (target: under 1 s).
Results go to bench/results/ray.json.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import docker  # noqa: E402

from sandbox.agents.request_script import load_script  # noqa: E402
from sandbox.cli import main as sandbox_main  # noqa: E402
from sandbox.host.executor import RunRequest, run_task  # noqa: E402
from sandbox.host.limits import Limits  # noqa: E402
from sandbox.host.payload import AgentChoice  # noqa: E402
from tests.support.raycluster import start_cluster  # noqa: E402

RESULTS = ROOT / "bench" / "results"
TASK = ROOT / "tests" / "sandbox" / "cases" / "submit-answer"
SCRIPT = [
    {"url": "http://127.0.0.1:7878/submit", "expect": 200},
    {
        "method": "POST",
        "url": "http://127.0.0.1:7878/api/task-submit",
        "json": {"answer": "42"},
        "proxy": False,
        "expect": "blocked",
    },
]


def _corpus(root: Path, runs: int) -> Path:
    for i in range(runs):
        shutil.copytree(TASK, root / f"submit-{i:02d}")
    return root


def _batch(
    corpus: Path, out: Path, script: Path, image: str, network: str, extra: list[str]
) -> float:
    """Seconds of one `clawbench-sandbox batch`."""
    args = [
        "batch",
        str(corpus),
        "--agent",
        "scripted",
        "--script",
        str(script),
        "--image",
        image,
        "--network",
        network,
        "--out",
        str(out),
        "--stop-grace",
        "2",
        "--cpus",
        "1",
        "--memory",
        "1g",
        *extra,
    ]
    t0 = time.monotonic()
    code = sandbox_main(args)
    wall = time.monotonic() - t0
    if code != 0:
        raise RuntimeError(f"benchmark batch failed (exit {code}): {args}")
    return wall


def throughput(image: str, network: str, runs: int, work: Path, script: Path) -> dict[str, Any]:
    """Runs per hour of the same batch: local, Ray one node, Ray two nodes."""
    corpus = _corpus(work / "corpus", runs)
    rows: dict[str, Any] = {}
    wall = _batch(corpus, work / "local", script, image, network, ["--concurrency", "2"])
    rows["local"] = {"nodes": 0, "wall_s": round(wall, 1)}
    for name, workers, per_node in (("ray_one_node", 0, 2), ("ray_two_nodes", 1, 1)):
        cluster = start_cluster(workers=workers, runs=per_node)
        try:
            ray = ["--backend", "ray", "--ray-address", cluster.address]
            wall = _batch(corpus, work / name, script, image, network, ray)
        finally:
            cluster.shutdown()
        rows[name] = {"nodes": 1 + workers, "wall_s": round(wall, 1)}
    for row in rows.values():
        row["runs_per_hour"] = round(runs / row["wall_s"] * 3600, 1)
    base = rows["local"]["runs_per_hour"]
    for row in rows.values():
        row["vs_local"] = round(row["runs_per_hour"] / base, 3)
    return rows


def overhead(image: str, network: str, pairs: int, work: Path) -> dict[str, Any]:
    """Seconds per run, one at a time: local through the pipeline, then through Ray."""
    import ray

    from sandbox.cluster.dispatch import Dispatcher, Setup
    from sandbox.cluster.nodes import Demand, Nodes
    from sandbox.cluster.returns import Result
    from sandbox.cluster.transfer import RETURN_LIMIT

    client = docker.from_env()
    limits = Limits(cpus=1, memory=1 << 30)  # as the throughput batches' --cpus 1 --memory 1g
    req = RunRequest(
        task_dir=TASK,
        agent=AgentChoice("scripted", script=tuple(load_script(work / "script.json"))),
        out=work / "local-pairs",
        image=image,
        network=network,
        stop_grace_s=2,
        limits=limits,
    )
    local = []
    for _ in range(pairs):
        t0 = time.monotonic()
        outcome = run_task(client, req)
        local.append(time.monotonic() - t0)
        if not outcome.intercepted:
            raise RuntimeError(f"benchmark run failed: {outcome.ending}")
    cluster = start_cluster(workers=0, runs=1)
    results: list[Result] = []
    try:
        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        batch = work / "ray-pairs"
        batch.mkdir()
        setup = Setup(
            template=replace(req, out=batch),
            batch_dir=batch,
            image_id=client.images.get(image).id,
            batch_label=f"bench:{batch}",
            driver_token=secrets.token_hex(4),
            return_limit=RETURN_LIMIT,
            concurrency=1,
            handoff=None,
            ship_image=lambda: [],  # the node shares this engine: the image is there
        )
        todo = {i: TASK for i in range(pairs)}
        Dispatcher(setup, todo, Nodes(Demand(limits.cpus, limits.memory)), results.append).run()
    finally:
        ray.shutdown()
        cluster.shutdown()
    through_ray = [r.duration_s for r in results]
    if len(through_ray) != pairs or any(r.ending.category != "intercepted" for r in results):
        raise RuntimeError(f"benchmark runs through Ray failed: {[r.ending for r in results]}")
    med_local, med_ray = statistics.median(local), statistics.median(through_ray)
    return {
        "pairs": pairs,
        "local_s": [round(x, 2) for x in local],
        "ray_s": [round(x, 2) for x in through_ray],
        "local_median_s": round(med_local, 2),
        "ray_median_s": round(med_ray, 2),
        "overhead_per_run_s": round(med_ray - med_local, 2),
        "target_s": 1.0,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = os.environ.get("CLAWBENCH_SANDBOX_IMAGE", "clawbench-sandbox:latest")
    p.add_argument("--image", default=default, help="the sandbox image")
    p.add_argument("--runs", type=int, default=8, help="runs per throughput batch")
    p.add_argument("--pairs", type=int, default=5, help="runs each way for the overhead")
    args = p.parse_args()
    client = docker.from_env()
    network = client.networks.create(f"clawbench-bench-{secrets.token_hex(3)}", internal=True)
    work = Path(tempfile.mkdtemp(prefix="clawbench-bench-ray-"))
    try:
        script = work / "script.json"
        script.write_text(json.dumps(SCRIPT))
        rows = throughput(args.image, network.name, args.runs, work, script)
        cost = overhead(args.image, network.name, args.pairs, work)
    finally:
        network.remove()
        shutil.rmtree(work, ignore_errors=True)
    report = {
        "image": args.image,
        "cpus": os.cpu_count(),
        "runs": args.runs,
        "throughput": rows,
        "overhead": cost,
        "note": "every setup holds two runs at once on this machine's cores: two nodes on one "
        "machine share them, so no gain is possible here",
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ray.json").write_text(json.dumps(report, indent=1))
    for name, row in rows.items():
        print(f"{name}: {row['runs_per_hour']} runs/h ({row['vs_local']}x local)")
    print(
        f"per-run overhead through Ray: {cost['overhead_per_run_s']} s (median "
        f"{cost['ray_median_s']} s through Ray vs {cost['local_median_s']} s local; target < 1 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
