"""Large bodies: a 200 MB non-matching upload passes intact, a matching one is blocked; the
proxy's peak RSS for both, beside plain mitmdump forwarding the same upload."""

from __future__ import annotations

import hashlib
import json
import socket
import time
from pathlib import Path
from typing import Any

from bench.proxy_common import start_mitmdump, start_upstream


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _upload(port: int, url: str, host: str, size: int) -> tuple[float, bool]:
    """Stream a size-byte POST through the proxy; (seconds, got a 2xx reply)."""
    s = socket.create_connection(("127.0.0.1", port))
    head = (
        f"POST {url} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/octet-stream\r\n"
        f"Content-Length: {size}\r\nConnection: close\r\n\r\n"
    ).encode()
    chunk = bytes(range(256)) * 4096
    t0 = time.perf_counter()
    ok = False
    try:
        s.sendall(head)
        sent = 0
        while sent < size:
            part = chunk[: min(len(chunk), size - sent)]
            s.sendall(part)
            sent += len(part)
        reply = b""
        while data := s.recv(65536):
            reply += data
        ok = reply.startswith(b"HTTP/1.1 2")
    except (ConnectionResetError, BrokenPipeError):
        ok = False
    s.close()
    return time.perf_counter() - t0, ok


def _expected_sha(size: int) -> str:
    chunk = bytes(range(256)) * 4096
    h = hashlib.sha256()
    sent = 0
    while sent < size:
        part = chunk[: min(len(chunk), size - sent)]
        h.update(part)
        sent += len(part)
    return h.hexdigest()


def _stats(up_port: int) -> dict[str, Any]:
    s = socket.create_connection(("127.0.0.1", up_port))
    s.sendall(b"GET /__stats HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return json.loads(data.split(b"\r\n\r\n", 1)[1])


def bench_large(tmp: Path, size: int = 200 * 1024 * 1024) -> dict[str, Any]:
    up, up_port = start_upstream(tmp)
    host = f"127.0.0.1:{up_port}"
    res: dict[str, Any] = {"size_mb": size / 2**20}
    try:
        for name, addon, url, h in (
            ("plain-forward", False, f"http://{host}/upload", host),
            ("addon-forward", True, f"http://{host}/upload", host),
            ("addon-block", True, "http://shop.bench.test/checkout", "shop.bench.test"),
        ):
            before = _stats(up_port)
            proc, port, data = start_mitmdump(tmp, name, addon, up_port)
            secs, ok = _upload(port, url, h, size)
            time.sleep(0.3)
            rss = _peak_rss_mb(proc.pid)
            proc.terminate()
            proc.wait()
            after = _stats(up_port)
            row = {
                "seconds": secs,
                "client_2xx": ok,
                "peak_rss_mb": rss,
                "upstream_bytes": after["bytes"] - before["bytes"],
            }
            if name.endswith("forward"):
                row["intact"] = after["sha256"] == _expected_sha(size)
            else:
                rec = json.loads((data / "interception.json").read_text())
                row["blocked"] = not ok and after["matching"] == before["matching"]
                row["body_unverified"] = rec["request"]["body_unverified"]
            res[name] = row
    finally:
        up.terminate()
        up.wait()
    print(f"\n[large] {res['size_mb']:.0f} MB uploads")
    for name in ("plain-forward", "addon-forward", "addon-block"):
        r = res[name]
        extra = (
            f"intact={r['intact']}"
            if "intact" in r
            else f"blocked={r['blocked']} body_unverified={r['body_unverified']}"
        )
        print(
            f"  {name:14s} peak RSS {r['peak_rss_mb']:7.0f} MB  {r['seconds']:.1f} s  "
            f"upstream got {r['upstream_bytes'] / 2**20:.0f} MB  {extra}"
        )
    ratio = res["addon-forward"]["peak_rss_mb"] / res["plain-forward"]["peak_rss_mb"]
    res["rss_addon_vs_plain"] = ratio
    print(f"  peak RSS addon / plain (forwarding): {ratio:.2f}x")
    return res


__all__ = ["bench_large"]
