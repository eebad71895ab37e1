"""A scripted model behind a real Anthropic Messages API server (stdlib HTTP, SSE streaming).

Usage: python -m sandbox.scripted_models.anthropic_messages --script FILE --port N
           [--host 127.0.0.1] [--record FILE] [--api-key-env VAR] [--fail STATUS]

Each POST /v1/messages that carries tools is an agent turn and takes the script's next step
(anthropic_script); one without tools (a title or a quota probe) gets a short text and leaves
the script where it is. Replies stream as the real API does (message_start with usage,
content_block_start/delta/stop for text and tool_use with input_json_delta, message_delta with
the final output tokens, message_stop) or come whole when the request does not ask to stream.
Every call is recorded (never the key), and the usage totals are what a proxy's accounting of
this traffic must find. Other paths answer 404 in the API's error shape and are logged. With
`--fail STATUS` every Messages call is answered with that status and an error in the API's shape
(`retry-after-ms` small, as the API may send it): the broken endpoint a test runs against.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sandbox.scripted_models.anthropic_script import (
    ModelRequest,
    Reply,
    Script,
    ScriptError,
    Usage,
    load_script,
)
from sandbox.scripted_models.anthropic_sse import message_json, sse_events

__all__ = ["Call", "ScriptedAnthropic", "main"]

FAIL_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}
"""The error type the API sends with each status (else api_error)."""


@dataclass(frozen=True)
class Call:
    """One request the server answered."""

    index: int
    method: str
    path: str
    model: str | None
    stream: bool
    step: int | None
    """The script step it took; None for a side request or one after the script ended."""
    stop_reason: str | None
    usage: Usage | None
    status: int = 200
    error: str | None = None


def _totals(calls: Sequence[Call]) -> dict[str, int]:
    usages = [c.usage for c in calls if c.usage is not None]
    totals = {"calls": len(usages)}
    for key in Usage.__dataclass_fields__:
        totals[key] = sum(getattr(u, key) for u in usages)
    return totals


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return  # the server's own record of calls is the log

    def _json(
        self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(
        self, status: int, kind: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        body = {"type": "error", "error": {"type": kind, "message": message}}
        self._json(status, body, headers)

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = urlsplit(self.path).path
        owner = self.server.owner
        if path not in ("/v1/messages", "/v1/messages/count_tokens") or self.command != "POST":
            owner.record_other(self.command, self.path, 404)
            return self._error(404, "not_found_error", f"{self.command} {path}: not scripted")
        if owner.api_key is not None and self.headers.get("x-api-key") != owner.api_key:
            owner.record_other(self.command, self.path, 401)
            return self._error(401, "authentication_error", "invalid x-api-key")
        if owner.fail is not None and path == "/v1/messages":
            owner.record_other(self.command, self.path, owner.fail)
            kind = FAIL_TYPES.get(owner.fail, "api_error")
            return self._error(owner.fail, kind, f"scripted {owner.fail}", {"retry-after-ms": "20"})
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as e:
            owner.record_other(self.command, self.path, 400)
            return self._error(400, "invalid_request_error", f"body is not JSON: {e}")
        if path.endswith("/count_tokens"):
            owner.record_other(self.command, self.path, 200)
            return self._json(200, {"input_tokens": max(1, len(raw) // 4)})
        request = ModelRequest(body)
        index, reply = owner.answer(request, self.path)
        message_id = f"msg_scripted_{index:04d}"
        if not body.get("stream"):
            return self._json(200, message_json(message_id, request.model, reply, index))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        for event in sse_events(message_id, request.model, reply, index):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()  # each event leaves now, as the real API's do
        self.wfile.write(b"0\r\n\r\n")

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], owner: ScriptedAnthropic) -> None:
        super().__init__(address, _Handler)
        self.owner = owner


class ScriptedAnthropic:
    """The server in a background thread; a context manager that stops it."""

    def __init__(
        self,
        script: Script,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        record: Path | None = None,
        fail: int | None = None,
    ) -> None:
        self.script = script
        self.api_key = api_key
        self.fail = fail
        self.record_path = record
        self._lock = threading.Lock()
        self._next_step = 0
        self._ended = False
        self.calls: list[Call] = []
        self.errors: list[str] = []
        self._server = _Server((host, port), self)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The base URL a client is given (ANTHROPIC_BASE_URL): no /v1."""
        return f"http://{self._server.server_address[0]}:{self.port}"

    @property
    def steps_taken(self) -> int:
        with self._lock:
            return self._next_step

    def answer(self, request: ModelRequest, path: str) -> tuple[int, Reply]:
        """Take the next step for an agent turn (or answer a side request); record the call."""
        with self._lock:
            index = len(self.calls)
            step: int | None = None
            error = None
            if not request.body.get("tools"):
                reply = Reply("OK", usage=self.script.side_usage)
            elif self._ended or self._next_step >= len(self.script.steps):
                reply = Reply(self.script.final_text, usage=self.script.side_usage)
            else:
                step = self._next_step
                self._next_step += 1
                try:
                    reply = self.script.steps[step](request)
                except (ScriptError, KeyError, TypeError, ValueError) as e:
                    error = f"step {step}: {e}"
                    self.errors.append(error)
                    self._ended = True
                    reply = Reply(f"scripted model error: {error}", usage=self.script.side_usage)
            stream = bool(request.body.get("stream"))
            self.calls.append(
                Call(
                    index,
                    "POST",
                    path,
                    request.model,
                    stream,
                    step,
                    reply.stop_reason,
                    reply.usage,
                    error=error,
                )
            )
            self._save()
        return index, reply

    def record_other(self, method: str, path: str, status: int) -> None:
        """Record a request that is not a Messages call (logged to stderr too)."""
        with self._lock:
            self.calls.append(
                Call(len(self.calls), method, path, None, False, None, None, None, status=status)
            )
            self._save()
        if status == 404:
            print(f"scripted-anthropic: unknown {method} {path}", file=sys.stderr, flush=True)

    def usage_totals(self) -> dict[str, int]:
        """Calls answered with usage, and the sum of each token count over them."""
        with self._lock:
            return _totals(self.calls)

    def snapshot(self) -> dict[str, Any]:
        """The record: every call, the errors, the totals, how far the script got."""
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> dict[str, Any]:
        return {
            "calls": [asdict(c) for c in self.calls],
            "errors": list(self.errors),
            "steps_taken": self._next_step,
            "steps_total": len(self.script.steps),
            "usage_totals": _totals(self.calls),
        }

    def _save(self) -> None:
        if self.record_path is not None:  # under the lock: one writer, records in call order
            tmp = self.record_path.with_name(f".{self.record_path.name}.tmp")
            tmp.write_text(json.dumps(self._snapshot(), indent=1))
            os.replace(tmp, self.record_path)

    def start(self) -> ScriptedAnthropic:
        self._thread.start()
        return self

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> ScriptedAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a script until SIGTERM or Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m sandbox.scripted_models.anthropic_messages")
    parser.add_argument("--script", required=True, type=Path, help="JSON script file")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--record", type=Path, help="keep the calls and totals in this JSON file")
    parser.add_argument("--api-key-env", help="answer 401 unless x-api-key equals this variable")
    parser.add_argument(
        "--fail", type=int, metavar="STATUS", help="answer every Messages call with STATUS"
    )
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script)
    except ScriptError as e:
        print(f"scripted-anthropic: {e}", file=sys.stderr)
        return 2
    key = os.environ.get(args.api_key_env) if args.api_key_env else None
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with ScriptedAnthropic(
        script, host=args.host, port=args.port, api_key=key, record=args.record, fail=args.fail
    ) as server:
        print(f"scripted-anthropic: listening on {server.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            done.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
