"""Every way out we can think of, tried from inside the sandbox; one JSON line per attempt.

Usage: python3 probe.py IPV4 IPV6 [--network-only] [--wait-release]

"ok": true means the attempt SUCCEEDED (a reply came back, a file opened, a privilege was
gained). Run as the agent every attempt must fail; run as the proxy user (docker exec -u proxy)
the network attempts must succeed, which shows the firewall rules are what stops the agent.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time


def report(name: str, ok: bool, detail: object = "") -> None:
    print(json.dumps({"name": name, "ok": ok, "detail": str(detail)[:300]}), flush=True)


def tcp(name: str, family: int, addr: str, port: int) -> None:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect((addr, port))
            s.sendall(b"GET /probe-" + name.encode() + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            reply = s.recv(100)
        report(name, reply.startswith(b"HTTP/1.1 200"), reply[:40])
    except OSError as e:
        report(name, False, e)


def udp(name: str, family: int, addr: str, port: int) -> None:
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.settimeout(3)
            s.sendto(b"probe-" + name.encode(), (addr, port))
            reply, _ = s.recvfrom(100)
        report(name, reply.startswith(b"echo:"), reply[:40])
    except OSError as e:
        report(name, False, e)


def raw(name: str, addr: str, port: int, *, tunnel: bool) -> None:
    """Non-HTTP bytes, direct (the firewall redirects port 80 into the proxy) or via CONNECT."""
    try:
        target = ("127.0.0.1", 8080) if tunnel else (addr, port)
        with socket.create_connection(target, timeout=5) as s:
            if tunnel:
                s.sendall(f"CONNECT {addr}:{port} HTTP/1.1\r\nHost: {addr}:{port}\r\n\r\n".encode())
                s.recv(100)  # the proxy's "200 Connection established"
            s.sendall(b"\x00\x01raw-probe-" + name.encode() + b"\n")
            reply = s.recv(100)
        report(name, bool(reply), reply[:40])
    except OSError as e:
        report(name, False, e)


def network(ipv4: str, ipv6: str) -> None:
    tcp("tcp4_port_8080", socket.AF_INET, ipv4, 8080)
    udp("udp4_port_443", socket.AF_INET, ipv4, 443)
    udp("udp4_port_5353", socket.AF_INET, ipv4, 5353)
    tcp("tcp6_port_8080", socket.AF_INET6, ipv6, 8080)
    udp("udp6_port_443", socket.AF_INET6, ipv6, 443)
    raw("raw_tcp_port_80", ipv4, 80, tunnel=False)


def tunnel(ipv4: str) -> None:
    raw("raw_tcp_connect_tunnel", ipv4, 8080, tunnel=True)


def opened(name: str, path: str, mode: str) -> None:
    try:
        with open(path, mode) as f:
            if "r" in mode:
                f.read(1)
            else:
                f.write("{}")
        report(name, True, path)
    except OSError as e:
        report(name, False, e)


def status() -> dict[str, str]:
    with open("/proc/self/status") as f:
        return dict(line.rstrip("\n").split(":\t", 1) for line in f if ":\t" in line)


def privileges() -> None:
    opened("read_task_json", "/clawbench/task/task.json", "r")
    opened("write_interception_json", "/clawbench/data/interception.json", "w")
    opened("read_requests_log", "/clawbench/data/requests.jsonl", "r")
    opened("read_ca_key", "/clawbench/mitmproxy/mitmproxy-ca.pem", "r")
    opened("read_config_json", "/clawbench/config.json", "r")
    caps = status()
    held = {k: caps.get(k, "?") for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh")}
    report("capabilities", any(v.strip("0") for v in held.values()), json.dumps(held))
    report("no_new_privs_unset", caps.get("NoNewPrivs", "0").strip() != "1", caps.get("NoNewPrivs"))
    try:
        os.setuid(0)
        report("setuid_root", True, os.getuid())
    except OSError as e:
        report("setuid_root", False, e)
    try:
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()
        report("raw_socket", True)
    except OSError as e:
        report("raw_socket", False, e)
    for name, argv in (
        ("iptables_flush", ["iptables", "-w", "-F", "OUTPUT"]),
        ("su_root", ["su", "-c", "id -u", "root"]),
    ):
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
            )
            report(name, done.returncode == 0, (done.stdout + done.stderr).strip())
        except (OSError, subprocess.TimeoutExpired) as e:
            report(name, False, e)


def main(argv: list[str]) -> int:
    ipv4, ipv6 = argv[0], argv[1]
    network(ipv4, ipv6)
    if "--network-only" not in argv:
        tunnel(ipv4)
        privileges()
    print(json.dumps({"name": "done"}), flush=True)
    if "--wait-release" in argv:
        deadline = time.monotonic() + 90
        while not os.path.exists("/tmp/clawbench-release") and time.monotonic() < deadline:
            time.sleep(0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
