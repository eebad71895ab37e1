"""A Docker engine that fails a node's runs: a Unix-socket relay in front of the real one.

Everything passes through to /var/run/docker.sock except a container create. The first
`fail_creates` of them get the engine's own kind of answer for a broken daemon (500 with a JSON
message); every later one reaches the engine without NET_ADMIN in its HostConfig.CapAdd, as on a
host whose engine does not grant it (rootless Docker, a hardened runtime): the container starts
and its firewall cannot be installed. A Ray node started with DOCKER_HOST pointing here answers
pings and has the image, then fails every run: a node whose Docker engine fails mid-batch.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
from pathlib import Path

ENGINE = "/var/run/docker.sock"
_CREATE = re.compile(rb"^POST /v[\d.]+/containers/create")
_LENGTH = re.compile(rb"^content-length:[ \t]*(\d+)[ \t]*(?=\r?$)", re.IGNORECASE | re.MULTILINE)
_BODY = b'{"message": "clawbench test: this engine cannot create containers"}'
_BROKEN = (
    b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(_BODY), _BODY)
)


class BrokenEngine:
    """Listens on path until close(); `refused` counts the creates it failed, `stripped` those it
    passed on without NET_ADMIN."""

    def __init__(self, path: Path, fail_creates: int | None = None, engine: str = ENGINE) -> None:
        self.path, self.engine = path, engine
        self.fail_creates = fail_creates
        """None: fail every create."""
        self.refused = 0
        self.stripped = 0
        self._lock = threading.Lock()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(64)
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def docker_host(self) -> str:
        return f"unix://{self.path}"

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _fails(self) -> bool:
        """Whether this create fails (else it goes on without NET_ADMIN)."""
        with self._lock:
            if self.fail_creates is None or self.refused < self.fail_creates:
                self.refused += 1
                return True
            self.stripped += 1
            return False

    def _relay(self, client: socket.socket) -> None:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(self.engine)
        threading.Thread(target=self._back, args=(upstream, client), daemon=True).start()
        with contextlib.suppress(OSError), client, upstream:
            while chunk := client.recv(65536):
                if _CREATE.match(chunk):  # a request starts a chunk: the client writes it whole
                    if self._fails():
                        client.sendall(_BROKEN)
                        return
                    chunk = _without_net_admin(chunk, client)
                upstream.sendall(chunk)

    @staticmethod
    def _back(upstream: socket.socket, client: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := upstream.recv(65536):
                client.sendall(chunk)
            client.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._server.close()
        self.path.unlink(missing_ok=True)


def _without_net_admin(start: bytes, client: socket.socket) -> bytes:
    """The whole create request that begins with start (its headers, its Content-Length body),
    NET_ADMIN taken out of the body's HostConfig.CapAdd."""
    data = start
    while b"\r\n\r\n" not in data:
        data += client.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    found = _LENGTH.search(head)
    assert found, "a container create without Content-Length"
    while len(body) < int(found[1]):
        body += client.recv(65536)
    config = json.loads(body)
    host = config.setdefault("HostConfig", {})
    host["CapAdd"] = [c for c in host.get("CapAdd") or [] if c != "NET_ADMIN"]
    body = json.dumps(config).encode()
    head = _LENGTH.sub(b"Content-Length: %d" % len(body), head)
    return head + b"\r\n\r\n" + body
