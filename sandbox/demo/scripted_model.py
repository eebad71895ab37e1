"""The demo's scripted OpenAI-compatible model: drives the real browser-use agent without an LLM.

POST /v1/chat/completions (or /chat/completions) answers one step of the script per call, in
the agent's own action format, streamed (SSE, with a usage chunk when asked) or not, with the
usage the proxy counts. The demo serves it on the host (`sandbox.demo.browser_use`) or in the
site's container (`python -m sandbox.demo.site --model PORT=SCRIPT`).

A script is a JSON list of steps. A step names elements by what a user sees; the server finds
their index in the page state the agent sent (browser-use's `[index]<tag ...>text` lines):

    [{"navigate": "https://shop.example/checkout"},
     {"input": {"field": "Quantity", "text": "2"}},
     {"select": {"field": "size", "option": "Large"}},
     {"click": "Place order"},
     {"done": "Ordered.", "success": true}]

Several actions in one step: {"actions": [step, step, ...]}; a whole form by field name:
{"fill": {"email": "a@b.example", "list": "weekly-digest"}}.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from proxy_addon.records import TokenCounts
from sandbox.demo.browser_use_actions import ScriptError, browser_use_actions


def _text(content: Any) -> str:
    """A message's content as text (a string, or OpenAI's list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@dataclass
class Script:
    """The steps, consumed one per model call."""

    steps: list[dict[str, Any]]
    position: int = 0
    errors: list[str] = field(default_factory=list)
    last_state: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, body: dict[str, Any]) -> tuple[str, TokenCounts]:
        """(content, usage) for one chat completion request: a rough count of its characters,
        half the prompt cached after the first call, as a provider's prompt cache would."""
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
        cached = prompt // 2 if self.position > 1 else 0
        usage = TokenCounts(
            input_tokens=prompt, output_tokens=len(content) // 4 + 1, cached_tokens=cached
        )
        return content, usage


def _usage_json(u: TokenCounts) -> dict[str, Any]:
    return {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cached_tokens},
    }


def completion(model: str, content: str, usage: TokenCounts) -> dict[str, Any]:
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


def chunks(model: str, content: str, usage: TokenCounts, with_usage: bool) -> Iterator[str]:
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

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        if not self.path.split("?")[0].endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        model = str(body.get("model", "scripted"))
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
    ):
        super().__init__((host, port), _Handler)
        self.script = Script(list(steps))

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedServer:
        threading.Thread(target=self.serve_forever, name="scripted-model", daemon=True).start()
        return self


__all__ = ["Script", "ScriptError", "ScriptedServer", "chunks", "completion"]
