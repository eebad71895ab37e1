"""Proxy benchmarks: overhead, block latency, large bodies, matching at scale.

    .venv/bin/python bench/bench_proxy.py [overhead] [block] [large] [matching]

Every figure is printed beside a baseline measured in the same run:
- overhead: non-matching traffic through mitmdump + our addon (logging on) vs plain mitmdump vs
  direct, keep-alive and new connections, 8 rounds, plain and addon swapping order each round
  (wrk; the median of the rounds' paired ratios, and the spread). Then side by side: both
  proxies loaded at the same moments on one shared CPU, which cancels the VM's swings.
  Target: throughput with the addon >= 0.95x plain mitmdump.
- block: a matching request sent → the client sees the block; interception.json is written and
  fsynced before the client is answered, so this bounds "request arriving → file durable".
  Baseline: a non-matching request forwarded through the same proxy. Target p50 < 5 ms.
- large: a 200 MB non-matching upload passes intact, a 200 MB matching upload is blocked; proxy
  peak RSS for both, beside plain mitmdump forwarding the same upload.
- matching: the whole reference corpus (CLAWBENCH_REFERENCE_CORPUS) against 100,000 logged
  requests (a requests.jsonl replay); baseline: a bare re.search loop over the same patterns.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.proxy_block import bench_block
from bench.proxy_common import RESULTS
from bench.proxy_large import bench_large
from bench.proxy_matching import bench_matching
from bench.proxy_overhead import bench_overhead, bench_side_by_side


def main(argv: list[str]) -> int:
    parts = argv or ["overhead", "block", "large", "matching"]
    if shutil.which("wrk") is None and "overhead" in parts:
        print("bench_proxy: wrk is required (apt-get install wrk)", file=sys.stderr)
        return 2
    RESULTS.mkdir(parents=True, exist_ok=True)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "overhead" in parts:
            out["overhead"] = bench_overhead(tmp)
            out["side_by_side"] = bench_side_by_side(tmp)
        if "block" in parts:
            out["block"] = bench_block(tmp)
        if "large" in parts:
            out["large"] = bench_large(tmp)
        if "matching" in parts:
            out["matching"] = bench_matching()
    (RESULTS / "proxy.json").write_text(json.dumps(out, indent=2))
    print(f"\nresults: {RESULTS / 'proxy.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
