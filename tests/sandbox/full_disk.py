"""Run inside the sandbox image on a small tmpfs: a disk that fills while the proxy runs.

Usage: python full_disk.py DIR    (DIR: an empty, small filesystem)

Starts mitmdump with the addon on DIR/data and keeps the entrypoint's reserve for report.json in
DIR, then fills DIR to the last byte (as the host's other users would), then sends the commit.
Prints one JSON object: whether the block was recorded (interception.json, .stop-requested),
whether the proxy lived, whether report.json could still be written, and the disk's free bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from proxy_addon.addon import start_proxy
from proxy_addon.records import release, reserve_space, write_json_atomic, write_with_reserve


def fill(path: Path) -> None:
    """Write zeros into path until the filesystem has no byte left."""
    with open(path, "wb", buffering=0) as out:
        for size in (1 << 20, 4096, 1):
            try:
                while True:
                    out.write(b"\0" * size)
            except OSError:
                continue


def main() -> None:
    root = Path(sys.argv[1])
    task = root / "task.json"
    task.write_text(json.dumps({
        "instruction": "Order a lamp.",
        "eval_schema": {"url_pattern": r"shop\.test/api/checkout", "method": "POST"},
        "time_limit": 1,
    }))  # fmt: skip
    proxy = start_proxy(
        task,
        root / "data",
        confdir=Path("/tmp/mitmproxy-conf"),
        log_path=Path("/tmp/mitmdump.log"),
        options={
            "clawbench_max_body": "1048576",
            "clawbench_route": ["shop.test=http://127.0.0.1:9"],
        },
    )
    report_reserve = root / ".reserve"
    reserve_space(report_reserve, 1 << 20)
    fill(root / "filler")
    free = os.statvfs(root).f_bavail
    commit = subprocess.run(
        ["curl", "-sS", "-o", "/dev/null", "-x", proxy.url, "-d", "item=lamp",
         "http://shop.test/api/checkout"],
        capture_output=True, timeout=30,
    )  # fmt: skip
    data = root / "data"
    try:
        write_with_reserve(
            lambda: write_json_atomic(root / "report.json", {"stop_reason": "intercepted"}),
            report_reserve,
        )
        report = True
    except OSError:
        report = False
    release(report_reserve)
    alive = proxy.proc.poll() is None
    proxy.stop()
    print(json.dumps({
        "free_before_commit": free,
        "commit_exit": commit.returncode,
        "interception": (data / "interception.json").is_file(),
        "stop_requested": (data / ".stop-requested").is_file(),
        "proxy_alive": alive,
        "report": report,
    }), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
