"""What the proxy benchmarks share: the loopback upstream, plain and addon mitmdump, wrk."""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from proxy_addon.addon.launcher import ADDON, mitmdump_path  # noqa: E402

RESULTS = ROOT / "bench" / "results"
WRK_SCRIPT = """
local reqs = {}
local i = 0
init = function(args)
  local base = args[1]
  local close = args[2] == "close"
  local h = {["Host"] = args[3]}
  if close then h["Connection"] = "close" end
  local hj = {["Host"] = args[3], ["Content-Type"] = "application/json",
              ["Authorization"] = "Bearer bench-token"}
  if close then hj["Connection"] = "close" end
  reqs[1] = wrk.format("GET", base .. "/products?page=2&sort=price", h)
  reqs[2] = wrk.format("POST", base .. "/api/cart", hj, '{"item":"mug","qty":2,"size":"L"}')
  reqs[3] = wrk.format("GET", base .. "/static/app.js?v=3", h)
  reqs[4] = wrk.format("POST", base .. "/api/track", hj, '{"event":"view","page":"/cart"}')
end
request = function()
  i = i + 1
  return reqs[(i % #reqs) + 1]
end
done = function(summary, latency, requests)
  io.write(string.format('{"requests": %d, "duration_us": %d, "errors": %d, "p50_us": %d, '
    .. '"p99_us": %d}\\n', summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status
    + summary.errors.timeout, latency:percentile(50), latency:percentile(99)))
end
"""

TASK = {
    "instruction": "Buy the mug",
    "eval_schema": {
        "url_pattern": r"shop\.bench\.test/checkout",
        "method": "POST",
        "body": {"item": "mug"},
    },
    "time_limit": 5,
}


def start_upstream(tmp: Path) -> tuple[subprocess.Popen[bytes], int]:
    port_file = tmp / "upstream.port"
    port_file.unlink(missing_ok=True)  # a previous part's upstream left its (stale) port here
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "fast_upstream.py"), str(port_file)]
    )
    for _ in range(200):
        if port_file.exists() and port_file.read_text():
            return proc, int(port_file.read_text())
        time.sleep(0.02)
    raise RuntimeError("upstream did not start")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_mitmdump(
    tmp: Path,
    name: str,
    addon: bool,
    upstream_port: int,
    extra: list[str] | None = None,
    lazy: bool = True,
):
    """Plain or addon mitmdump on a fixed port; returns (proc, port, data_dir). The addon may
    reach the loopback upstream (clawbench_allow_private), and the task's host is routed there
    (as the tests route theirs): its block happens before any connection either way. lazy=False
    leaves plain mitmdump's own connection strategy (eager)."""
    port = free_port()
    data = tmp / f"{name}-data"
    args = [
        mitmdump_path(),
        "-q",
        "--mode",
        f"regular@127.0.0.1:{port}",
        "--set",
        f"confdir={tmp / 'conf'}",
        *(["--set", "connection_strategy=lazy"] if lazy else []),
    ]
    if addon:
        task = tmp / "task.json"
        task.write_text(json.dumps(TASK))
        args += [
            "-s",
            str(ADDON),
            "--set",
            f"clawbench_task={task}",
            "--set",
            f"clawbench_data={data}",
            "--set",
            "clawbench_allow_private=127.0.0.1",
            "--set",
            f"clawbench_route=shop.bench.test=http://127.0.0.1:{upstream_port}",
        ]
    args += extra or []
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            if not addon or (data / ".proxy-ready").exists():
                return proc, port, data
        except OSError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{name} mitmdump did not start")


def wrk(
    port: int, base: str, close: bool, host: str, seconds: int, conns: int, cpu: int | None = None
) -> dict[str, Any]:
    script = RESULTS / "wrk-proxy.lua"
    if not script.exists() or script.read_text() != WRK_SCRIPT:
        # written once: loads run side by side would race on it (a truncated script in one)
        tmp = script.with_suffix(f".{os.getpid()}.{threading.get_ident()}")
        tmp.write_text(WRK_SCRIPT)
        os.replace(tmp, script)
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{conns}",
            f"-d{seconds}s",
            "-s",
            str(script),
            f"http://127.0.0.1:{port}",
            "--",
            base,
            "close" if close else "keep",
            host,
        ],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=pin,
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("{"))
    res = json.loads(line)
    res["rps"] = res["requests"] / (res["duration_us"] / 1e6)
    return res


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.0f} ({min(xs):.0f}-{max(xs):.0f})"


__all__ = [
    "RESULTS",
    "ROOT",
    "TASK",
    "free_port",
    "spread",
    "start_mitmdump",
    "start_upstream",
    "wrk",
]
