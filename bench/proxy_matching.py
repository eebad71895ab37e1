"""Matching at scale: the whole reference corpus against 100,000 logged requests (a
requests.jsonl replay); baseline: a bare re.search loop over the same patterns."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.proxy_common import ROOT  # noqa: F401  (puts the project on sys.path)
from proxy_addon.matching import HttpRequest, Matcher, parse_body
from proxy_addon.tasks import load_task

PATHS = [
    "/",
    "/search?q=mug",
    "/api/graphql",
    "/cart/add",
    "/checkout",
    "/api/v1/items/42",
    "/static/app.js",
    "/graphql",
    "/reviews/new",
    "/account/settings?tab=2",
]
BODIES: list[Any] = [
    {"operationName": "RateTeacherMutation"},
    {"item": "mug"},
    {"commit": "1"},
    "a=1&b=2",
]


def write_log(path: Path, n: int, hosts: list[str]) -> None:
    """n requests.jsonl lines over the corpus's hosts (seeded: every run replays the same)."""
    rng = random.Random(7)
    with path.open("w") as f:
        for _ in range(n):
            method = rng.choice(["GET", "GET", "GET", "POST", "POST", "PUT"])
            body = None if method == "GET" else rng.choice(BODIES)
            url = f"https://www.{rng.choice(hosts)}{rng.choice(PATHS)}"
            f.write(json.dumps({"url": url, "method": method, "body": body}) + "\n")


def replay(path: Path) -> list[HttpRequest]:
    """The log read back as the scorer's re-check reads it (string bodies parsed)."""
    reqs = []
    for line in path.open():
        e = json.loads(line)
        body = e["body"]
        if isinstance(body, str):
            body = parse_body(body.encode()).value
        reqs.append(HttpRequest(e["method"], e["url"], body))
    return reqs


def timed[T](fn: Callable[[], T]) -> tuple[T, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def bench_matching(n: int = 100_000) -> dict[str, Any]:
    corpus = os.environ.get("CLAWBENCH_REFERENCE_CORPUS")
    if not corpus:
        print("\n[matching] skipped: set CLAWBENCH_REFERENCE_CORPUS")
        return {}
    tasks = [load_task(p) for p in sorted(Path(corpus).glob("*/*/task.json"))]
    matchers = [Matcher(t.eval_schema) for t in tasks]
    hosts = sorted({h for m in matchers for h in m.hosts} or {"example.com"})
    log = Path(tempfile.mkdtemp()) / "requests.jsonl"
    write_log(log, n, hosts)
    reqs, t_load = timed(lambda: replay(log))
    hits, t_ours = timed(
        lambda: sum(m.url_matches(r.url) and m.match(r).match for r in reqs for m in matchers)
    )
    schemas = [t.eval_schema for t in tasks if not t.eval_schema.is_placeholder]
    patterns = [re.compile(s.url_pattern) for s in schemas]
    _, t_bare = timed(lambda: sum(bool(p.search(r.url)) for r in reqs for p in patterns))
    shutil.rmtree(log.parent)
    res = {
        "requests": n,
        "tasks": len(tasks),
        "hits": hits,
        "load_s": t_load,
        "ours_s": t_ours,
        "bare_search_s": t_bare,
        "ours_rps": n / t_ours,
        "bare_rps": n / t_bare,
        "ratio": t_ours / t_bare,
    }
    print(
        f"\n[matching] {len(tasks)} reference tasks x {n} logged requests "
        f"({n * len(tasks) / 1e6:.1f} M checks), {hits} matches"
    )
    print(f"  ours            {res['ours_rps']:9.0f} requests/s  ({t_ours:.2f} s)")
    print(f"  bare re.search  {res['bare_rps']:9.0f} requests/s  ({t_bare:.2f} s, baseline)")
    print(f"  ours / bare time: {res['ratio']:.2f}x; replay load+parse {t_load:.2f} s")
    return res


__all__ = ["bench_matching", "replay", "write_log"]
