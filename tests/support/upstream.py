"""Real upstreams on 127.0.0.1 that record every request and connection they receive.

start_upstream(): HTTP/1.1; serves the pages put in `pages` (for Chromium), answers CORS
preflights, and otherwise replies with a small JSON. start_ws_upstream(): a WebSocket echo server
(wsproto over plain sockets) that records the handshake and every message.
"""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import wsproto
import wsproto.events as ws


@dataclass
class Received:
    method: str
    path: str
    headers: list[tuple[str, str]]
    body: bytes
    host: str | None


@dataclass
class Upstream:
    """Counts connections and keeps each request (method, target, header pairs, body bytes)."""

    host: str
    port: int
    requests: list[Received] = field(default_factory=list)
    connections: int = 0
    pages: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    """GET path (without query) → (content type, body), e.g. HTML pages for Chromium."""
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    def clear(self) -> None:
        self.requests.clear()
        self.connections = 0

    def close(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            size = int(handler.rfile.readline().strip().split(b";")[0], 16)
            if size == 0:
                handler.rfile.readline()
                return body
            body += handler.rfile.read(size)
            handler.rfile.readline()
    length = int(handler.headers.get("content-length") or 0)
    return handler.rfile.read(length) if length else b""


def start_upstream(host: str = "127.0.0.1") -> Upstream:
    up = Upstream(host, 0)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            with lock:
                up.connections += 1

        def _handle(self) -> None:
            body = _read_body(self)
            with lock:
                up.requests.append(
                    Received(
                        self.command,
                        self.path,
                        list(self.headers.items()),
                        body,
                        self.headers.get("host"),
                    )
                )
            page = up.pages.get(self.path.partition("?")[0]) if self.command == "GET" else None
            if page is not None:
                ctype, payload = page
            else:
                ctype = "application/json"
                payload = json.dumps({"ok": True, "path": self.path, "size": len(body)}).encode()
            self.send_response(204 if self.command == "OPTIONS" else 200)
            if origin := self.headers.get("origin"):
                # Cross-origin pages in the Chromium tests may call this upstream.
                self.send_header("access-control-allow-origin", origin)
                self.send_header("access-control-allow-credentials", "true")
                wanted = self.headers.get("access-control-request-headers")
                if wanted:
                    self.send_header("access-control-allow-headers", wanted)
                self.send_header("access-control-allow-methods", "GET, POST, PUT, PATCH, DELETE")
            if self.command == "OPTIONS":
                self.send_header("content-length", "0")
                self.end_headers()
                return
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(payload)))
            self.send_header("cache-control", "no-store")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = _handle

        def log_message(self, format: str, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server((host, 0), Handler)
    up.port = server.server_address[1]
    up._server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return up


@dataclass
class WsUpstream:
    """A WebSocket echo server: records handshake targets, headers and every message."""

    host: str
    port: int
    handshakes: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)
    messages: list[str | bytes] = field(default_factory=list)
    connections: int = 0
    _sock: socket.socket | None = None

    def close(self) -> None:
        if self._sock:
            self._sock.close()


def _serve_ws(up: WsUpstream, conn: socket.socket) -> None:
    proto = wsproto.WSConnection(wsproto.ConnectionType.SERVER)
    with conn:
        while True:
            data = conn.recv(65536)
            if not data:
                return
            proto.receive_data(data)
            for event in proto.events():
                if isinstance(event, ws.Request):
                    headers = [(k.decode(), v.decode()) for k, v in event.extra_headers]
                    up.handshakes.append((event.target, headers))
                    conn.sendall(proto.send(ws.AcceptConnection()))
                elif isinstance(event, ws.TextMessage | ws.BytesMessage):
                    up.messages.append(event.data)
                    reply = (
                        ws.TextMessage(f"echo:{event.data}")
                        if isinstance(event, ws.TextMessage)
                        else ws.BytesMessage(b"echo:" + bytes(event.data))
                    )
                    conn.sendall(proto.send(reply))
                elif isinstance(event, ws.CloseConnection):
                    conn.sendall(proto.send(event.response()))
                    return
                elif isinstance(event, ws.Ping):
                    conn.sendall(proto.send(event.response()))


def start_ws_upstream(host: str = "127.0.0.1") -> WsUpstream:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    sock.listen(16)
    up = WsUpstream(host, sock.getsockname()[1], _sock=sock)

    def accept() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return  # closed
            up.connections += 1
            threading.Thread(target=_serve_ws, args=(up, conn), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return up


__all__ = ["Received", "Upstream", "WsUpstream", "start_upstream", "start_ws_upstream"]
