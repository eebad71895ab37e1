"""Harness benchmark: peak memory per browser-use run, and runs per hour at concurrency 1, 2, 4.

    .venv/bin/python bench/bench_harness.py [--image NAME] [--runs 4] [--latency 1.0]

Real browser-use runs in the sandbox (the image's browser-use layer: `clawbench-sandbox build
--harness browser-use`) on the demo's claw-eval task (009: the answer goes to the sandbox's own
submit page, so no website is needed), each driven by its own scripted model server with a
fixed latency per reply (the tests' fake model API with the demo's browser-use steps,
tests.sandbox.model_servers, --latency) in a container on an
--internal network the benchmark creates. Peak memory is the container's (agent, Chromium and
proxy together: run-meta.json's sandbox.peak_memory_bytes); runs per hour is runs over the
wall time of each concurrency level. Results go to bench/results/harness.json.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import docker  # noqa: E402

from sandbox.harnesses import BROWSER_USE, harness_image  # noqa: E402
from sandbox.harnesses.models import AgentModel  # noqa: E402
from sandbox.host import (  # noqa: E402
    AgentChoice,
    RunRequest,
    run_task,
)
from tests.sandbox.model_servers import ModelServer  # noqa: E402

TASK = ROOT / "test-cases" / "clawbench-demo" / "009-claw-eval-offsite-expenses"
RESULTS = ROOT / "bench" / "results"
STEPS = [
    {"navigate": "http://127.0.0.1:7878/submit"},
    {"fill": {"answer": "The offsite cost 1234.50 EUR in total."}},
    {"submit": True},
    {"done": "Submitted.", "success": True},
]


def _model_server(client: Any, image: str, network: str, name: str, latency: float) -> Any:
    """A scripted model in its own container, reachable as NAME on the network."""
    script = {"browser_use": STEPS}
    return ModelServer(client, image, network, script, ("--latency", str(latency)), alias=name)


def one_run(
    client: Any, base: str, network: str, out: Path, i: int, latency: float
) -> dict[str, Any]:
    """One browser-use run with its own model server: seconds, peak memory, category."""
    host = f"model-{i}.bench.test"
    server = _model_server(client, base, network, host, latency)
    model = AgentModel(f"bench-{i}", f"http://{host}:8000/v1", "openai-completions", "bench")
    try:
        req = RunRequest(
            task_dir=TASK,
            agent=AgentChoice("harness", harness_name=BROWSER_USE.name),
            out=out,
            image=harness_image(base, BROWSER_USE.name),
            model=model.name,
            harness=BROWSER_USE.name,
            env={**model.env(), "CLAWBENCH_AGENT_MAX_STEPS": "8"},
            network=network,
            mitm_options={"clawbench_model_hosts": [model.host]},
            stop_grace_s=3,
        )
        t0 = time.monotonic()
        outcome = run_task(client, req)
        seconds = time.monotonic() - t0
        meta = json.loads((outcome.run_dir / "run-meta.json").read_text())
        return {
            "seconds": seconds,
            "peak_memory_bytes": meta["sandbox"].get("peak_memory_bytes"),
            "category": str(outcome.ending.category),
        }
    finally:
        server.close()


def level(
    client: Any, base: str, network: str, runs: int, concurrency: int, latency: float
) -> dict[str, Any]:
    """`runs` runs, `concurrency` at a time: throughput and peak memory."""
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(concurrency) as pool:
        t0 = time.monotonic()
        results = list(
            pool.map(lambda i: one_run(client, base, network, Path(tmp), i, latency), range(runs))
        )
        wall = time.monotonic() - t0
    peaks = [r["peak_memory_bytes"] for r in results if r["peak_memory_bytes"]]
    return {
        "concurrency": concurrency,
        "runs": runs,
        "wall_s": round(wall, 1),
        "runs_per_hour": round(runs / wall * 3600, 1),
        "run_s_median": round(statistics.median(r["seconds"] for r in results), 1),
        "peak_memory_mib_max": round(max(peaks) / 2**20) if peaks else None,
        "peak_memory_mib_median": round(statistics.median(peaks) / 2**20) if peaks else None,
        "categories": sorted({r["category"] for r in results}),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = os.environ.get("CLAWBENCH_SANDBOX_IMAGE", "clawbench-sandbox:latest")
    p.add_argument("--image", default=default, help="the sandbox image (its layer is used)")
    p.add_argument("--runs", type=int, default=4, help="runs per concurrency level")
    p.add_argument("--latency", type=float, default=1.0, help="seconds per model reply")
    p.add_argument("--levels", default="1,2,4")
    args = p.parse_args()
    client = docker.from_env()
    network = client.networks.create(f"clawbench-bench-{secrets.token_hex(3)}", internal=True)
    try:
        levels = [
            level(client, args.image, network.name, args.runs, int(c), args.latency)
            for c in args.levels.split(",")
        ]
    finally:
        network.remove()
    image = harness_image(args.image, BROWSER_USE.name)
    report = {"image": image, "latency_s": args.latency, "cpus": os.cpu_count(), "levels": levels}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "harness.json").write_text(json.dumps(report, indent=1))
    for row in levels:
        print(
            f"concurrency {row['concurrency']}: {row['runs_per_hour']} runs/h "
            f"(median run {row['run_s_median']} s), peak memory per run median "
            f"{row['peak_memory_mib_median']} MiB, max {row['peak_memory_mib_max']} MiB, "
            f"{row['categories']}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
