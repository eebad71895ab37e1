"""A fake model API on 127.0.0.1 speaking OpenAI chat completions and responses and Anthropic
messages, streamed (SSE, chunked) and not, with the usage each reply reports under control.

Each call takes the next ModelReply of the script (then the default). A reply can compress its
body (gzip, deflate, br, zstd: an event stream flushed event by event, as servers do) and can
hold back everything after its first event until the test opens its gate, which is how the
tests prove the proxy hands each event on as it arrives. A reply can be an API error, a stream
ending in an error event, or a stream cut after its first event; with api_key set, a call that
carries another key (x-api-key or Bearer) is answered 401, as a provider does.
"""

from __future__ import annotations

import json
import socket
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import brotli

from tests.support.model_replies import ModelReply, json_reply, sse_frames

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd

GATE_TIMEOUT = 10.0


@dataclass
class ModelCall:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class ModelServer:
    host: str
    port: int
    calls: list[ModelCall] = field(default_factory=list)
    script: list[ModelReply] = field(default_factory=list)
    default: ModelReply = field(default_factory=ModelReply)
    gate_timeouts: int = 0
    api_key: str | None = None
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def next_reply(self) -> ModelReply:
        return self.script.pop(0) if self.script else self.default

    def close(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()


class _Encoder:
    """Compress frame by frame, flushing each so the client can decode it at once."""

    def __init__(self, encoding: str | None) -> None:
        self.encoding = encoding
        if encoding == "gzip":
            self._z: Any = zlib.compressobj(wbits=31)
        elif encoding == "deflate":
            self._z = zlib.compressobj(wbits=15)
        elif encoding == "br":
            self._z = brotli.Compressor()
        elif encoding == "zstd":
            self._z = zstd.ZstdCompressor()

    def frames(self, frames: list[bytes]) -> Iterator[bytes]:
        for i, frame in enumerate(frames):
            last = i == len(frames) - 1
            if self.encoding in ("gzip", "deflate"):
                out = self._z.compress(frame) + self._z.flush(
                    zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH
                )
            elif self.encoding == "br":
                out = self._z.process(frame) + (self._z.finish() if last else self._z.flush())
            elif self.encoding == "zstd":
                mode = zstd.ZstdCompressor.FLUSH_FRAME if last else zstd.ZstdCompressor.FLUSH_BLOCK
                out = self._z.compress(frame, mode=mode)
            else:
                out = frame
            yield out


def start_model_server(host: str = "127.0.0.1") -> ModelServer:
    srv = ModelServer(host, 0)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"raw": raw.decode("utf-8", "replace")}
            headers = {k.lower(): v for k, v in self.headers.items()}
            with lock:
                srv.calls.append(ModelCall(self.path, headers, body))
                reply = srv.next_reply()
            if srv.api_key is not None and srv.api_key not in (
                headers.get("x-api-key"),
                headers.get("authorization", "").removeprefix("Bearer "),
            ):
                reply = ModelReply(status=401)
            enc = _Encoder(reply.encoding)
            if body.get("stream") and reply.status == 200:
                frames = sse_frames(self.path, reply, body)
                self._stream(frames[:1] if reply.cut else frames, enc, reply.gate, reply.cut)
                return
            data = b"".join(enc.frames([json.dumps(json_reply(self.path, reply)).encode()]))
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            if reply.encoding:
                self.send_header("content-encoding", reply.encoding)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(
            self, frames: list[bytes], enc: _Encoder, gate: threading.Event | None, cut: bool
        ) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("cache-control", "no-cache")
            if enc.encoding:
                self.send_header("content-encoding", enc.encoding)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for i, chunk in enumerate(enc.frames(frames)):
                if i == 1 and gate is not None and not gate.wait(GATE_TIMEOUT):
                    with lock:
                        srv.gate_timeouts += 1
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
            if cut:  # no last chunk: the connection just ends mid-stream
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    srv.port = server.server_address[1]
    srv._server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return srv


__all__ = ["GATE_TIMEOUT", "ModelCall", "ModelServer", "start_model_server"]
