"""A second test site on loopback: a real Flask app, routed by Werkzeug, that records which
handler ran and the filtered values it read (what a server treats as the commit: docs/security.md,
the proxy's rule 5). The method-override middleware is the pattern Flask's documentation gives.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, request
from werkzeug.serving import make_server

__all__ = ["FlaskSite", "start_flask_site"]

_OVERRIDE_HEADERS = ("X-HTTP-Method-Override", "X-Method-Override")


class MethodOverride:
    """WSGI middleware: a POST's X-HTTP-Method-Override header or _method form field names the
    method the app routes it as (Flask's documented pattern, and Rack's, Laravel's, Express's)."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if environ["REQUEST_METHOD"] == "POST":
            for name in _OVERRIDE_HEADERS:
                wanted = environ.get("HTTP_" + name.upper().replace("-", "_"), "")
                if wanted:
                    environ["REQUEST_METHOD"] = wanted.upper()
                    break
        return self.app(environ, start_response)


@dataclass
class FlaskSite:
    host: str
    port: int
    ran: list[tuple[str, str, Any]] = field(default_factory=list)
    """(handler, method as routed, the filtered value it read) for every handler that ran."""
    _server: Any = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def close(self) -> None:
        self._server.shutdown()


def _app(site: FlaskSite) -> Flask:
    app = Flask("clawbench-test-shop")

    @app.get("/api/item")  # a GET commit, params {"id": "42"}; Flask answers HEAD with it too
    def item() -> str:
        site.ran.append(("item", request.method, request.args.get("id")))
        return "item"

    @app.put("/api/cart")  # a PUT commit, body {"item": "mug"}
    def cart() -> str:
        site.ran.append(("cart", request.method, request.values.get("item")))
        return "cart"

    @app.post("/api/checkout")  # a POST commit, body {"item": "mug"}
    def checkout() -> str:
        # values: the query first, then the form (Werkzeug's CombinedMultiDict); a repeat's
        # first value; a multipart body read with the last boundary= of its Content-Type
        site.ran.append(("checkout", request.method, request.values.get("item")))
        return "checkout"

    @app.post("/api/other")
    def other() -> str:
        site.ran.append(("other", request.method, None))
        return "other"

    return app


def start_flask_site(host: str = "127.0.0.1") -> FlaskSite:
    site = FlaskSite(host, 0)
    app = _app(site)
    app.wsgi_app = MethodOverride(app.wsgi_app)  # type: ignore[method-assign]
    server = make_server(host, 0, app, threaded=True)
    site.port, site._server = server.server_port, server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return site
