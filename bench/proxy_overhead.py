"""Proxy overhead: non-matching traffic through mitmdump + the addon vs plain mitmdump (wrk),
in alternating rounds and side by side on one shared CPU. Target: >= 0.95x plain."""

from __future__ import annotations

import os
import statistics
from pathlib import Path
from typing import Any

from bench.proxy_common import spread, start_mitmdump, start_upstream, wrk


def bench_overhead(tmp: Path, rounds: int = 8, seconds: int = 5) -> dict[str, Any]:
    up, up_port = start_upstream(tmp)
    plain, plain_port, _ = start_mitmdump(tmp, "plain", False, up_port)
    ours, ours_port, data = start_mitmdump(tmp, "addon", True, up_port)
    host = f"127.0.0.1:{up_port}"
    absolute = f"http://{host}"
    results: dict[str, Any] = {}
    try:
        for close in (False, True):
            kind = "new-connections" if close else "keep-alive"
            conns = 8 if close else 16
            runs: dict[str, list[dict[str, Any]]] = {"direct": [], "plain": [], "addon": []}
            for i in range(rounds):
                runs["direct"].append(wrk(up_port, "", close, host, seconds, conns))
                # plain and addon swap places every round, so drift favours neither
                pair = [("plain", plain_port), ("addon", ours_port)]
                for name, port in pair if i % 2 == 0 else pair[::-1]:
                    runs[name].append(wrk(port, absolute, close, host, seconds, conns))
            summary = {}
            for name, rs in runs.items():
                summary[name] = {
                    "rps": [r["rps"] for r in rs],
                    "p50_ms": [r["p50_us"] / 1000 for r in rs],
                    "p99_ms": [r["p99_us"] / 1000 for r in rs],
                    "errors": sum(r["errors"] for r in rs),
                }
            # the median of the rounds' paired ratios: each pair ran back to back
            paired = [
                a / p for a, p in zip(summary["addon"]["rps"], summary["plain"]["rps"], strict=True)
            ]
            ratio = statistics.median(paired)
            summary["addon_vs_plain"] = ratio
            summary["addon_vs_plain_rounds"] = paired
            results[kind] = summary
            print(f"\n[overhead] {kind}: requests/s median (min-max) over {rounds} rounds")
            for name in ("direct", "plain", "addon"):
                s = summary[name]
                print(
                    f"  {name:7s} {spread(s['rps']):>20s} rps   p50 "
                    f"{statistics.median(s['p50_ms']):.2f} ms  p99 "
                    f"{statistics.median(s['p99_ms']):.2f} ms  errors {s['errors']}"
                )
            print(
                f"  addon / plain throughput: {ratio:.3f}x, median of the rounds' pairs "
                f"({min(paired):.3f}-{max(paired):.3f}; target >= 0.95)"
            )
        logged = len((data / "requests.jsonl").read_bytes().splitlines())
        results["lines_logged"] = logged
        print(f"  requests.jsonl lines written by the addon: {logged}")
    finally:
        for p in (plain, ours, up):
            p.terminate()
            p.wait()
    return results


def _pin(pid: int, cpu: int) -> None:
    """Every thread of process pid onto one CPU."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.sched_setaffinity(int(tid), {cpu})


def bench_side_by_side(tmp: Path, rounds: int = 6, seconds: int = 5) -> dict[str, Any] | None:
    """Plain and addon mitmdump under load at the same moments, both pinned to one CPU (wrk and
    the upstream on the other): the scheduler shares that CPU evenly between the two, and any
    swing of the VM hits both alike, so their throughput ratio is their per-request cost ratio.
    """
    if (os.cpu_count() or 1) < 2 or not hasattr(os, "sched_setaffinity"):
        print("\n[side by side] skipped: needs 2 CPUs and sched_setaffinity")
        return None
    from concurrent.futures import ThreadPoolExecutor

    up, up_port = start_upstream(tmp)
    plain, plain_port, _ = start_mitmdump(tmp, "plain-sbs", False, up_port)
    ours, ours_port, _ = start_mitmdump(tmp, "addon-sbs", True, up_port)
    host = f"127.0.0.1:{up_port}"
    results: dict[str, Any] = {}
    try:
        _pin(up.pid, 0)
        _pin(plain.pid, 1)
        _pin(ours.pid, 1)
        with ThreadPoolExecutor(2) as pool:
            for close in (False, True):
                kind = "new-connections" if close else "keep-alive"
                conns = 8 if close else 16
                ratios = []
                for i in range(rounds):
                    # The load started second gets about 1% more (measured plain against
                    # plain), so the two take turns at it.
                    order = (plain_port, ours_port) if i % 2 else (ours_port, plain_port)
                    runs = {
                        port: pool.submit(
                            wrk, port, f"http://{host}", close, host, seconds, conns, 0
                        )
                        for port in order
                    }
                    p, a = runs[plain_port].result(), runs[ours_port].result()
                    ratios.append(a["rps"] / p["rps"])
                ratio = statistics.median(ratios)
                results[kind] = {"addon_vs_plain": ratio, "rounds": ratios}
                print(
                    f"\n[side by side] {kind}: both proxies loaded at once on one CPU, {rounds} "
                    f"rounds of {seconds} s\n  addon / plain throughput: {ratio:.3f}x median "
                    f"({min(ratios):.3f}-{max(ratios):.3f}; target >= 0.95)"
                )
    finally:
        for proc in (plain, ours, up):
            proc.terminate()
            proc.wait()
    return results


__all__ = ["bench_overhead", "bench_side_by_side"]
