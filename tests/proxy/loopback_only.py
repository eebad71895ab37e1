"""Test-only mitmproxy addon: the proxy may open connections to 127.0.0.1 / ::1 only.

Loaded after the ClawBench addon in the proxy tests, so Chromium's background requests (or a
bug that forwards a blocked request somewhere unrouted) can never leave the machine.
"""

from __future__ import annotations

import ipaddress
import logging

from mitmproxy import connection
from mitmproxy.proxy import server_hooks

logger = logging.getLogger("loopback_only")


def _loopback(address: connection.Address | None) -> bool:
    if not address:
        return False
    try:
        return ipaddress.ip_address(address[0]).is_loopback
    except ValueError:
        return False


class LoopbackOnly:
    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        if not _loopback(data.server.address):
            data.server.error = f"test guard: {data.server.address} is not a loopback address"
            logger.info("loopback_only: refused %s", data.server.address)


addons = [LoopbackOnly()]
