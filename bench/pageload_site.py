"""The page-load benchmark's site: one realistic page served by an HTTPS HTTP/1.1 origin and an
HTTPS HTTP/2 origin on loopback, both in this one process (asyncio).

Usage: python bench/pageload_site.py DIR   (DIR holds cert.pem/key.pem; writes DIR/ports.json
{"h1": PORT, "h2": PORT} once both listen, then serves until killed)

The page (`/`) is 135 requests, about 2.4 MB: the HTML, 12 stylesheets (each with two background
images), 12 scripts, 84 images and 2 fetch calls, plus the two-image test of each stylesheet.
Once the load event has fired and both fetch calls answered, the page sets `window.__pageload`
to {ms: performance.now(), images, broken}: the time from navigation start, as the browser saw
it.
"""

from __future__ import annotations

import asyncio
import json
import random
import ssl
import struct
import sys
import zlib
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import h2.exceptions

STYLESHEETS = 12
SCRIPTS = 12
IMAGES = 84
BACKGROUNDS_PER_SHEET = 2
FETCHES = 2


def _png(seed: int, side: int) -> bytes:
    """A valid side x side RGB PNG of noise (it does not compress: its size is its bytes)."""
    rng = random.Random(seed)
    rows = b"".join(b"\0" + rng.randbytes(side * 3) for _ in range(side))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    head = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + chunk(b"IDAT", zlib.compress(rows, 1))
        + chunk(b"IEND", b"")
    )


def _page() -> str:
    sheets = "".join(f'<link rel="stylesheet" href="/css/{i}.css">\n' for i in range(STYLESHEETS))
    half = SCRIPTS // 2
    head_js = "".join(f'<script src="/js/{i}.js"></script>\n' for i in range(half))
    tail_js = "".join(f'<script src="/js/{i}.js"></script>\n' for i in range(half, SCRIPTS))
    boxes = "".join(
        f'<div class="bg{i}-{j}">box</div>'
        for i in range(STYLESHEETS)
        for j in range(BACKGROUNDS_PER_SHEET)
    )
    imgs = "".join(f'<img src="/img/{i}.png" alt="">' for i in range(IMAGES))
    fetches = ",".join(f'fetch("/api/{i}.json").then(r=>r.json())' for i in range(FETCHES))
    done = (
        "<script>const loaded=new Promise(r=>addEventListener('load',r));"
        f"window.__done=Promise.all([loaded,{fetches}]).then(()=>{{"
        "const im=[...document.images];"
        "window.__pageload={ms:performance.now(),images:im.length,"
        "broken:im.filter(i=>!i.naturalWidth).length};return window.__pageload;});</script>"
    )
    return (
        "<!doctype html><html><head><title>bench</title><link rel='icon' href='data:,'>\n"
        f"{sheets}{head_js}</head>"
        f"<body><h1>Catalogue</h1>{boxes}{imgs}\n{tail_js}{done}</body></html>"
    )


def site() -> dict[str, tuple[bytes, bytes]]:
    """Every path of the site → (content type, body)."""
    files: dict[str, tuple[bytes, bytes]] = {"/": (b"text/html; charset=utf-8", _page().encode())}
    for i in range(STYLESHEETS):
        rules = "".join(
            f".bg{i}-{j}{{background:url(/bg/{i}-{j}.png);height:20px}}\n"
            for j in range(BACKGROUNDS_PER_SHEET)
        )
        filler = "".join(f".c{i}-{k}{{margin:{k}px;color:#{k:06x}}}\n" for k in range(120))
        files[f"/css/{i}.css"] = (b"text/css", (rules + filler).encode())
        for j in range(BACKGROUNDS_PER_SHEET):
            files[f"/bg/{i}-{j}.png"] = (b"image/png", _png(1000 + i * 10 + j, 48))
    for i in range(SCRIPTS):
        body = "".join(f"function f{i}_{k}(a){{return a*{k}+{i};}}\n" for k in range(700))
        files[f"/js/{i}.js"] = (b"application/javascript", body.encode())
    for i in range(IMAGES):
        files[f"/img/{i}.png"] = (b"image/png", _png(i, 72 + (i % 5) * 8))
    for i in range(FETCHES):
        answer = json.dumps({"items": list(range(50))}).encode()
        files[f"/api/{i}.json"] = (b"application/json", answer)
    return files


FILES = site()
NOT_FOUND = (b"text/plain", b"not found")


class H1(asyncio.Protocol):
    """HTTP/1.1 keep-alive, one request at a time per connection (as a browser sends them)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.buf = b""

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while b"\r\n\r\n" in self.buf:
            head, self.buf = self.buf.split(b"\r\n\r\n", 1)
            path = head.split(b" ", 2)[1].decode()
            kind, body = FILES.get(path, NOT_FOUND)
            status = b"200 OK" if path in FILES else b"404 Not Found"
            self.transport.write(
                b"HTTP/1.1 "
                + status
                + b"\r\ncontent-type: "
                + kind
                + b"\r\ncache-control: no-store\r\ncontent-length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )


class H2(asyncio.Protocol):
    """HTTP/2 with flow control: what a window does not take waits for its WINDOW_UPDATE."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.conn = h2.connection.H2Connection(
            h2.config.H2Configuration(client_side=False, header_encoding=None)
        )
        self.conn.initiate_connection()
        self.pending: dict[int, bytes] = {}
        self.transport.write(self.conn.data_to_send())

    def data_received(self, data: bytes) -> None:
        try:
            events = self.conn.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.transport.close()
            return
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                path = dict(event.headers)[b":path"].decode()
                kind, body = FILES.get(path, NOT_FOUND)
                status = b"200" if path in FILES else b"404"
                headers = [
                    (b":status", status),
                    (b"content-type", kind),
                    (b"cache-control", b"no-store"),
                    (b"content-length", str(len(body)).encode()),
                ]
                try:
                    self.conn.send_headers(event.stream_id, headers)
                except h2.exceptions.StreamClosedError:
                    continue  # the client reset it in the same read
                self.pending[event.stream_id] = body
            elif isinstance(event, h2.events.StreamReset):
                self.pending.pop(event.stream_id, None)
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.transport.close()
                return
        self._flush()

    def _flush(self) -> None:
        for stream_id in list(self.pending):
            body = self.pending[stream_id]
            while body:
                window = min(
                    self.conn.local_flow_control_window(stream_id),
                    self.conn.max_outbound_frame_size,
                )
                if window <= 0:
                    break
                self.conn.send_data(stream_id, body[:window])
                body = body[window:]
            if body:
                self.pending[stream_id] = body
            else:
                self.conn.end_stream(stream_id)
                del self.pending[stream_id]
        self.transport.write(self.conn.data_to_send())


def _tls(cert_dir: Path, alpn: str) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_dir / "cert.pem", cert_dir / "key.pem")
    context.set_alpn_protocols([alpn])
    return context


async def serve(cert_dir: Path) -> None:
    loop = asyncio.get_running_loop()
    h1 = await loop.create_server(H1, "127.0.0.1", 0, ssl=_tls(cert_dir, "http/1.1"))
    h2s = await loop.create_server(H2, "127.0.0.1", 0, ssl=_tls(cert_dir, "h2"))
    ports = {
        "h1": h1.sockets[0].getsockname()[1],
        "h2": h2s.sockets[0].getsockname()[1],
    }
    tmp = cert_dir / "ports.json.tmp"
    tmp.write_text(json.dumps(ports))
    tmp.replace(cert_dir / "ports.json")
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1])))
