"""The tests' "internet": one container on an --internal network that records everything it gets.

Usage (inside the sandbox image): python3 fakesite.py CERT.pem KEY.pem LOG.jsonl

HTTP on TCP 80 and 8080, HTTPS on 443 (a certificate from the tests' own CA), UDP echo on 443
and 5353; every socket is dual-stack (IPv4 and IPv6). Each request or datagram is one JSON line
in LOG.jsonl, so a test can prove what reached the site and what never did. Stdlib only.
"""

from __future__ import annotations

import json
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
LOG_PATH = "/tmp/site.jsonl"


def record(entry: dict[str, object]) -> None:
    entry["t"] = time.time()
    with LOCK, open(LOG_PATH, "a") as f:
        f.write(json.dumps(entry) + "\n")


class DualStackServer(ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()


class TlsServer(DualStackServer):
    """TLS per connection, in the handler's thread (a client that never handshakes blocks none)."""

    context: ssl.SSLContext

    def finish_request(self, request: socket.socket, client_address: tuple) -> None:
        request.settimeout(10)
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError) as e:
            record(
                {"proto": "tls-failed", "port": 443, "client": client_address[0], "error": str(e)}
            )
            return
        super().finish_request(tls, client_address)


ORDER_FORM = b"""<!doctype html><meta charset="utf-8"><title>Order a lamp</title>
<h1>Desk lamp</h1>
<form method="POST" action="/api/order-form">
  <label>Item <input name="item" value="lamp"></label>
  <label>Quantity <input name="qty" type="number" value="1"></label>
  <label>Deliver to <input name="name" placeholder="Full name"></label>
  <button type="submit">Place order</button>
</form>
"""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _any(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        record(
            {
                "proto": "https" if isinstance(self.connection, ssl.SSLSocket) else "http",
                "port": self.server.server_address[1],
                "method": self.command,
                "path": self.path,
                "host": self.headers.get("Host"),
                "body": body.decode("utf-8", "replace"),
                "client": self.client_address[0],
            }
        )
        page = self.command == "GET" and self.path == "/order"  # a form for browser agents
        reply = ORDER_FORM if page else json.dumps({"ok": True, "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html" if page else "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any

    def log_message(self, format: str, *args: object) -> None:
        pass


def serve_udp(port: int) -> None:
    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    sock.bind(("::", port))
    while True:
        data, peer = sock.recvfrom(65535)
        record({"proto": "udp", "port": port, "client": peer[0], "len": len(data)})
        sock.sendto(b"echo:" + data, peer)


def main(argv: list[str]) -> int:
    global LOG_PATH
    cert, key, LOG_PATH = argv
    tls = TlsServer(("::", 443), Handler)
    tls.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.context.load_cert_chain(cert, key)
    servers = [DualStackServer(("::", 80), Handler), tls, DualStackServer(("::", 8080), Handler)]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    threads += [threading.Thread(target=serve_udp, args=(p,), daemon=True) for p in (443, 5353)]
    for thread in threads:
        thread.start()
    print("fakesite: ready", flush=True)
    threads[0].join()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
