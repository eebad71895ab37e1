"""A patch carried for mitmproxy 12: an HTTP/2 client's requests reuse HTTP/1.1 upstreams.

A browser speaks HTTP/2 to the proxy (the addon keeps connection_strategy=lazy, so mitmproxy
answers the browser's TLS before it knows the origin's protocol and offers HTTP/2). When the
origin speaks HTTP/1.1 only, mitmproxy 12 gives each request an upstream connection of its own
(a TCP connect and a TLS handshake) and closes it after the response: 135 per load of the
benchmark's page, where the browser alone opens 6. Three changes, each a wrapper around the
stock method, undo that:

1. `Http1Client.mark_done`: after an HTTP/2 request's response the connection stays open when
   nothing else asks to close it (a `Connection: close`, a body read until EOF, an upgrade),
   ready for the next request, as after an HTTP/1.1 client's request.
2. `HttpLayer.get_connection`: an HTTP/2 client's request takes an open, idle HTTP/1
   connection of the same spec (address, TLS, via, transport) when there is one. Otherwise a
   new one is opened, up to PER_ORIGIN connections to the address; beyond that the request
   waits for the first to turn idle (mitmproxy's own per-address limit, 5 per client
   connection, is held for a connection's whole life: an idle connection kept open would
   otherwise make a new one wait for a slot that never frees).
3. `HttpLayer._handle_event`: after each event (a response ending is one) the waiting requests
   take the connections that turned idle, or open one where a connection has closed.

A request is never sent on a busy connection: the layers hand a connection to a request and
send its headers in one synchronous pass, so it is busy again before any other request asks.
Nothing changes for an HTTP/1.1 client or an HTTP/2 upstream. Installed by the sandbox's proxy
process only (proxy_addon/addon/master.py), on the mitmproxy versions in TESTED
(tests/proxy/test_h1reuse.py proves it there); any other version runs unpatched, logging why.

Upstream, the same three changes are a few lines inside mitmproxy itself: in Http1Client's
mark_done drop the HTTP/2 clause from `connection_done`; in HttpLayer.get_connection let an
HTTP/2 client reuse an HTTP/1 connection whose Http1Client has no stream, and park a request
(served in register_connection and after each event) rather than open a sixth connection.
Once a mitmproxy release does that, this module goes (TESTED stops matching, and
tests/proxy/test_h1reuse.py keeps proving the behaviour).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Generator
from typing import Any
from weakref import WeakKeyDictionary

from mitmproxy.connection import Connection, ConnectionState, Server
from mitmproxy.net.http import http1
from mitmproxy.proxy import commands, events, layer
from mitmproxy.proxy.layers.http import GetHttpConnection, GetHttpConnectionCompleted, HttpLayer
from mitmproxy.proxy.layers.http._http1 import Http1Client, should_make_pipe
from mitmproxy.version import VERSION

logger = logging.getLogger("clawbench")

TESTED = ("12.",)
"""mitmproxy versions whose HttpLayer and Http1Client this patch was read against and is tested
with."""
PER_ORIGIN = 5
"""Connections to one address per client connection: mitmproxy's own limit (server.py)."""

Commands = Generator[Any, Any, None]

_stock_get_connection = HttpLayer.get_connection
_stock_handle_event = HttpLayer._handle_event
_stock_mark_done = Http1Client.mark_done
_waiting: WeakKeyDictionary[HttpLayer, deque[GetHttpConnection]] = WeakKeyDictionary()


def _http1_client(top: layer.Layer | None) -> Http1Client | None:
    """The HTTP/1 client layer under a connection's layer stack (TLS, then HttpClient)."""
    while top is not None and not isinstance(top, Http1Client):
        top = getattr(top, "child_layer", None)
    return top


def _h2_to_h1(http: HttpLayer) -> bool:
    return http.context.client.alpn == b"h2"


def _idle(http: HttpLayer, event: GetHttpConnection) -> Connection | None:
    """An open HTTP/1 upstream that fits the request and carries no request now."""
    for conn, stack in http.connections.items():
        if (
            isinstance(conn, Server)
            and conn.connected
            and conn.alpn != b"h2"
            and not conn.error
            and conn not in http.waiting_for_establishment
            and event.connection_spec_matches(conn)
        ):
            client = _http1_client(stack)
            if client is not None and client.stream_id is None:
                return conn
    return None


def _in_use(http: HttpLayer, address: tuple[str, int]) -> int:
    """Connections to address that hold one of mitmproxy's per-address slots."""
    return sum(
        1
        for conn in http.connections
        if isinstance(conn, Server)
        and conn.address == address
        and (conn.state is not ConnectionState.CLOSED or conn in http.waiting_for_establishment)
    )


def _hand_over(http: HttpLayer, event: GetHttpConnection, conn: Connection) -> Commands:
    stream = http.command_sources.pop(event)
    yield from http.event_to_child(stream, GetHttpConnectionCompleted(event, (conn, None)))


def _shared(http: HttpLayer, event: GetHttpConnection) -> bool:
    """Whether a connection of the request's spec is being opened (mitmproxy queues the request
    on it) or is HTTP/2 (mitmproxy multiplexes the request on it): the stock way then."""
    return any(
        event.connection_spec_matches(conn)
        and not conn.error
        and (conn in http.waiting_for_establishment or (conn.connected and conn.alpn == b"h2"))
        for conn in http.connections
    )


def _route(http: HttpLayer, event: GetHttpConnection, reuse: bool) -> Commands | None:
    """The commands that give an HTTP/2 client's request its connection, or None when it must
    wait for one to turn idle."""
    if idle := _idle(http, event):
        return _hand_over(http, event, idle)
    if reuse and _shared(http, event):
        return _stock_get_connection(http, event, reuse=True)
    if _in_use(http, event.address) < PER_ORIGIN:
        return _stock_get_connection(http, event, reuse=False)
    return None


def get_connection(self: HttpLayer, event: GetHttpConnection, *, reuse: bool = True) -> Commands:
    """HttpLayer.get_connection, an HTTP/2 client's request reusing idle HTTP/1 upstreams
    (also when mitmproxy asks for a new one: reuse=False after a connection was established
    for several waiting requests)."""
    if not _h2_to_h1(self) or event.transport_protocol != "tcp":
        yield from _stock_get_connection(self, event, reuse=reuse)
    elif (route := _route(self, event, reuse)) is not None:
        yield from route
    else:
        _waiting.setdefault(self, deque()).append(event)


def _serve_waiting(http: HttpLayer) -> Commands:
    """Hand each waiting request an idle connection, or a new one where a slot is free."""
    waiting = _waiting.get(http)
    while waiting:
        event = waiting[0]
        if event not in http.command_sources:  # its stream is gone
            waiting.popleft()
        elif (route := _route(http, event, reuse=False)) is not None:
            waiting.popleft()
            yield from route
        else:
            return


def handle_event(self: HttpLayer, event: events.Event) -> Commands:
    """HttpLayer._handle_event, then the waiting requests served."""
    yield from _stock_handle_event(self, event)
    if self in _waiting:
        yield from _serve_waiting(self)


def _closes_only_for_http2(client: Http1Client, request: bool, response: bool) -> bool:
    """Whether this mark_done ends an exchange that mitmproxy closes only because the client's
    request came over HTTP/2 (or 3): HTTP/1.1 keep-alive otherwise."""
    req, resp = client.request, client.response
    if not (client.request_done or request) or not (client.response_done or response):
        return False
    if req is None or resp is None or not (req.is_http2 or req.is_http3):
        return False
    try:
        until_eof = http1.expected_http_body_size(req, resp) == -1
    except ValueError:
        return False
    return not (
        until_eof
        or should_make_pipe(req, resp)
        or http1.connection_close(req.http_version, req.headers)
        or http1.connection_close(resp.http_version, resp.headers)
    )


def mark_done(self: Http1Client, *, request: bool = False, response: bool = False) -> Commands:
    """Http1Client.mark_done, the connection kept for the next request after an HTTP/2
    client's exchange that would otherwise be kept alive."""
    keep = _closes_only_for_http2(self, request, response)
    for command in _stock_mark_done(self, request=request, response=response):
        closing = isinstance(command, commands.CloseConnection) and command.connection is self.conn
        if keep and closing:
            continue
        yield command
    if keep:  # as the stock method leaves an HTTP/1.1 client's connection
        self.request_done = self.response_done = False
        self.request = self.response = None
        self.stream_id = None
        self.state = self.read_headers
        if self.buf:
            yield from self.state(events.DataReceived(self.conn, b""))


def install() -> bool:
    """Patch HttpLayer and Http1Client on a tested mitmproxy version; False (and a log line)
    otherwise."""
    if not VERSION.startswith(TESTED):
        logger.warning(
            "clawbench: mitmproxy %s is not one the HTTP/1 reuse patch was tested with; each "
            "HTTP/2 request to an HTTP/1.1 site opens its own connection",
            VERSION,
        )
        return False
    HttpLayer.get_connection = get_connection  # type: ignore[method-assign]
    HttpLayer._handle_event = handle_event  # type: ignore[method-assign]
    Http1Client.mark_done = mark_done  # type: ignore[method-assign]
    return True


__all__ = ["PER_ORIGIN", "TESTED", "install"]
