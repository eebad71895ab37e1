"""Plumbing for the live proxy tests: a real mitmdump + addon, a real upstream, real clients.

The reserved test hosts are routed to the loopback upstream with clawbench_route (matching still
sees https://shop.clawbench.test/...), and a second test addon refuses any connection that is
not to a loopback address, so nothing here can leave the machine.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mitmproxy.addons.proxyserver import Proxyserver
from mitmproxy.test import taddons

from proxy_addon.addon import ProxyProcess, start_proxy
from proxy_addon.clawbench import ClawbenchInterceptor
from proxy_addon.records import REQUESTS_FILE, Interception, LogLine, ResponseLine
from proxy_addon.records.requestlog import is_request, read_request_log
from tests.conftest import require
from tests.proxy.hooks import CHECKOUT as HOOK_CHECKOUT
from tests.proxy.hooks import SHOP as HOOK_SHOP
from tests.proxy.hooks import SITE, Armed
from tests.support.upstream import Received, Upstream, start_upstream

SHOP = "shop.clawbench.test"
WWW = "www.clawbench.test"
GUARD = Path(__file__).with_name("loopback_only.py")
HOP_BY_HOP = frozenset({"connection", "proxy-connection", "keep-alive", "te", "upgrade"})


def write_task(
    directory: Path,
    url_pattern: str,
    method: str = "POST",
    body: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
) -> Path:
    """A minimal valid task.json with this eval_schema."""
    schema: dict[str, Any] = {"url_pattern": url_pattern, "method": method}
    if body is not None:
        schema["body"] = body
    if params is not None:
        schema["params"] = params
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "task.json"
    path.write_text(json.dumps({"instruction": "t", "eval_schema": schema, "time_limit": 5}))
    return path


def read_head(sock: socket.socket) -> bytes:
    """Bytes from sock until a blank line ends a message head (or the peer closes): the head,
    and whatever came with it."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def secrets_in(directory: Path, secrets: Sequence[str]) -> list[tuple[str, str]]:
    """(file, secret) for every secret found in any file under directory (temp files too)."""
    found = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found += [(path.name, s) for s in secrets if s.encode() in data]
    return found


@dataclass
class CurlResult:
    code: int
    status: str
    body: str
    sent: list[tuple[str, str]]
    """Header pairs of the last request curl wrote (from -v), after any CONNECT."""
    stderr: str


@dataclass
class Run:
    """One proxy run: the process, its data dir, the upstream behind it."""

    proxy: ProxyProcess
    data: Path
    upstream: Upstream

    def curl(self, *args: str, timeout: float = 20) -> CurlResult:
        cmd = ["curl", "-sS", "-v", "--suppress-connect-headers", "--max-time", "15"]
        cmd += ["-x", self.proxy.url]
        cmd += ["--cacert", str(self.proxy.ca_cert), "-w", "\n%{http_code}", *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        body, _, status = proc.stdout.rpartition("\n")
        return CurlResult(proc.returncode, status, body, _sent_headers(proc.stderr), proc.stderr)

    def log(self) -> list[LogLine]:
        """The request lines of requests.jsonl (model calls too), through its reader."""
        return [line for line in read_request_log(self.data / REQUESTS_FILE) if is_request(line)]

    def answers(self) -> list[ResponseLine]:
        """The answer lines of requests.jsonl, one per logged request once it is answered."""
        lines = read_request_log(self.data / REQUESTS_FILE)
        return [line for line in lines if isinstance(line, ResponseLine)]

    def raw_log(self) -> str:
        path = self.data / REQUESTS_FILE
        return path.read_text() if path.exists() else ""

    def interception(self) -> Interception:
        return Interception.model_validate_json((self.data / "interception.json").read_bytes())

    def received(self, path_prefix: str) -> list[Received]:
        return [r for r in self.upstream.requests if r.path.startswith(path_prefix)]


def _sent_headers(verbose: str) -> list[tuple[str, str]]:
    blocks: list[list[str]] = []
    for line in verbose.splitlines():
        if not line.startswith("> "):
            continue
        text = line[2:]
        if text and text.split(" ", 1)[0].isupper() and " HTTP/" in text:
            blocks.append([])  # a request line starts a new request
        elif blocks and ":" in text:
            blocks[-1].append(text)
    requests = [b for b in blocks if b]
    last = requests[-1] if requests else []
    return [(h.split(":", 1)[0], h.split(":", 1)[1].strip()) for h in last]


def end_to_end(sent: Sequence[tuple[str, str]], got: Sequence[tuple[str, str]]) -> None:
    """Header pairs as the client sent them arrive unchanged (names case-folded for HTTP/2)."""

    def norm(pairs: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        return [(k.lower(), v) for k, v in pairs if k.lower() not in HOP_BY_HOP]

    assert norm(got) == norm(sent)


@pytest.fixture(scope="session")
def mitm_confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mitmproxy CA for the whole session (key generation is slow; parallel starts race)."""
    from mitmproxy.certs import CertStore

    conf = tmp_path_factory.mktemp("mitmproxy-conf")
    CertStore.from_store(conf, "mitmproxy", 2048)
    return conf


@pytest.fixture(scope="session")
def curl() -> str:
    path = shutil.which("curl")
    require(path is not None, "curl")
    assert path is not None
    return path


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    up = start_upstream()
    yield up
    up.close()


@pytest.fixture
def launch(tmp_path: Path, upstream: Upstream, mitm_confdir: Path) -> Iterator[Any]:
    """launch(task, **options) → Run; clears the upstream's record; stops every proxy after."""
    started: list[ProxyProcess] = []

    def _launch(task: Path, name: str = "data", **options: str | list[str]) -> Run:
        upstream.clear()
        opts: dict[str, str | Sequence[str]] = {
            "clawbench_route": [f"{SHOP}={upstream.url}", f"{WWW}={upstream.url}"]
        }
        opts.update(options)
        data = tmp_path / name
        proxy = start_proxy(
            task, data, confdir=mitm_confdir, options=opts, extra_args=["-s", str(GUARD)]
        )
        started.append(proxy)
        return Run(proxy, data, upstream)

    yield _launch
    for proxy in started:
        proxy.stop()


@pytest.fixture
def arm(tmp_path: Path) -> Iterator[Any]:
    """arm(pattern, method, schema=..., **options) → an addon armed in a taddons context; the
    shop is routed to SITE unless clawbench_route says otherwise."""
    contexts: list[taddons.context] = []

    def _arm(pattern: str = HOOK_CHECKOUT, method: str = "POST", **opts: Any) -> Armed:
        addon = ClawbenchInterceptor()
        tctx = taddons.context(Proxyserver(), addon)  # Proxyserver declares the proxy options
        contexts.append(tctx)
        task = write_task(
            tmp_path / f"task{len(contexts)}", pattern, method, **opts.pop("schema", {})
        )
        data = tmp_path / f"data{len(contexts)}"
        opts.setdefault("clawbench_route", [f"{HOOK_SHOP}={SITE}"])
        tctx.configure(addon, clawbench_task=str(task), clawbench_data=str(data), **opts)
        assert addon.fatal is None and addon.matcher is not None
        return Armed(tctx, addon, data)

    yield _arm
    for tctx in contexts:
        tctx.addon = None
        tctx.__exit__(None, None, None)
