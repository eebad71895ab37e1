"""The fake model API's wire (tests.support.fake_api): HTTP/1.1 requests read off a connection
as Calls, and each answered as its reply says, whole or as a chunked event stream, compressed
event by event, held at a gate or cut short."""

from __future__ import annotations

import asyncio
import json
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import brotli

from proxy_addon.records import TokenCounts
from scorer.preflight import PROMPT as PREFLIGHT_PROMPT
from tests.support.model_replies import (
    FAKE_MODEL,
    Reply,
    error_body,
    fail_body,
    json_reply,
    sse_frames,
)

if TYPE_CHECKING:
    from tests.support.fake_api import FakeModelAPI

try:
    from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+
except ImportError:
    from backports import zstd

GATE_TIMEOUT = 10.0


@dataclass
class Call:
    """One request the server received: method, path, lowercased headers, decoded JSON body;
    once answered, its status and (a script's) step."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    method: str = "POST"
    status: int | None = None
    step: int | None = None
    usage: TokenCounts | None = None

    @property
    def system(self) -> str:
        if "instructions" in self.body:
            return str(self.body.get("instructions") or "")
        if isinstance(self.body.get("system"), str):
            return self.body["system"]
        return next((m["content"] for m in self.messages if m.get("role") == "system"), "")

    @property
    def user(self) -> str:
        if "input" in self.body:
            return str(self.body["input"])
        return next((m["content"] for m in self.messages if m.get("role") == "user"), "")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body.get("model"), str) else None


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
                flush = zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH
                yield self._z.compress(frame) + self._z.flush(flush)
            elif self.encoding == "br":
                yield self._z.process(frame) + (self._z.finish() if last else self._z.flush())
            elif self.encoding == "zstd":
                mode = zstd.ZstdCompressor.FLUSH_FRAME if last else zstd.ZstdCompressor.FLUSH_BLOCK
                yield self._z.compress(frame, mode=mode)
            else:
                yield frame


_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            429: "Too Many Requests", 500: "Internal Server Error"}  # fmt: skip


def _head(status: int, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _whole(status: int, payload: Any, reply: Reply | None = None) -> bytes:
    data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
    headers = {"content-type": "application/json"}
    if reply is not None and reply.encoding:
        data = b"".join(_Encoder(reply.encoding).frames([data]))
        headers["content-encoding"] = reply.encoding
    headers["content-length"] = str(len(data))
    return _head(status, {**headers, **(reply.headers if reply else {})}) + data


def _key_refused(srv: FakeModelAPI, call: Call) -> bool:
    if srv.api_key is None:
        return False
    bearer = call.headers.get("authorization", "").removeprefix("Bearer ")
    return srv.api_key not in (call.headers.get("x-api-key"), bearer)


class Connection:
    """One client connection: requests read and answered in turn."""

    def __init__(self, srv: FakeModelAPI, reader: Any, writer: Any) -> None:
        self.srv, self.reader, self.writer = srv, reader, writer

    async def read(self) -> Call:
        """One HTTP/1.1 request (IncompleteReadError when the connection closes)."""
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                k, v = line.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        raw = await self.reader.readexactly(int(headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        return Call(path.split("?")[0], headers, body if isinstance(body, dict) else {}, method)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def answer(self, call: Call, arrived: float) -> bool:
        """Answer one call; False when the connection is to be closed."""
        srv = self.srv
        if call.method == "GET" and call.path.endswith("/models"):
            await self.send(_whole(200, {"object": "list", "data": [{"id": FAKE_MODEL}]}))
            return True
        if srv.preflight is not None and call.user == PREFLIGHT_PROMPT:
            with srv._lock:
                srv.preflights += 1
            await self._reply(
                call, replace(srv.preflight, usage=TokenCounts(input_tokens=9, output_tokens=1))
            )
            return True
        with srv._lock:
            if srv.keep_calls:
                srv.calls.append(call)
        early = self._before_script(call)
        if early is not None:
            status, payload, headers = early
            srv._finish(call, status, None)
            await self.send(_whole(status, payload, Reply(None, headers=headers)))
            return True
        with srv._lock:
            over = srv.max_concurrent is not None and srv.in_flight >= srv.max_concurrent
            if not over:
                srv.in_flight += 1
                srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        if over:
            srv._finish(call, 429, None)
            reply = Reply(None, status=429, headers={"retry-after": srv.retry_after})
            await self.send(_whole(429, {"error": {"message": "slow down"}}, reply))
            return True
        try:
            reply = srv._next(call)
            wait = arrived + srv.latency + reply.delay - time.monotonic()
            if wait > 0:  # counted from the request's arrival: the latency is the server's
                await asyncio.sleep(wait)
            srv._finish(call, reply.status, reply)
            return await self._reply(call, reply)
        finally:
            with srv._lock:
                srv.in_flight -= 1

    def _before_script(self, call: Call) -> tuple[int, Any, dict[str, str]] | None:
        """(status, body, headers) of a call answered without the script: another key, a token
        count, every call with --fail's status; None for the script's (any other path too)."""
        srv = self.srv
        if _key_refused(srv, call):
            return 401, error_body(call.path, 401), {}
        if call.path.endswith("/count_tokens"):
            return 200, {"input_tokens": max(1, len(json.dumps(call.body)) // 4)}, {}
        if srv.fail is not None:  # as a provider may send it: retry-after-ms small
            return srv.fail, fail_body(call.path, srv.fail), {"retry-after-ms": "20"}
        return None

    async def _reply(self, call: Call, reply: Reply) -> bool:
        model = reply.model or call.model or FAKE_MODEL
        index = len(self.srv.calls)
        if not (call.body.get("stream") and reply.status == 200 and reply.body is None):
            await self.send(_whole(reply.status, json_reply(call.path, reply, model, index), reply))
            return True
        headers = {"content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache"}
        if reply.encoding:
            headers["content-encoding"] = reply.encoding
        await self.send(_head(200, {**headers, "transfer-encoding": "chunked"}))
        frames = sse_frames(call.path, reply, call.body, model, index)
        for i, chunk in enumerate(_Encoder(reply.encoding).frames(frames)):
            if i == 1 and reply.cut:
                return False  # closed mid-stream, no last chunk
            held = i == 1 and reply.gate is not None
            if held and not await asyncio.to_thread(reply.gate.wait, GATE_TIMEOUT):  # type: ignore[union-attr]
                with self.srv._lock:
                    self.srv.gate_timeouts += 1
            if chunk:
                await self.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        await self.send(b"0\r\n\r\n")
        return True

    async def serve(self) -> None:
        try:
            while True:
                call = await self.read()
                if not await self.answer(call, time.monotonic()):
                    break
                if call.headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass  # the client closed or gave up (a timeout test)
        finally:
            self.writer.close()


__all__ = ["GATE_TIMEOUT", "Call", "Connection"]
