"""A scripted OpenAI-compatible judge on 127.0.0.1 (for the tests, bench/ and the demo).

POST /v1/chat/completions and POST /v1/responses. Each call is answered by the script: a list of
replies consumed in order (then the default), or a function of the call. Options: a fixed latency,
a concurrency cap answered with 429 + Retry-After beyond N calls in flight, and counters (calls,
statuses, the most calls ever in flight). A pre-flight call (scorer.preflight's one-token check)
is answered by `preflight` (a reply; default: a plain completion) and counted in `preflights`,
apart from the judge calls.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scorer.preflight import PROMPT as PREFLIGHT_PROMPT


@dataclass
class JudgeCall:
    """One request the judge received: path, lowercased headers, decoded JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def system(self) -> str:
        if "instructions" in self.body:
            return str(self.body.get("instructions") or "")
        return next((m["content"] for m in self.messages if m.get("role") == "system"), "")

    @property
    def user(self) -> str:
        if "input" in self.body:
            return str(self.body["input"])
        return next((m["content"] for m in self.messages if m.get("role") == "user"), "")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])


@dataclass
class Reply:
    """What the judge answers: assistant text (wrapped in the API's shape) or a raw body."""

    content: str | None = '{"match": true, "reason": "ok"}'
    status: int = 200
    body: dict[str, Any] | str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    usage: tuple[int, int] = (120, 15)


def verdict(match: Any, reason: str = "ok") -> Reply:
    """A reply whose content is the JSON verdict {"match": match, "reason": reason}."""
    return Reply(json.dumps({"match": match, "reason": reason}))


def error(status: int, message: str = "error", param: str | None = None, **headers: str) -> Reply:
    """An API error reply in OpenAI's error shape."""
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param}}
    return Reply(None, status, body, {k.replace("_", "-"): v for k, v in headers.items()})


Script = Callable[[JudgeCall], Reply] | Sequence[Reply] | None


@dataclass
class JudgeServer:
    """The running server: base_url for clients, what it saw, and close()."""

    host: str
    port: int
    calls: list[JudgeCall] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    max_in_flight: int = 0
    in_flight: int = 0
    default: Reply = field(default_factory=Reply)
    latency: float = 0.0
    max_concurrent: int | None = None
    retry_after: str = "1"
    keep_calls: bool = True
    preflight: Reply = field(default_factory=lambda: Reply("OK"))
    preflights: int = 0
    _queue: list[Reply] = field(default_factory=list)
    _fn: Callable[[JudgeCall], Reply] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _loop: Any = None
    _stop: Any = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def count(self) -> int:
        """Every request received, 429s included."""
        return sum(self.statuses.values())

    def script(self, script: Script) -> None:
        """Replace the script: a list of replies (in order, then the default) or a function."""
        with self._lock:
            self._fn = script if callable(script) else None
            self._queue = [] if script is None or callable(script) else list(script)

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.statuses.clear()
            self.max_in_flight = 0

    def _next(self, call: JudgeCall) -> Reply:
        if self._fn is not None:
            return self._fn(call)
        with self._lock:
            return self._queue.pop(0) if self._queue else self.default

    def close(self) -> None:
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(
                lambda: self._stop.done() or self._stop.set_result(None)
            )

    def __enter__(self) -> JudgeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _completion(
    path: str, model: str, content: str | None, usage: tuple[int, int]
) -> dict[str, Any]:
    tokens_in, tokens_out = usage
    if path.endswith("/responses"):
        return {
            "id": "resp_loopback",
            "object": "response",
            "created_at": 0,
            "model": model,
            "status": "completed",
            "output": [
                {
                    "type": "message",
                    "id": "msg_loopback",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": content or "", "annotations": []}],
                }
            ],
            "usage": {
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
        }
    return {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    }


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


def _response(status: int, payload: Any, headers: dict[str, str]) -> bytes:
    data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
    head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
            "content-type: application/json", f"content-length: {len(data)}"]  # fmt: skip
    head += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


async def _answer(srv: JudgeServer, call: JudgeCall, arrived: float) -> bytes:
    """The bytes of the reply to one call: a 429 beyond the cap, else the script's reply."""
    if call.user == PREFLIGHT_PROMPT:
        with srv._lock:
            srv.preflights += 1
        reply = srv.preflight
        payload = (
            reply.body
            if reply.body is not None
            else _completion(call.path, str(call.body.get("model", "")), reply.content, (9, 1))
        )
        return _response(reply.status, payload, reply.headers)
    with srv._lock:
        over = srv.max_concurrent is not None and srv.in_flight >= srv.max_concurrent
        if not over:
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        if srv.keep_calls:
            srv.calls.append(call)
    if over:
        with srv._lock:
            srv.statuses[429] += 1
        body = {"error": {"message": "slow down"}}
        return _response(429, body, {"retry-after": srv.retry_after})
    try:
        reply = srv._next(call)
        if srv.latency or reply.delay:
            # counted from the request's arrival: the latency is the server's, not ours
            await asyncio.sleep(max(0.0, arrived + srv.latency + reply.delay - time.monotonic()))
        if reply.body is not None:
            payload: Any = reply.body
        else:
            model = str(call.body.get("model", ""))
            payload = _completion(call.path, model, reply.content, reply.usage)
        with srv._lock:
            srv.statuses[reply.status] += 1
        return _response(reply.status, payload, reply.headers)
    finally:
        with srv._lock:
            srv.in_flight -= 1


async def _read_call(reader: asyncio.StreamReader) -> JudgeCall:
    """One HTTP/1.1 request off the connection (IncompleteReadError when it closes)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    _method, path, _ = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    raw = await reader.readexactly(int(headers.get("content-length") or 0))
    try:
        body = json.loads(raw or b"{}")
    except ValueError:
        body = {"_raw": raw.decode("utf-8", "replace")}
    return JudgeCall(path, headers, body)


async def _serve_connection(
    srv: JudgeServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        while True:
            call = await _read_call(reader)
            writer.write(await _answer(srv, call, time.monotonic()))
            await writer.drain()
            if call.headers.get("connection", "").lower() == "close":
                break
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass  # the client closed or gave up (a timeout test)
    finally:
        writer.close()


def start_judge_server(
    script: Script = None,
    *,
    latency: float = 0.0,
    max_concurrent: int | None = None,
    retry_after: str = "1",
    keep_calls: bool = True,
    host: str = "127.0.0.1",
) -> JudgeServer:
    """Serve on host:0 from an asyncio loop in a daemon thread; see JudgeServer for the counters.

    asyncio, not a thread per connection: under a thread per connection the GIL turned a 200 ms
    latency into ~245 ms at 32 calls in flight, which would bill the server's slowness to the
    clients being measured.
    """
    srv = JudgeServer(host, 0, latency=latency, max_concurrent=max_concurrent)
    srv.retry_after, srv.keep_calls = retry_after, keep_calls
    srv.script(script)
    loop = asyncio.new_event_loop()
    started = threading.Event()

    async def serve() -> None:
        def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> Any:
            return _serve_connection(srv, r, w)

        server = await asyncio.start_server(handle, host, 0, backlog=1024)
        srv.port = server.sockets[0].getsockname()[1]
        srv._stop = loop.create_future()
        started.set()
        async with server:
            await srv._stop

    threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True).start()
    started.wait(10)
    srv._loop = loop
    return srv


__all__ = ["JudgeCall", "JudgeServer", "Reply", "error", "start_judge_server", "verdict"]
