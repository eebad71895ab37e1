"""A Docker engine that cannot create containers: a Unix-socket relay in front of the real one.

Everything passes through to /var/run/docker.sock except a container create, which gets the
engine's own kind of answer for a broken daemon (500 with a JSON message). A Ray node started
with DOCKER_HOST pointing here answers pings and has the image, then fails every run: a node
whose Docker engine fails mid-batch.
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
from pathlib import Path

ENGINE = "/var/run/docker.sock"
_CREATE = re.compile(rb"^POST /v[\d.]+/containers/create")
_BODY = b'{"message": "clawbench test: this engine cannot create containers"}'
_BROKEN = (
    b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(_BODY), _BODY)
)


class BrokenEngine:
    """Listens on path until close(); `refused` counts the creates it failed."""

    def __init__(self, path: Path, engine: str = ENGINE) -> None:
        self.path, self.engine = path, engine
        self.refused = 0
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

    def _relay(self, client: socket.socket) -> None:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        upstream.connect(self.engine)
        threading.Thread(target=self._back, args=(upstream, client), daemon=True).start()
        with contextlib.suppress(OSError), client, upstream:
            while chunk := client.recv(65536):
                if _CREATE.match(chunk):  # a request starts a chunk: the client writes it whole
                    self.refused += 1
                    client.sendall(_BROKEN)
                    return
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
