"""A real HTTP upstream on 127.0.0.1 that records every request and connection it receives."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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
            length = int(self.headers.get("content-length") or 0)
            if self.headers.get("transfer-encoding", "").lower() == "chunked":
                body = b""
                while True:
                    size = int(self.rfile.readline().strip().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        break
                    body += self.rfile.read(size)
                    self.rfile.readline()
            else:
                body = self.rfile.read(length) if length else b""
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
            payload = json.dumps({"ok": True, "path": self.path, "size": len(body)}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
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


__all__ = ["Received", "Upstream", "start_upstream"]
