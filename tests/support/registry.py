"""A read-only Docker registry on 127.0.0.1 serving one image from its `docker save` tar.

The registry's HTTP API v2 as the engine pulls: GET /v2/, the image's manifest (schema 2) by tag
or digest, and its blobs (the config, whose digest is the image's ID, and each layer's tar as
`docker save` wrote it). The engine treats a registry on localhost as plain HTTP, so a pull of
`localhost:PORT/NAME:TAG` reaches this server and nothing else.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"


def _digest(data: bytes) -> str:
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


class SavedImageRegistry:
    """Serves NAME:TAG from a saved image until close(); `pulls` counts manifest requests."""

    def __init__(self, saved: bytes, name: str, tag: str) -> None:
        with tarfile.open(fileobj=io.BytesIO(saved)) as tar:
            (entry,) = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
            config = tar.extractfile(entry["Config"]).read()  # type: ignore[union-attr]
            layers = [tar.extractfile(p).read() for p in entry["Layers"]]  # type: ignore[union-attr]
        self.blobs = {_digest(b): b for b in (config, *layers)}
        manifest = {
            "schemaVersion": 2,
            "mediaType": _MANIFEST,
            "config": {
                "mediaType": "application/vnd.docker.container.image.v1+json",
                "size": len(config),
                "digest": _digest(config),
            },
            "layers": [
                {
                    "mediaType": "application/vnd.docker.image.rootfs.diff.tar.gzip",
                    "size": len(layer),
                    "digest": _digest(layer),
                }
                for layer in layers
            ],
        }
        self.manifest = json.dumps(manifest).encode()
        self.name, self.tag, self.pulls = name, tag, 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def image(self) -> str:
        return f"localhost:{self._server.server_address[1]}/{self.name}:{self.tag}"

    def _answer(self, path: str) -> tuple[int, bytes, dict[str, str]]:
        if path == "/v2/":
            return 200, b"{}", {"Content-Type": "application/json"}
        prefix = f"/v2/{self.name}/"
        if path in (f"{prefix}manifests/{self.tag}", f"{prefix}manifests/{_digest(self.manifest)}"):
            self.pulls += 1
            headers = {"Content-Type": _MANIFEST, "Docker-Content-Digest": _digest(self.manifest)}
            return 200, self.manifest, headers
        blob = self.blobs.get(path.removeprefix(f"{prefix}blobs/"))
        if path.startswith(f"{prefix}blobs/") and blob is not None:
            return 200, blob, {"Content-Type": "application/octet-stream"}
        return 404, b'{"errors": [{"code": "NOT_FOUND"}]}', {"Content-Type": "application/json"}

    def _handler(self) -> Any:
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def _reply(self, body: bool) -> None:
                status, data, headers = registry._answer(self.path.split("?")[0])
                self.send_response(status)
                headers = {**headers, "Docker-Distribution-API-Version": "registry/2.0"}
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def do_GET(self) -> None:
                self._reply(True)

            def do_HEAD(self) -> None:
                self._reply(False)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
