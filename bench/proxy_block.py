"""Block latency: a matching request sent -> the client sees the block, interception.json
written and fsynced first; baseline: a non-matching request forwarded. Target p50 < 5 ms."""

from __future__ import annotations

import json
import socket
import statistics
import time
from pathlib import Path
from typing import Any

from bench.proxy_common import start_mitmdump, start_upstream


def _request(port: int, raw: bytes) -> float:
    """Send raw bytes to the proxy on a new connection; seconds until reply or reset."""
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t0 = time.perf_counter()
    s.sendall(raw)
    try:
        while s.recv(65536):
            pass
    except ConnectionResetError:
        pass
    dt = time.perf_counter() - t0
    s.close()
    return dt


def bench_block(tmp: Path, n: int = 300) -> dict[str, Any]:
    up, up_port = start_upstream(tmp)
    proc, port, data = start_mitmdump(tmp, "block", True, up_port)
    body = b'{"item":"mug","qty":2}'
    match = (
        b"POST http://shop.bench.test/checkout HTTP/1.1\r\nHost: shop.bench.test\r\n"
        b"Content-Type: application/json\r\nConnection: close\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )
    forward = (
        f"POST http://127.0.0.1:{up_port}/api/cart HTTP/1.1\r\nHost: 127.0.0.1:{up_port}\r\n"
        f"Content-Type: application/json\r\nConnection: close\r\nContent-Length: {len(body)}"
        f"\r\n\r\n"
    ).encode() + body
    try:
        for _ in range(20):  # warm up both paths
            _request(port, forward)
        blocked, forwarded = [], []
        for _ in range(n):
            blocked.append(_request(port, match) * 1000)
            forwarded.append(_request(port, forward) * 1000)
        rec = json.loads((data / "interception.json").read_text())
    finally:
        for p in (proc, up):
            p.terminate()
            p.wait()

    def q(xs: list[float], p: float) -> float:
        return statistics.quantiles(xs, n=100)[int(p) - 1]

    res = {
        "blocked_p50_ms": statistics.median(blocked),
        "blocked_p99_ms": q(blocked, 99),
        "forwarded_p50_ms": statistics.median(forwarded),
        "forwarded_p99_ms": q(forwarded, 99),
        "blocked_count": rec["blocked_count"],
    }
    print(
        f"\n[block] {n} matching requests, each answered only after interception.json "
        "is written and fsynced"
    )
    print(
        f"  blocked   p50 {res['blocked_p50_ms']:.2f} ms  p99 {res['blocked_p99_ms']:.2f} ms"
        "   (target p50 < 5 ms)"
    )
    print(
        f"  forwarded p50 {res['forwarded_p50_ms']:.2f} ms  p99 {res['forwarded_p99_ms']:.2f} ms"
        "   (baseline: a non-matching request through the same proxy)"
    )
    print(f"  blocked_count recorded: {res['blocked_count']} (expected {n})")
    return res


__all__ = ["bench_block"]
