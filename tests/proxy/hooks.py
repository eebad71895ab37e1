"""Calling the addon's hooks directly (mitmproxy.test.taddons / tflow): flows, an armed addon.

Not a conftest: the hook tests import what they use from here.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Any

from mitmproxy import http
from mitmproxy.proxy.mode_specs import ProxyMode
from mitmproxy.test import taddons, tflow

from proxy_addon.clawbench import ClawbenchInterceptor
from proxy_addon.records import REQUESTS_FILE, Interception, LogLine, ResponseLine
from proxy_addon.records.requestlog import is_request, read_request_log

CHECKOUT = r"shop\.clawbench\.test/api/checkout"
SHOP = "shop.clawbench.test"
SITE = "http://203.0.113.7:80"
"""Where the shop is routed by default: a made-up address no test connects to."""


async def _wait(pending: Any) -> None:
    await pending


def make_flow(
    host: str,
    port: int,
    path: str = "/api/checkout",
    *,
    method: str = "POST",
    scheme: str = "http",
    headers: list[tuple[str, str]] | None = None,
    body: bytes = b"",
    http_version: str = "HTTP/1.1",
    authority: str = "",
    mode: str = "regular",
    sni: str | None = None,
) -> http.HTTPFlow:
    """A request as mitmproxy hands it to the hook: host and port are where it would go (the
    CONNECT target or absolute-form host; in transparent mode the original destination)."""
    req = http.Request(
        host=host,
        port=port,
        method=method.encode(),
        scheme=scheme.encode(),
        authority=authority.encode(),
        path=path.encode("utf-8", "surrogateescape"),
        http_version=http_version.encode(),
        headers=http.Headers(
            [(k.encode(), v.encode("utf-8", "surrogateescape")) for k, v in headers or []]
        ),
        content=body,
        trailers=None,
        timestamp_start=1767225600.0,
        timestamp_end=1767225600.1,
    )
    flow = tflow.tflow(req=req)
    flow.client_conn.proxy_mode = ProxyMode.parse(mode)
    flow.client_conn.sni = sni
    return flow


class Armed:
    """An addon armed for one task inside a taddons context, with its data dir."""

    def __init__(self, tctx: taddons.context, addon: ClawbenchInterceptor, data: Path) -> None:
        self.tctx, self.addon, self.data = tctx, addon, data

    def send(self, flow: http.HTTPFlow) -> http.HTTPFlow:
        """The request hook, awaited as mitmproxy does when it looks a name up first."""
        pending = self.addon.request(flow)
        if inspect.isawaitable(pending):
            asyncio.run(_wait(pending))
        return flow

    def error(self, flow: http.HTTPFlow) -> None:
        pending = self.addon.error(flow)
        if inspect.isawaitable(pending):
            asyncio.run(_wait(pending))

    def log(self) -> list[LogLine]:
        """The request lines of requests.jsonl (model calls too), through its reader."""
        return [line for line in read_request_log(self.data / REQUESTS_FILE) if is_request(line)]

    def answers(self) -> list[ResponseLine]:
        lines = read_request_log(self.data / REQUESTS_FILE)
        return [line for line in lines if isinstance(line, ResponseLine)]

    def interception(self) -> Interception:
        return Interception.model_validate_json((self.data / "interception.json").read_bytes())


__all__ = ["CHECKOUT", "SHOP", "SITE", "Armed", "make_flow"]
