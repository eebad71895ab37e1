"""The demo website: the pages of our demo tasks, for the reserved demo hosts.

The proxy routes the demo hosts here (`clawbench_route`), and every other host as well, so
nothing leaves the machine; the Host header says which site a request is for. Every request
that arrives is kept (`received`), so the demo can show that the commit requests never did.

The local demo serves it on 127.0.0.1 in a thread; `clawbench-demo --sandbox` runs it in a
container of its own on the demo's internal network, with the scripted models of the
browser-use runs beside it:

    python -m sandbox.demo.site --port 8080 --log FILE [--model PORT=SCRIPT.json ...]

`--log` gets one JSON line per request received (Received.to_json), which the host reads back.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

PAGES = Path(__file__).resolve().with_name("pages")

HOSTS = (
    "shop.clawbench.test",
    "reviews.clawbench.test",
    "jobs.clawbench.test",
    "news.clawbench.test",
)

_GET_PAGES = {
    ("shop.clawbench.test", "/products/blue-ceramic-mug"): "shop.html",
    ("reviews.clawbench.test", "/products/trailhead-30l"): "reviews.html",
    ("jobs.clawbench.test", "/jobs/JR-1042"): "jobs.html",
    ("news.clawbench.test", "/newsletter"): "newsletter.html",
    ("news.clawbench.test", "/newsletter/manage"): "manage.html",
}
_ANSWERS = {
    # What the live site would answer; the demo's commit requests never get here.
    ("POST", "shop.clawbench.test", "/api/cart"): {"ok": True, "cart_items": 1},
    ("POST", "shop.clawbench.test", "/api/checkout/preview"): {"shipping": "6.50 CAD"},
    ("POST", "shop.clawbench.test", "/api/checkout"): {"order": "CB-10001"},
    ("GET", "reviews.clawbench.test", "/products/trailhead-30l/reviews"): {"reviews": []},
    ("POST", "reviews.clawbench.test", "/products/trailhead-30l/reviews"): {"ok": True},
    ("POST", "jobs.clawbench.test", "/api/applications"): {"application": "APP-1"},
    ("GET", "news.clawbench.test", "/newsletter/subscribe"): {"subscribed": True},
    ("POST", "news.clawbench.test", "/newsletter/unsubscribe"): {"unsubscribed": True},
}


@dataclass(frozen=True)
class Received:
    """One request the site answered."""

    method: str
    host: str
    target: str
    content_type: str | None
    body: bytes

    def to_json(self) -> str:
        """One line of the site's --log."""
        fields: dict[str, Any] = {k: getattr(self, k) for k in ("method", "host", "target")}
        fields["content_type"] = self.content_type
        fields["body_b64"] = base64.b64encode(self.body).decode()
        return json.dumps(fields)

    @classmethod
    def from_json(cls, line: str) -> Received:
        d = json.loads(line)
        body = base64.b64decode(d["body_b64"])
        return cls(d["method"], d["host"], d["target"], d["content_type"], body)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return  # the proxy's requests.jsonl is the log that matters

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length) if length else b""
        host = (self.headers.get("host") or "").split(":")[0].lower()
        path = urlsplit(self.path).path
        self.server.record(
            Received(self.command, host, self.path, self.headers.get("content-type"), body)
        )
        if self.command == "GET" and path == "/favicon.ico":
            return self._send(204, "image/x-icon", b"")
        if self.command == "GET" and path == "/static/autopilot.js":
            return self._send(200, "text/javascript", (PAGES / "autopilot.js").read_bytes())
        page = _GET_PAGES.get((host, path)) if self.command == "GET" else None
        if page is not None:
            return self._send(200, "text/html; charset=utf-8", (PAGES / page).read_bytes())
        answer = _ANSWERS.get((self.command, host, path))
        if answer is not None:
            return self._send(200, "application/json", json.dumps(answer).encode())
        self._send(404, "text/plain", b"not found on the demo site\n")

    def _send(self, status: int, ctype: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(payload)))
        self.send_header("cache-control", "no-store")
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str = "127.0.0.1", port: int = 0, log: IO[str] | None = None):
        super().__init__((host, port), _Handler)
        self._lock = threading.Lock()
        self.received: list[Received] = []
        self._log = log

    def handle_error(self, request: object, client_address: object) -> None:
        # A run's proxy is stopped as soon as the agent is done; a reply it no longer reads
        # is expected then, anything else is a bug worth its traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]

    def record(self, item: Received) -> None:
        with self._lock:
            self.received.append(item)
            if self._log is not None:
                self._log.write(item.to_json() + "\n")
                self._log.flush()


class DemoSite:
    """The demo website in a background thread; a context manager that stops it."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def routes(self) -> list[str]:
        """clawbench_route values sending every demo host here, and every other host too: a
        browser's own background traffic gets a 404 here instead of reaching the internet."""
        return [f"{host}=http://127.0.0.1:{self.port}" for host in (*HOSTS, "*")]

    @property
    def received(self) -> list[Received]:
        with self._server._lock:
            return list(self._server.received)

    def __enter__(self) -> DemoSite:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the demo site (and the scripted models) until killed: the sandbox demo's site
    container."""
    from sandbox.demo.scripted_model import ScriptedServer

    p = argparse.ArgumentParser(prog="python -m sandbox.demo.site", description=__doc__)
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--log", type=Path, required=True, help="one JSON line per request received")
    p.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="PORT=SCRIPT",
        help="a scripted OpenAI-compatible model on PORT answering with SCRIPT's steps",
    )
    args = p.parse_args(argv)
    for spec in args.model:
        port, _, script = spec.partition("=")
        steps = json.loads(Path(script).read_text(encoding="utf-8"))
        ScriptedServer(steps, "0.0.0.0", int(port)).start()
    with open(args.log, "a", encoding="utf-8") as log:
        server = _Server("0.0.0.0", args.port, log)
        print(f"demo site: ready on port {args.port}", flush=True)
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
