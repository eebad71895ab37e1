"""Scorer benchmark: clawbench-score under a rate-limited judge, and a cached re-run.

    .venv/bin/python bench/bench_scorer.py [--runs 1000] [--latency 0.2] [--rounds 5]
                                           [--reference] [capped] [cached]

A batch of N intercepted runs is scored against a loopback OpenAI-compatible judge
(tests/support/fake_api.py) answering in LATENCY seconds. Every figure is the whole
process's wall time, measured in this run. The goals:

- capped: the judge serves 8 calls at a time and answers 429 + Retry-After: 1 beyond; ours at
  --concurrency 32. Within 1.15x of the judge's floor (N x latency / 8), zero judge errors.
- cached: the scored batch scored again (every verdict read back from data/judge.json, no
  call): under 1 s for 1,000 runs.

--reference also runs the reference's clawbench-rescore (clawbench-eval 0.11.0, installed into
bench/results/ref-venv) under the same capped judge at its default 4 workers and at 32, to show
what it loses to 429s. Results: bench/results/scorer.json, and the same figures as a Markdown
table in bench/results/scorer.md (printed too); docs/benchmarks.md quotes them by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.batches import our_run, task_json  # noqa: E402
from tests.support.fake_api import FakeModelAPI, start_judge_server  # noqa: E402

RESULTS = ROOT / "bench" / "results"
REF_VENV = RESULTS / "ref-venv"
REF_VERSION = "0.11.0"
OURS = str(ROOT / ".venv" / "bin" / "clawbench-score")
SLOTS = 8


def ensure_reference() -> Path:
    """bench/results/ref-venv with clawbench-eval==0.11.0; its clawbench-rescore."""
    exe = REF_VENV / "bin" / "clawbench-rescore"
    pip = REF_VENV / "bin" / "pip"
    if exe.exists():
        shown = subprocess.run([str(pip), "show", "clawbench-eval"], capture_output=True, text=True)
        if f"Version: {REF_VERSION}" in shown.stdout:
            return exe
    print(f"installing clawbench-eval=={REF_VERSION} into {REF_VENV} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(REF_VENV)], check=True)
    install = [str(pip), "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*install, f"clawbench-eval=={REF_VERSION}"], check=True)
    return exe


def build_batch(root: Path, n: int) -> Path:
    """N intercepted runs (our layout, which the reference's rescore reads as well)."""
    batch = root / "batch-20260101-120000"
    for i in range(n):
        case = f"bench-{i:04d}"
        task = task_json(case, task_id=i)
        request = {
            "url": "https://shop.example.com/api/cart",
            "method": "POST",
            "params": {},
            "body": {"item": "red mug", "qty": 1 + i % 3, "note": "gift wrap " * 8},
            "headers": {"content-type": "application/json", "cookie": "[REDACTED]"},
            "content_type": "application/json",
            "http_version": "HTTP/2.0",
            "body_size": 140,
            "body_unverified": False,
        }
        interception = {
            "intercepted": True,
            "request": request,
            "schema": task["eval_schema"],
            "intercepted_at": 1767268800.0,
            "blocked_count": 1,
        }
        our_run(batch, case, task, interception=interception)
    return batch


def models_yaml(path: Path, server: FakeModelAPI) -> Path:
    path.write_text(
        f"bench-judge:\n  base_url: {server.base_url}\n  api_type: openai-completions\n"
        '  api_key: "sk-bench-not-a-key"\n'
    )
    return path


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of the command's process: CPU (user + system) shows what the wall
    time would be on an idle machine, where the wall time shows what this one gave."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def judge_errors(batch: Path) -> int:
    data = json.loads((batch / "rescore-summary.json").read_text())
    return int(data.get("n_judge_error", 0))


def ours(batch: Path, yaml: Path) -> list[str]:
    judge = ["--models-yaml", str(yaml), "--judge-model", "bench-judge"]
    return [OURS, str(batch), *judge, "--concurrency", "32"]


def reference(exe: Path, batch: Path, yaml: Path, workers: int) -> list[str]:
    judge = ["--models-yaml", str(yaml), "--judge-model", "bench-judge", "--rubric", "strict"]
    batch_args = ["--only-batch", str(batch), "--workers", str(workers), "--no-eval-results"]
    return [str(exe), *batch_args, *judge]


def capped(master: Path, work: Path, runs: int, latency: float, ref: Path | None) -> dict:
    """Each tool on its own copy of the batch, against a judge serving SLOTS calls at a time."""
    server = start_judge_server(latency=latency, max_concurrent=SLOTS, keep_calls=False)
    yaml = models_yaml(work / "capped.yaml", server)
    out: dict[str, Any] = {"floor": runs * latency / SLOTS}
    tools = {"ours": lambda b: ours(b, yaml)}
    if ref is not None:
        tools["reference_4"] = lambda b: reference(ref, b, yaml, 4)
        tools["reference_32"] = lambda b: reference(ref, b, yaml, 32)
    try:
        for label, command in tools.items():
            batch = work / label / master.name
            shutil.copytree(master, batch)
            server.reset()
            wall, cpu = timed(command(batch))
            errors, limited = judge_errors(batch), server.statuses[429]
            out[label] = {"wall": wall, "cpu": cpu, "errors": errors, "429": limited}
            out[label]["batch"] = str(batch)
            print(f"  capped {label}: {wall:.1f} s, {errors} judge errors", flush=True)
    finally:
        server.close()
    return out


def cached(batch: Path, yaml: Path, rounds: int) -> dict:
    """The scored batch again (the judge is gone: a call would fail the run)."""
    times = [timed(ours(batch, yaml)) for _ in range(rounds)]
    assert judge_errors(batch) == 0
    return {"ours": [w for w, _ in times], "cpu": [c for _, c in times]}


def report(r: dict[str, Any], runs: int, latency: float) -> str:
    lines = [
        "## Scorer",
        "",
        f"`.venv/bin/python bench/bench_scorer.py --reference` — {runs} intercepted runs, a "
        f"loopback OpenAI-compatible judge answering in {latency * 1000:.0f} ms "
        "(`tests/support/fake_api.py`, asyncio), whole-process wall time, all measured "
        f"in the same run. Machine: {os.cpu_count()} vCPU, Python {platform.python_version()}, "
        f"shared: load average {r['load'][0]:.1f} at the start, {r['load'][1]:.1f} at the end "
        "(other sessions' tests); CPU is the scorer process's user + system time.",
        "",
        "| scenario | wall | ratio | errors | target |",
        "|---|---:|---:|---:|---|",
    ]
    if c := r.get("capped"):
        o, f = c["ours"], c["floor"]
        lines.append(
            f"| judge serving {SLOTS} at a time, 429 + Retry-After: 1 beyond; ours --concurrency "
            f"32 ({o['429']} 429s; CPU {o['cpu']:.1f} s) | {o['wall']:.1f} s | "
            f"{o['wall'] / f:.2f}x the floor ({f:.1f} s) | {o['errors']} | "
            "≤ 1.15x floor, 0 errors |"
        )
        for label, name in (("reference_4", "4 (its default)"), ("reference_32", "32")):
            if ref := c.get(label):
                lines.append(
                    f"| the same judge, the reference's clawbench-rescore {REF_VERSION} at "
                    f"{name} workers | {ref['wall']:.1f} s | {ref['wall'] / f:.2f}x the floor | "
                    f"{ref['errors']} of {runs} verdicts lost | (for comparison) |"
                )
    if k := r.get("cached"):
        walls, cpu = k["ours"], statistics.median(k["cpu"])
        lines.append(
            f"| cached re-run of the scored batch: every run read and re-checked, its verdict "
            f"reused from data/judge.json (median of {len(walls)}, "
            f"{min(walls):.2f}..{max(walls):.2f}; CPU {cpu:.2f} s) | "
            f"{statistics.median(walls):.2f} s | – | 0 | < 1 s |"
        )
    lines += [
        "",
        "Notes. Under the 8-slot judge the floor is the judge's own pace: N calls, 8 at a time, "
        f"{latency * 1000:.0f} ms each. Ours starts at 32 calls in flight, parks each call that "
        "draws a 429 for its Retry-After without spending a try, and halves its concurrency "
        "(AIMD; a probe above the level the judge carried that draws a 429 returns to that "
        "level), so no verdict is lost; the reference retries a 429 twice with 1 s and 2 s "
        "sleeps and then records match=null, which its summary counts against the model. The "
        "cached re-run makes no judge call and never imports the openai client.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenarios", nargs="*", help="capped, cached (default: both)")
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--rounds", type=int, default=5, help="cached re-runs (the median is shown)")
    p.add_argument("--reference", action="store_true", help="run clawbench-rescore as well")
    args = p.parse_args()
    chosen = args.scenarios or ["capped", "cached"]
    if unknown := set(chosen) - {"capped", "cached"}:
        p.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    # Our modules byte-compiled, as pip compiles an installed package (an editable install does
    # not, and with PYTHONDONTWRITEBYTECODE set every run would compile them again).
    packages = ["scorer", "proxy_addon", "sandbox"]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], cwd=ROOT, check=True)
    ref = ensure_reference() if args.reference else None
    results: dict[str, Any] = {"load": [os.getloadavg()[0]]}
    with tempfile.TemporaryDirectory(dir=RESULTS, prefix="scorer-") as tmp:
        work = Path(tmp)
        print(f"building a batch of {args.runs} intercepted runs ...", flush=True)
        master = build_batch(work / "master", args.runs)
        results["capped"] = capped(master, work, args.runs, args.latency, ref)
        if "cached" in chosen:
            scored = Path(results["capped"]["ours"]["batch"])
            results["cached"] = cached(scored, work / "capped.yaml", args.rounds)
        if "capped" not in chosen:
            del results["capped"]
    results["load"].append(os.getloadavg()[0])
    (RESULTS / "scorer.json").write_text(json.dumps(results, indent=2))
    section = report(results, args.runs, args.latency)
    (RESULTS / "scorer.md").write_text(section)
    print("\n" + section)
    print(f"results: {RESULTS / 'scorer.json'}, {RESULTS / 'scorer.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
