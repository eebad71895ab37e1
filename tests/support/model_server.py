"""A fake model API on 127.0.0.1 speaking OpenAI chat completions and responses and Anthropic
messages, streamed (SSE, chunked) and not, with the usage each reply reports under control.

Each call takes the next ModelReply of the script (then the default). A reply can compress its
body (gzip, deflate, br, zstd: an event stream flushed event by event, as servers do) and can
hold back everything after its first event until the test opens its gate, which is how the
tests prove the proxy hands each event on as it arrives.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import brotli

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd

GATE_TIMEOUT = 10.0


@dataclass
class ModelReply:
    """What one call is answered with; usage is (input incl. cached, output, cached)."""

    usage: tuple[int, int, int] = (100, 20, 0)
    model: str = "fake-model-1"
    text: str = "Hello from the fake model."
    encoding: str | None = None
    gate: threading.Event | None = None
    status: int = 200


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


# -- reply shapes, as the public API references show them ------------------------------------


def chat_body(r: ModelReply) -> dict[str, Any]:
    inp, out, cached = r.usage
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1767225600,
        "model": r.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": r.text, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": inp,
            "completion_tokens": out,
            "total_tokens": inp + out,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
        "system_fingerprint": "fp_fake",
    }


def chat_stream(r: ModelReply, include_usage: bool) -> list[dict[str, Any] | str]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1767225600}
    base["model"] = r.model
    tail: dict[str, Any] = {"usage": None} if include_usage else {}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": word} for word in r.text.split(" ")]
    chunks: list[dict[str, Any] | str] = [
        {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}], **tail}
        for d in deltas
    ]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], **tail})
    if include_usage:
        usage = chat_body(r)["usage"]
        chunks.append({**base, "choices": [], "usage": usage})
    chunks.append("[DONE]")
    return chunks


def responses_body(r: ModelReply, status: str = "completed") -> dict[str, Any]:
    inp, out, cached = r.usage
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1767225600,
        "status": status,
        "model": r.model,
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": r.text, "annotations": []}],
            }
        ],
        "usage": {
            "input_tokens": inp,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": inp + out,
        },
    }


def responses_stream(r: ModelReply) -> list[tuple[str, dict[str, Any]]]:
    created = {**responses_body(r, "in_progress"), "output": [], "usage": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": created})
    ]
    for word in r.text.split(" "):
        delta = {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0}
        events.append(("response.output_text.delta", {**delta, "content_index": 0, "delta": word}))
    events.append(
        ("response.completed", {"type": "response.completed", "response": responses_body(r)})
    )
    return [(name, {**data, "sequence_number": i}) for i, (name, data) in enumerate(events)]


def anthropic_body(r: ModelReply) -> dict[str, Any]:
    inp, out, cached = r.usage
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": r.model,
        "content": [{"type": "text", "text": r.text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": inp - cached,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": cached,
            "output_tokens": out,
        },
    }


def anthropic_stream(r: ModelReply) -> list[tuple[str, dict[str, Any]]]:
    start = {**anthropic_body(r), "content": [], "stop_reason": None}
    start["usage"] = {**start["usage"], "output_tokens": 1}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
    ]  # fmt: skip
    for word in r.text.split(" "):
        delta = {"type": "text_delta", "text": word}
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": r.usage[1]}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return events


def sse_frames(path: str, r: ModelReply, body: dict[str, Any]) -> list[bytes]:
    """The event stream a streamed call to path is answered with, one frame per event."""
    if path.endswith("/messages"):
        named = anthropic_stream(r)
    elif path.endswith("/responses"):
        named = responses_stream(r)
    else:
        include = bool((body.get("stream_options") or {}).get("include_usage"))
        return [
            f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n".encode()
            for c in chat_stream(r, include)
        ]
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in named]


def json_reply(path: str, r: ModelReply) -> dict[str, Any]:
    if r.status != 200:
        return {"error": {"message": "slow down", "type": "rate_limit_error", "code": None}}
    if path.endswith("/messages"):
        return anthropic_body(r)
    if path.endswith("/responses"):
        return responses_body(r)
    return chat_body(r)


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
            with lock:
                srv.calls.append(
                    ModelCall(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                reply = srv.next_reply()
            enc = _Encoder(reply.encoding)
            if body.get("stream") and reply.status == 200:
                self._stream(sse_frames(self.path, reply, body), enc, reply.gate)
                return
            data = b"".join(enc.frames([json.dumps(json_reply(self.path, reply)).encode()]))
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            if reply.encoding:
                self.send_header("content-encoding", reply.encoding)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, frames: list[bytes], enc: _Encoder, gate: threading.Event | None) -> None:
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
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    server = ThreadingHTTPServer((host, 0), Handler)
    server.daemon_threads = True
    srv.port = server.server_address[1]
    srv._server = server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return srv


__all__ = ["GATE_TIMEOUT", "ModelReply", "ModelServer", "start_model_server"]
