"""mitmdump addon for the sandbox: refuse every stream that is not HTTP, so nothing passes unseen.

Usage: mitmdump -s proxy_addon/clawbench.py -s sandbox/container/rawguard.py ...

mitmproxy relays bytes it cannot parse as HTTP as a raw TCP stream (after a CONNECT, or through
the transparent listener); the interception addon only sees HTTP requests, so such a stream
would reach a server unmatched and unlogged. Killing the flow in tcp_start does not stop
mitmproxy 12's TCP layer, so the layer itself is replaced in next_layer once mitmproxy chose
it: the client connection is closed before a server connection is opened or a byte forwarded,
and the refusal is named in the proxy's log.
"""

from __future__ import annotations

import logging
from collections.abc import Generator
from typing import Any

from mitmproxy import ctx
from mitmproxy.proxy import commands, events, layer, layers

logger = logging.getLogger("clawbench.rawguard")


class _Refused(layer.Layer):
    """A layer that closes the client connection at once and ignores whatever else happens."""

    def _handle_event(self, event: events.Event) -> Generator[commands.Command, Any, None]:
        if isinstance(event, events.Start):
            yield commands.CloseConnection(self.context.client)


class ClawbenchRawGuard:
    """Replaces raw TCP and UDP layers with a refusal."""

    def __init__(self) -> None:
        self.refused = 0

    def next_layer(self, nextlayer: Any) -> None:
        # Scripts run before mitmproxy's own NextLayer addon: let it decide first (it leaves a
        # decided layer alone when its turn comes), then judge its decision.
        builtin = ctx.master.addons.get("nextlayer")
        if nextlayer.layer is None and builtin is not None:
            builtin.next_layer(nextlayer)
        if isinstance(nextlayer.layer, (layers.TCPLayer, layers.UDPLayer)):
            self.refused += 1
            server = nextlayer.context.server.address
            target = f"{server[0]}:{server[1]}" if server else "?"
            logger.warning(
                "clawbench: a stream to %s is not HTTP; refused (%d so far)", target, self.refused
            )
            nextlayer.layer = _Refused(nextlayer.context)


addons = [ClawbenchRawGuard()]
