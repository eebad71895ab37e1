"""A scripted OpenAI-compatible model: drives a real agent (browser-use) without an LLM.

    python -m sandbox.scripted_models.openai_chat --script FILE [--host H] [--port N]

POST /v1/chat/completions (or /chat/completions) answers one step of the script per call, in
the agent's own action format, streamed (SSE, with a usage chunk when asked) or not; GET /usage
returns the token totals it reported, which a test compares with what the proxy counted. With
`--fail STATUS` every call is answered with that HTTP status and an error in OpenAI's shape
(`retry-after-ms` small, as a provider may send it), the broken endpoint a test runs against.

A script is a JSON list of steps. A step names elements by what a user sees; the server finds
their index in the page state the agent sent (browser-use's `[index]<tag ...>text` lines):

    [{"navigate": "https://shop.example/checkout"},
     {"input": {"field": "Quantity", "text": "2"}},
     {"select": {"field": "size", "option": "Large"}},
     {"click": "Place order"},
     {"done": "Ordered.", "success": true}]

Several actions in one step: {"actions": [step, step, ...]}; a whole form by field name:
{"fill": {"email": "a@b.example", "list": "weekly-digest"}}. Stdlib only: the demo and the
tests' containers run it as is.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from sandbox.scripted_models.browser_use_actions import ScriptError, browser_use_actions

FAIL_TYPES = {
    401: "invalid_api_key",
    403: "permission_denied",
    404: "model_not_found",
    429: "rate_limit_exceeded",
}
"""The error code a provider sends with each status (else server_error)."""


def _text(content: Any) -> str:
    """A message's content as text (a string, or OpenAI's list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@dataclass
class Usage:
    """What the server reported, summed over calls."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0

    def add(self, prompt: int, completion: int, cached: int) -> None:
        self.calls += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.cached_tokens += cached


@dataclass
class Script:
    """The steps, consumed one per model call."""

    steps: list[dict[str, Any]]
    position: int = 0
    usage: Usage = field(default_factory=Usage)
    errors: list[str] = field(default_factory=list)
    failed: int = 0
    """Calls answered with --fail's status."""
    last_state: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        """(content, usage) for one chat completion request."""
        messages = body.get("messages") or []
        texts = [_text(m.get("content")) for m in messages]
        # the page is in the newest message that carries one (a nudge may follow it)
        state = next((t for t in reversed(texts) if "<browser_state>" in t), "")
        self.last_state = state
        with self.lock:
            if self.position >= len(self.steps):
                step: dict[str, Any] = {"done": "The script is over.", "success": False}
            else:
                step = self.steps[self.position]
                self.position += 1
        try:
            actions = browser_use_actions(step, state)
        except ScriptError as e:
            self.errors.append(str(e))
            actions = [{"done": {"text": f"script error: {e}", "success": False}}]
        content = json.dumps(
            {
                "thinking": "Following the script.",
                "evaluation_previous_goal": "Done as planned.",
                "memory": f"step {self.position} of {len(self.steps)}",
                "next_goal": json.dumps(step)[:200],
                "action": actions,
            }
        )
        prompt = sum(len(_text(m.get("content"))) for m in messages) // 4 + 1
        cached = prompt // 2 if self.usage.calls else 0
        completion = len(content) // 4 + 1
        with self.lock:
            self.usage.add(prompt, completion, cached)
        return content, {"prompt": prompt, "completion": completion, "cached": cached}


def _usage_json(u: dict[str, int]) -> dict[str, Any]:
    return {
        "prompt_tokens": u["prompt"],
        "completion_tokens": u["completion"],
        "total_tokens": u["prompt"] + u["completion"],
        "prompt_tokens_details": {"cached_tokens": u["cached"]},
    }


def completion(model: str, content: str, usage: dict[str, int]) -> dict[str, Any]:
    """A non-streamed chat completion."""
    return {
        "id": f"chatcmpl-{time.time_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage_json(usage),
    }


def chunks(model: str, content: str, usage: dict[str, int], with_usage: bool) -> Iterator[str]:
    """The SSE events of a streamed chat completion (content in a few deltas)."""
    base = {"id": f"chatcmpl-{time.time_ns()}", "object": "chat.completion.chunk", "model": model}
    pieces = [content[i : i + 64] for i in range(0, len(content), 64)] or [""]
    first = {"role": "assistant", "content": ""}
    for delta in [first, *({"content": p} for p in pieces)]:
        yield json.dumps({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    yield json.dumps({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    if with_usage:
        yield json.dumps({**base, "choices": [], "usage": _usage_json(usage)})


class _Handler(BaseHTTPRequestHandler):
    server: ScriptedServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _fail(self, status: int) -> None:
        kind = FAIL_TYPES.get(status, "server_error")
        data = json.dumps({"error": {"message": f"scripted {status}", "type": kind, "code": kind}})
        with self.server.script.lock:
            self.server.script.failed += 1
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("retry-after-ms", "20")
        self.end_headers()
        self.wfile.write(data.encode())

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        elif self.path == "/usage":
            self._json(
                200,
                {
                    **self.server.script.usage.__dict__,
                    "errors": self.server.script.errors,
                    "failed": self.server.script.failed,
                },
            )
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        if not self.path.split("?")[0].endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if self.server.fail is not None:
            self._fail(self.server.fail)
            return
        model = str(body.get("model", "scripted"))
        time.sleep(self.server.latency)
        content, usage = self.server.script.reply(body)
        if not body.get("stream"):
            self._json(200, completion(model, content, usage))
            return
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for event in chunks(model, content, usage, with_usage):
            self.wfile.write(f"data: {event}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True


class ScriptedServer(ThreadingHTTPServer):
    """The model server; .url is its base URL (…/v1)."""

    daemon_threads = True

    def __init__(
        self,
        steps: Sequence[dict[str, Any]],
        host: str = "127.0.0.1",
        port: int = 0,
        latency: float = 0.0,
        fail: int | None = None,
    ):
        super().__init__((host, port), _Handler)
        self.script = Script(list(steps))
        self.latency = latency
        self.fail = fail
        """Answer every call with this HTTP status (an error in the API's shape)."""
        """Seconds each reply waits, like a real model's (the harness benchmark's)."""

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedServer:
        threading.Thread(target=self.serve_forever, name="scripted-model", daemon=True).start()
        return self


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--script", type=Path, required=True, help="the steps (a JSON list)")
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--latency", type=float, default=0.0, help="seconds before each reply")
    p.add_argument("--fail", type=int, metavar="STATUS", help="answer every call with STATUS")
    args = p.parse_args(argv)
    steps = json.loads(args.script.read_text())
    server = ScriptedServer(steps, args.host, args.port, args.latency, args.fail)
    print(f"scripted model on {server.url}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
