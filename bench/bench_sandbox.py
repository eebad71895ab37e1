"""Sandbox benchmark: container start → proxy ready → agent start, and the image size.

    .venv/bin/python bench/bench_sandbox.py [--image NAME] [--runs 10]

With a warm image (one run first, not counted), RUNS null-agent runs of a 1-minute task through
the real runner; the phases come from each run's run-meta.json (host clock at the start call,
the entrypoint's clock for the rest: one kernel, one clock). Baseline, measured in the same run:
a bare container of the same image that only prints the time (start call → first process
running), so the ratio is what the sandbox's setup costs over Docker's own start.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from proxy_addon.records import read_run_meta  # noqa: E402
from sandbox.host import (  # noqa: E402
    AgentChoice,
    RunRequest,
    run_task,
)
from sandbox.host.docker_api import connect  # noqa: E402

RESULTS = ROOT / "bench" / "results"
TASK = ROOT / "tests" / "sandbox" / "cases" / "quick-null"


def bare_start(client: Any, image: str) -> float:
    """Seconds from the start call to the first process of a plain container running."""
    container = client.containers.create(
        image,
        entrypoint=["python3", "-c", "import time; print(repr(time.time()))"],
        network_mode="none",
    )
    try:
        t0 = time.time()
        container.start()
        container.wait(timeout=60)
        return float(container.logs().decode().strip()) - t0
    finally:
        container.remove(force=True)


def sandbox_phases(client: Any, image: str, out: Path) -> dict[str, float]:
    """One null-agent run; the phase durations in seconds."""
    outcome = run_task(
        client, RunRequest(task_dir=TASK, agent=AgentChoice("null"), out=out, image=image)
    )
    meta = read_run_meta(outcome.run_dir / "run-meta.json")
    t = meta.sandbox.timings
    if outcome.ending.category != "model_not_intercepted" or t["agent_started"] is None:
        raise RuntimeError(f"benchmark run failed: {outcome.ending}")
    return {
        "start_to_entrypoint": t["entrypoint_started"] - t["container_started"],
        "entrypoint_to_proxy_ready": t["proxy_ready"] - t["entrypoint_started"],
        "proxy_ready_to_agent_start": t["agent_started"] - t["proxy_ready"],
        "start_to_agent_start": t["agent_started"] - t["container_started"],
        "whole_run": outcome.duration_s,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--image", default=os.environ.get("CLAWBENCH_SANDBOX_IMAGE", "clawbench-sandbox:latest")
    )
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    client = connect()
    image = client.images.get(args.image)
    with tempfile.TemporaryDirectory() as tmp:
        sandbox_phases(client, args.image, Path(tmp))  # warm: page cache, layers, pyc
        bare_start(client, args.image)
        runs, bares = [], []
        for _ in range(args.runs):  # interleaved, so drift hits both alike
            runs.append(sandbox_phases(client, args.image, Path(tmp)))
            bares.append(bare_start(client, args.image))
    median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    spread = {k: (min(r[k] for r in runs), max(r[k] for r in runs)) for k in runs[0]}
    bare = statistics.median(bares)
    size_mb = image.attrs["Size"] / 1e6
    print(f"image {args.image}: {size_mb:.0f} MB ({image.id[:19]})")
    print(f"median of {args.runs} runs (min..max):")
    for key, value in median.items():
        lo, hi = spread[key]
        print(f"  {key:28s} {value:6.2f} s   ({lo:.2f}..{hi:.2f})")
    print(
        f"  {'baseline: bare container':28s} {bare:6.2f} s   ({min(bares):.2f}..{max(bares):.2f})"
    )
    print(
        f"  start_to_agent_start / bare container start = "
        f"{median['start_to_agent_start'] / bare:.1f}x"
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "sandbox.json").write_text(
        json.dumps(
            {
                "image": args.image,
                "image_id": image.id,
                "image_size_bytes": image.attrs["Size"],
                "runs": runs,
                "bare_start": bares,
                "median": median,
                "bare_median": bare,
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
