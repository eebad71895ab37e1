"""Ray benchmark: runs per hour local and through Ray (one node, two nodes), and what going
through Ray adds to each run.

    .venv/bin/python bench/bench_ray.py [--image NAME] [--runs 8] [--rounds 3] [--pairs 5]

Every run is the scripted agent answering on the sandbox's own submit page (intercepted, no
website needed) in a container on an --internal network the benchmark creates.

Throughput: RUNS runs as `clawbench-sandbox batch`, the command a user types, ROUNDS times with
the order turning (medians): --backend local at --concurrency 2; --backend ray on a cluster of
one node holding two runs; and on two nodes holding one run each (ray.cluster_utils.Cluster:
real raylets on this machine, tests/support/raycluster). All three hold two runs at once on
the same two cores, so two nodes here cannot beat one: the figure shows what the cluster's
machinery costs. A gain needs nodes that are other machines (docs/scale-out.md sizes them).

Overhead, side by side: PAIRS runs through Ray on a one-node cluster (the driver's dispatcher:
shipped, run on the node, packed, returned, unpacked and placed), one at a time, each followed
by the same run local (sandbox.host.executor.run_task), so both see the same machine. For each,
its wall time beyond the run pipeline's own (run-meta.json's duration_seconds): the difference of
the medians is what Ray adds per run (target: under 1 s), whatever the run itself cost.
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

from proxy_addon.records import read_run_meta  # noqa: E402
from sandbox.agents import load_script  # noqa: E402
from sandbox.cli import main as sandbox_main  # noqa: E402
from sandbox.host import (  # noqa: E402
    AgentChoice,
    Limits,
    RunRequest,
    run_task,
)
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


SETUPS = {"local": (None, 0), "ray_one_node": (0, 2), "ray_two_nodes": (1, 1)}
"""name: (worker nodes beside the head, runs each node holds); None: --backend local."""


def _wall(name: str, corpus: Path, out: Path, script: Path, image: str, network: str) -> float:
    workers, per_node = SETUPS[name]
    if workers is None:
        return _batch(corpus, out, script, image, network, ["--concurrency", "2"])
    cluster = start_cluster(workers=workers, runs=per_node)
    try:
        ray = ["--backend", "ray", "--ray-address", cluster.address]
        return _batch(corpus, out, script, image, network, ray)
    finally:
        cluster.shutdown()


def throughput(
    image: str, network: str, runs: int, rounds: int, work: Path, script: Path
) -> dict[str, Any]:
    """Runs per hour of the same batch in each setup, the setups' order turning each round (a
    busy machine's swings fall on all of them); the medians of the rounds."""
    corpus = _corpus(work / "corpus", runs)
    walls: dict[str, list[float]] = {name: [] for name in SETUPS}
    names = list(SETUPS)
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            out = work / f"{name}-{r}"
            walls[name].append(_wall(name, corpus, out, script, image, network))
    rows: dict[str, Any] = {}
    for name, times in walls.items():
        wall = statistics.median(times)
        rows[name] = {
            "nodes": 0 if SETUPS[name][0] is None else 1 + SETUPS[name][0],
            "wall_s": [round(t, 1) for t in times],
            "runs_per_hour": round(runs / wall * 3600, 1),
        }
    base = rows["local"]["runs_per_hour"]
    for row in rows.values():
        row["vs_local"] = round(row["runs_per_hour"] / base, 3)
    return rows


def _pipeline_s(run_dir: Path) -> float:
    """The run pipeline's own seconds for a run (run-meta.json's duration_seconds)."""
    return float(read_run_meta(run_dir / "run-meta.json").duration_seconds or 0)


def overhead(image: str, network: str, pairs: int, work: Path) -> dict[str, Any]:
    """Seconds each way, interleaved (a run through Ray, then a local one, ...), one at a time:
    each run's wall time beside its pipeline's own time; the overhead is what the wall adds."""
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
    local: list[tuple[float, float]] = []
    through_ray: list[tuple[float, float]] = []

    def then_a_local_run(result: Result) -> None:
        if result.ending.category != "intercepted":
            raise RuntimeError(f"benchmark run through Ray failed: {result.ending}")
        through_ray.append((result.duration_s, _pipeline_s(result.run_dir)))
        t0 = time.monotonic()
        outcome = run_task(client, req)
        if not outcome.intercepted:
            raise RuntimeError(f"benchmark run failed: {outcome.ending}")
        local.append((time.monotonic() - t0, _pipeline_s(outcome.run_dir)))

    cluster = start_cluster(workers=0, runs=1)
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
        nodes = Nodes(Demand(limits.cpus, limits.memory))
        Dispatcher(setup, todo, nodes, then_a_local_run).run()
    finally:
        ray.shutdown()
        cluster.shutdown()
    if len(through_ray) != pairs:
        raise RuntimeError(f"benchmark: {len(through_ray)} of {pairs} runs came back through Ray")
    added_ray = statistics.median(wall - own for wall, own in through_ray)
    added_local = statistics.median(wall - own for wall, own in local)
    return {
        "pairs": pairs,
        "ray_wall_s": [round(w, 2) for w, _ in through_ray],
        "ray_pipeline_s": [round(p, 1) for _, p in through_ray],
        "local_wall_s": [round(w, 2) for w, _ in local],
        "local_pipeline_s": [round(p, 1) for _, p in local],
        "ray_wall_median_s": round(statistics.median(w for w, _ in through_ray), 2),
        "local_wall_median_s": round(statistics.median(w for w, _ in local), 2),
        "ray_adds_median_s": round(added_ray, 2),
        "local_adds_median_s": round(added_local, 2),
        "overhead_per_run_s": round(added_ray - added_local, 2),
        "target_s": 1.0,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = os.environ.get("CLAWBENCH_SANDBOX_IMAGE", "clawbench-sandbox:latest")
    p.add_argument("--image", default=default, help="the sandbox image")
    p.add_argument("--runs", type=int, default=8, help="runs per throughput batch")
    p.add_argument("--rounds", type=int, default=3, help="throughput rounds (medians kept)")
    p.add_argument("--pairs", type=int, default=5, help="runs each way for the overhead")
    args = p.parse_args()
    client = docker.from_env()
    network = client.networks.create(f"clawbench-bench-{secrets.token_hex(3)}", internal=True)
    work = Path(tempfile.mkdtemp(prefix="clawbench-bench-ray-"))
    try:
        script = work / "script.json"
        script.write_text(json.dumps(SCRIPT))
        rows = throughput(args.image, network.name, args.runs, args.rounds, work, script)
        cost = overhead(args.image, network.name, args.pairs, work)
    finally:
        network.remove()
        shutil.rmtree(work, ignore_errors=True)
    report = {
        "image": args.image,
        "cpus": os.cpu_count(),
        "load_average_1m": round(os.getloadavg()[0], 1),
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
        f"per-run overhead through Ray: {cost['overhead_per_run_s']} s (the wall beyond the run "
        f"pipeline's own time: {cost['ray_adds_median_s']} s through Ray, "
        f"{cost['local_adds_median_s']} s local; median walls {cost['ray_wall_median_s']} s and "
        f"{cost['local_wall_median_s']} s; target < 1 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
