"""The fake model API: one loopback server speaking OpenAI chat completions and responses and
Anthropic messages, streamed (SSE, chunked) and not, for every test that needs a model or a
judge (pytest-httpserver style: each call is answered by the script, and recorded).

    python -m tests.support.fake_api --script FILE [--port N] [--host H] [--fail STATUS]
        [--latency S] [--api-key-env VAR] [--record FILE]

The script is a list of Replies (in order, then `default`) or a function of the Call. Options: a
latency, a concurrency cap answered with 429 + Retry-After beyond N calls in flight, an API key
(another key is answered 401, as a provider does), `fail` (every model call answered with that
status), the pre-flight's call answered apart (`preflight`; scorer.preflight) and counters.
A reply may be compressed event by event and hold back everything after its first event until
a test opens its gate: how the tests prove the proxy hands each event on as it arrives.

From the command line (in a container of the tests' network), FILE holds {"claude": SCRIPT}
(tests.support.claude_script) or {"browser_use": STEPS} (the demo's browser-use steps), and
--record keeps every call and the usage totals in a JSON file.

asyncio, not a thread per connection: under a thread per connection the GIL turned a 200 ms
latency into ~245 ms at 32 calls in flight, which would bill the server's slowness to the
clients being measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proxy_addon.records import TokenCounts
from tests.support.fake_api_wire import GATE_TIMEOUT, Call, Connection
from tests.support.model_replies import Reply

Script = Callable[[Call], Reply] | Sequence[Reply] | None


def verdict(match: Any, reason: str = "ok") -> Reply:
    """A judge's reply whose content is the JSON verdict {"match": match, "reason": reason}."""
    return Reply(json.dumps({"match": match, "reason": reason}))


def error(status: int, message: str = "error", param: str | None = None, **headers: str) -> Reply:
    """An API error reply in OpenAI's error shape."""
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param}}
    return Reply(
        None, status=status, body=body, headers={k.replace("_", "-"): v for k, v in headers.items()}
    )


@dataclass
class FakeModelAPI:
    """The running server: its URLs, what it saw, the script, and close()."""

    host: str
    port: int = 0
    calls: list[Call] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)
    """Answers in order; then `default`."""
    responder: Callable[[Call], Reply] | None = None
    """Answers every call when set (before `replies`)."""
    default: Reply = field(default_factory=Reply)
    preflight: Reply | None = None
    """When set, the pre-flight's call is answered with it and counted in `preflights` only."""
    preflights: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    max_in_flight: int = 0
    in_flight: int = 0
    latency: float = 0.0
    max_concurrent: int | None = None
    retry_after: str = "1"
    keep_calls: bool = True
    api_key: str | None = None
    fail: int | None = None
    gate_timeouts: int = 0
    record: Path | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _loop: Any = None
    _stop: Any = None

    @property
    def url(self) -> str:
        """The server's root (an Anthropic client's base URL)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI client's base URL."""
        return f"{self.url}/v1"

    @property
    def count(self) -> int:
        """Every model call answered (429s and errors included; the pre-flight's not)."""
        return sum(self.statuses.values())

    def script(self, script: Script) -> None:
        """Replace the script: a list of replies (in order, then the default) or a function."""
        with self._lock:
            self.responder = script if callable(script) else None
            self.replies = [] if script is None or callable(script) else list(script)

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self.statuses.clear()
            self.max_in_flight = 0

    def usage_totals(self) -> dict[str, int]:
        """Calls answered with usage, and the sum of their tokens."""
        with self._lock:
            return _totals(self.calls)

    def snapshot(self) -> dict[str, Any]:
        """Every call (never a key), the usage totals and what the script reports."""
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "calls": [
                {
                    "path": c.path,
                    "model": c.model,
                    "status": c.status,
                    "step": c.step,
                    "stream": bool(c.body.get("stream")),
                    "usage": c.usage.model_dump() if c.usage else None,
                }
                for c in self.calls
            ],
            "usage_totals": _totals(self.calls),
        }
        report = getattr(self.responder, "report", None)
        return {**out, **(report() if report else {})}

    def _next(self, call: Call) -> Reply:
        if self.responder is not None:
            return self.responder(call)
        with self._lock:
            return self.replies.pop(0) if self.replies else self.default

    def _finish(self, call: Call, status: int, reply: Reply | None) -> None:
        with self._lock:
            call.status = status
            if reply is not None:
                call.step = reply.step
                call.usage = reply.usage if status == 200 and reply.body is None else None
            self.statuses[status] += 1
            if self.record is not None:
                tmp = self.record.with_name(f".{self.record.name}.tmp")
                tmp.write_text(json.dumps(self._snapshot(), indent=1))
                os.replace(tmp, self.record)

    def close(self) -> None:
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(
                lambda: self._stop.done() or self._stop.set_result(None)
            )

    def __enter__(self) -> FakeModelAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _totals(calls: Sequence[Call]) -> dict[str, int]:
    counted = [c.usage for c in calls if c.usage is not None]
    return {"calls": len(counted), **sum(counted, TokenCounts()).model_dump()}


def start_model_api(
    script: Script = None, *, host: str = "127.0.0.1", port: int = 0, **options: Any
) -> FakeModelAPI:
    """Serve on host:port (0: a free one) from an asyncio loop in a daemon thread; options are
    FakeModelAPI's fields (latency, max_concurrent, api_key, fail, default, preflight, ...)."""
    srv = FakeModelAPI(host, **options)
    srv.script(script)
    loop = asyncio.new_event_loop()
    started = threading.Event()

    async def serve() -> None:
        def handle(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> Any:
            return Connection(srv, r, w).serve()

        server = await asyncio.start_server(handle, host, port, backlog=1024)
        srv.port = server.sockets[0].getsockname()[1]
        srv._stop = loop.create_future()
        started.set()
        async with server:
            await srv._stop

    threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True).start()
    started.wait(10)
    srv._loop = loop
    return srv


def start_judge_server(script: Script = None, **options: Any) -> FakeModelAPI:
    """The fake as a judge: a match verdict by default, the pre-flight answered apart."""
    options.setdefault("default", verdict(True))
    options.setdefault("preflight", Reply("OK"))
    return start_model_api(script, **options)


class BrowserUseSteps:
    """The demo's browser-use steps as a script: each call answered in browser-use's action
    format, from the page it sent (sandbox.demo.scripted_model)."""

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        from sandbox.demo.scripted_model import Script as Steps

        self.steps = Steps(steps)

    def __call__(self, call: Call) -> Reply:
        content, usage = self.steps.reply(call.body)
        return Reply(content, usage=usage)

    def report(self) -> dict[str, Any]:
        return {"errors": list(self.steps.errors), "steps_taken": self.steps.position}


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a script file until killed."""
    from tests.support.claude_script import script_from_json

    p = argparse.ArgumentParser(prog="python -m tests.support.fake_api")
    p.add_argument(
        "--script", type=Path, required=True, help='{"claude": ...} or {"browser_use": [...]}'
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="0 picks a free port")
    p.add_argument("--fail", type=int, metavar="STATUS", help="answer every model call with STATUS")
    p.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    p.add_argument("--api-key-env", help="answer 401 unless the key equals this variable")
    p.add_argument("--record", type=Path, help="keep the calls and usage totals in this file")
    args = p.parse_args(argv)
    spec = json.loads(args.script.read_text(encoding="utf-8"))
    script: Script = (
        script_from_json(spec["claude"])
        if "claude" in spec
        else BrowserUseSteps(spec["browser_use"])
    )
    key = os.environ[args.api_key_env] if args.api_key_env else None
    srv = start_model_api(
        script, host=args.host, port=args.port, fail=args.fail, latency=args.latency,
        api_key=key, record=args.record,
    )  # fmt: skip
    print(f"fake model API on {srv.url}", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with contextlib.suppress(KeyboardInterrupt):
        done.wait()
    srv.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "GATE_TIMEOUT",
    "BrowserUseSteps",
    "Call",
    "FakeModelAPI",
    "Reply",
    "Script",
    "error",
    "start_judge_server",
    "start_model_api",
    "verdict",
]
