"""The sandbox's proxy reuses an HTTP/1.1 origin's connections for a browser's HTTP/2 requests
(proxy_addon/addon/h1reuse.py), and every response still reaches its own request.

A real HTTPS origin on loopback that speaks HTTP/1.1 only counts the TCP connections it accepts;
curl speaks HTTP/2 to the proxy (through CONNECT) as a browser does and checks each body. Under
mitmproxy's stock launch each request has a connection of its own; the sandbox's proxy opens
one for requests in turn and at most 5 for requests at once, and opens new ones where the origin
closes them.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from mitmproxy.certs import CertStore

from proxy_addon.addon import start_proxy
from proxy_addon.addon.h1reuse import PER_ORIGIN
from proxy_addon.records import REQUESTS_FILE, RequestLogEntry, ResponseLine
from proxy_addon.records.requestlog import read_request_log
from tests.proxy.conftest import write_task

REQUESTS = 24


def body(i: int) -> bytes:
    return f"response {i}\n".encode() * (200 + 37 * i)  # sizes differ: a mix-up shows


@dataclass
class Origin:
    """An HTTPS HTTP/1.1 keep-alive origin in a thread; close_each answers `Connection: close`."""

    ca: Path
    port: int = 0
    connections: int = 0
    close_each: bool = False
    bodies: list[bytes] = field(default_factory=list)
    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                i = int(head.split(b" ", 2)[1].rsplit(b"/", 1)[1])
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                sent = await reader.readexactly(int(length[1])) if length else b""
                self.bodies.append(sent)
                extra = b"connection: close\r\n" if self.close_each else b""
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n%s\r\n" % (len(body(i)), extra)
                    + body(i)
                )
                await writer.drain()
                if self.close_each:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@pytest.fixture
def origin(tmp_path: Path) -> Iterator[Origin]:
    store = CertStore.from_store(tmp_path / "origin-ca", "origin", 2048)
    entry = store.get_cert("127.0.0.1", [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    cert, key = tmp_path / "origin.pem", tmp_path / "origin.key"
    cert.write_bytes(entry.cert.to_pem())
    key.write_bytes(
        entry.privatekey.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["http/1.1"])
    site = Origin(tmp_path / "origin-ca" / "origin-ca-cert.pem")
    server = site.loop.run_until_complete(
        asyncio.start_server(site.handle, "127.0.0.1", 0, ssl=context)
    )
    site.port = server.sockets[0].getsockname()[1]
    thread = threading.Thread(target=site.loop.run_forever, daemon=True)
    thread.start()
    yield site
    site.loop.call_soon_threadsafe(site.loop.stop)
    thread.join(5)


def fetch_all(
    curl: str, proxy_url: str, ca: Path, origin: Origin, out: Path, parallel: bool, post: bool
) -> list[str]:
    """curl over HTTP/2 to the proxy, REQUESTS requests in one connection; each body checked
    (post: each request sends a body too)."""
    args = [curl, "-s", "--http2", "-x", proxy_url, "--cacert", str(ca)]
    if post:
        args += ["--data-binary", "qty=2&item=mug" * 500]
    args += ["-w", "%{http_version} %{http_code}\\n"]
    if parallel:
        args += ["--parallel", "--parallel-max", str(REQUESTS)]
    for i in range(REQUESTS):
        args += [f"https://127.0.0.1:{origin.port}/n/{i}", "-o", str(out / f"{i}.out")]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    wrong = [i for i in range(REQUESTS) if (out / f"{i}.out").read_bytes() != body(i)]
    assert not wrong, f"responses that are not their request's: {wrong}"
    return done.stdout.split()


def run(
    tmp_path: Path,
    mitm_confdir: Path,
    curl: str,
    origin: Origin,
    parallel: bool,
    *extra: str,
    post: bool = False,
) -> list[str]:
    task = write_task(tmp_path / "task", r"shop\.clawbench\.test/api/checkout")
    options = {
        "clawbench_allow_private": f"127.0.0.1:{origin.port}",
        "ssl_verify_upstream_trusted_ca": str(origin.ca),
    }
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    with start_proxy(
        task, tmp_path / "data", confdir=mitm_confdir, options=options, extra_args=list(extra)
    ) as proxy:
        ca = proxy.ca_cert
        seen = fetch_all(curl, proxy.url, ca, origin, out, parallel, post)
    lines = read_request_log(tmp_path / "data" / REQUESTS_FILE)
    requests = [line for line in lines if isinstance(line, RequestLogEntry)]
    assert len(requests) == REQUESTS and all(line.url for line in requests)
    answers = [line for line in lines if isinstance(line, ResponseLine)]
    assert sorted(a.id for a in answers) == sorted(r.id for r in requests if r.id)
    return seen


def test_http2_requests_in_turn_share_one_http1_connection(
    tmp_path: Path, mitm_confdir: Path, curl: str, origin: Origin
) -> None:
    seen = run(tmp_path, mitm_confdir, curl, origin, False)
    assert seen[0] == "2", "curl did not speak HTTP/2 to the proxy"
    assert origin.connections == 1


def test_without_the_patch_each_request_has_its_own_connection(
    tmp_path: Path, mitm_confdir: Path, curl: str, origin: Origin
) -> None:
    run(tmp_path, mitm_confdir, curl, origin, False, "--stock-h2-to-h1")
    assert origin.connections == REQUESTS


@pytest.mark.parametrize("post", [False, True])
def test_http2_requests_at_once_use_at_most_five_connections(
    tmp_path: Path, mitm_confdir: Path, curl: str, origin: Origin, post: bool
) -> None:
    run(tmp_path, mitm_confdir, curl, origin, True, post=post)
    assert 1 <= origin.connections <= PER_ORIGIN
    assert origin.bodies == [b"qty=2&item=mug" * 500 if post else b""] * REQUESTS


@pytest.mark.parametrize("parallel", [False, True])
def test_an_origin_that_closes_each_connection_still_answers_every_request(
    tmp_path: Path, mitm_confdir: Path, curl: str, origin: Origin, parallel: bool
) -> None:
    origin.close_each = True
    run(tmp_path, mitm_confdir, curl, origin, parallel)
    assert origin.connections == REQUESTS
