"""Model API replies shaped as the public API references show them: OpenAI chat completions
(whole and streamed, with and without the final usage chunk), OpenAI responses (whole and
streamed), Anthropic messages (whole and streamed, text and tool_use blocks, the tool input's
JSON in pieces), and each API's error. The usage a reply reports is its Reply's TokenCounts
(input with cached, output, cached; records.tokens), in each API's own fields.
"""

from __future__ import annotations

import json
import threading
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from proxy_addon.records import TokenCounts

FAKE_MODEL = "fake-model-1"
"""The model a reply names when neither it nor the request names one."""
PIECE = 24
"""Characters per streamed delta: small enough that every reply spans several events."""


def tokens(input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> TokenCounts:
    """The usage a reply reports: input (cached included), output, cached."""
    return TokenCounts(
        input_tokens=input_tokens, output_tokens=output_tokens, cached_tokens=cached_tokens
    )


@dataclass(frozen=True)
class ToolUse:
    """One tool call the model makes (an Anthropic tool_use block)."""

    name: str
    input: dict[str, Any]


@dataclass
class Reply:
    """What one call is answered with.

    status other than 200: an error in the API's shape (error_type: its type or code, else the
    usual one for the status); body: sent as it is instead (JSON, or text); stream_error: a 200
    stream that ends with an error event of that type after its first event; cut: a 200 stream
    the server closes after its first event; encoding: the body compressed, event by event;
    gate: everything after the first event held back until it is set; delay: seconds before
    the answer. cache_written: Anthropic's cache writes, within usage's input."""

    text: str | None = "Hello from the fake model."
    _: KW_ONLY
    usage: TokenCounts = field(default_factory=lambda: tokens(120, 15))
    tool_uses: tuple[ToolUse, ...] = ()
    model: str | None = None
    status: int = 200
    error_type: str | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    encoding: str | None = None
    gate: threading.Event | None = None
    stream_error: str | None = None
    cut: bool = False
    cache_written: int = 0
    step: int | None = None
    """The script step this reply is (a script sets it; the call records it)."""

    @property
    def stop_reason(self) -> str:
        return "tool_use" if self.tool_uses else "end_turn"


ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    529: "overloaded_error",
}


OPENAI_FAIL_CODES = {
    401: "invalid_api_key",
    403: "permission_denied",
    404: "model_not_found",
    429: "rate_limit_exceeded",
}
"""The code OpenAI sends with each status (else server_error): --fail answers with these."""


def fail_body(path: str, status: int) -> dict[str, Any]:
    """--fail's reply, as the provider of the path sends it: Anthropic's error types for
    /messages, OpenAI's codes for the rest."""
    if "/messages" in path:
        return error_body(path, status)
    return error_body(path, status, OPENAI_FAIL_CODES.get(status, "server_error"))


def error_body(path: str, status: int, kind: str | None = None) -> dict[str, Any]:
    """An error reply as the API sends it: Anthropic's for /messages, else OpenAI's."""
    kind = kind or ERROR_TYPES.get(status, "api_error")
    message = f"fake {kind} ({status})"
    if "/messages" in path:
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


def pieces(text: str, size: int = PIECE) -> list[str]:
    """text cut into deltas of at most size characters (one empty piece for empty text)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def chat_body(r: Reply, model: str) -> dict[str, Any]:
    u = r.usage
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1767225600,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": r.text, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": u.input_tokens,
            "completion_tokens": u.output_tokens,
            "total_tokens": u.input_tokens + u.output_tokens,
            "prompt_tokens_details": {"cached_tokens": u.cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
        "system_fingerprint": "fp_fake",
    }


def chat_stream(r: Reply, model: str, include_usage: bool) -> list[dict[str, Any] | str]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1767225600}
    base["model"] = model
    tail: dict[str, Any] = {"usage": None} if include_usage else {}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": p} for p in pieces(r.text or "")]
    chunks: list[dict[str, Any] | str] = [
        {**base, "choices": [{"index": 0, "delta": d, "finish_reason": None}], **tail}
        for d in deltas
    ]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], **tail})
    if include_usage:
        chunks.append({**base, "choices": [], "usage": chat_body(r, model)["usage"]})
    chunks.append("[DONE]")
    return chunks


def responses_body(r: Reply, model: str, status: str = "completed") -> dict[str, Any]:
    u = r.usage
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1767225600,
        "status": status,
        "model": model,
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": r.text or "", "annotations": []}],
            }
        ],
        "usage": {
            "input_tokens": u.input_tokens,
            "input_tokens_details": {"cached_tokens": u.cached_tokens},
            "output_tokens": u.output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": u.input_tokens + u.output_tokens,
        },
    }


def responses_stream(r: Reply, model: str) -> list[tuple[str, dict[str, Any]]]:
    created = {**responses_body(r, model, "in_progress"), "output": [], "usage": None}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": created})
    ]
    for piece in pieces(r.text or ""):
        delta = {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0}
        events.append(("response.output_text.delta", {**delta, "content_index": 0, "delta": piece}))
    events.append(
        ("response.completed", {"type": "response.completed", "response": responses_body(r, model)})
    )
    return [(name, {**data, "sequence_number": i}) for i, (name, data) in enumerate(events)]


def tool_use_id(call: int, position: int) -> str:
    """A stable id for the position-th tool_use of the call-th reply."""
    return f"toolu_fake_{call:04d}_{position}"


def content_blocks(r: Reply, call: int) -> list[dict[str, Any]]:
    """An Anthropic reply's content as whole blocks: its text first, then its tool calls."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": r.text}] if r.text else []
    for position, use in enumerate(r.tool_uses):
        block = {"type": "tool_use", "id": tool_use_id(call, position), "name": use.name}
        blocks.append({**block, "input": use.input})
    return blocks


def anthropic_usage(r: Reply, output_tokens: int) -> dict[str, int]:
    """Anthropic's usage: cache reads and writes apart from input_tokens."""
    u = r.usage
    return {
        "input_tokens": u.input_tokens - u.cached_tokens - r.cache_written,
        "cache_creation_input_tokens": r.cache_written,
        "cache_read_input_tokens": u.cached_tokens,
        "output_tokens": output_tokens,
    }


def anthropic_body(r: Reply, model: str, call: int = 0) -> dict[str, Any]:
    return {
        "id": f"msg_fake_{call:04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content_blocks(r, call),
        "stop_reason": r.stop_reason,
        "stop_sequence": None,
        "usage": anthropic_usage(r, r.usage.output_tokens),
    }


def anthropic_stream(r: Reply, model: str, call: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """message_start (input usage, output_tokens 1), ping, per block its start, deltas (text, or
    the tool input's JSON in pieces) and stop, message_delta (the final output_tokens: a client
    replaces, not adds, the count it had), message_stop."""
    start = {**anthropic_body(r, model, call), "content": [], "stop_reason": None}
    start["usage"] = anthropic_usage(r, min(1, r.usage.output_tokens))
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"message": start}), ("ping", {})]
    for index, block in enumerate(content_blocks(r, call)):
        if block["type"] == "text":
            first: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"])]
        else:
            first = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in pieces(json.dumps(block["input"]))
            ]
        events.append(("content_block_start", {"index": index, "content_block": first}))
        events += [("content_block_delta", {"index": index, "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"index": index}))
    stop = {"stop_reason": r.stop_reason, "stop_sequence": None}
    events.append(
        ("message_delta", {"delta": stop, "usage": {"output_tokens": r.usage.output_tokens}})
    )
    events.append(("message_stop", {}))
    return [(name, {"type": name, **data}) for name, data in events]


def sse_frames(path: str, r: Reply, body: dict[str, Any], model: str, call: int) -> list[bytes]:
    """The event stream a streamed call to path is answered with, one frame per event."""
    if path.endswith("/messages"):
        named = anthropic_stream(r, model, call)
    elif path.endswith("/responses"):
        named = responses_stream(r, model)
    else:
        include = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = chat_stream(r, model, include)
        if r.stream_error:
            chunks = [chunks[0], error_body(path, 500, r.stream_error)]
        return [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n".encode() for c in chunks]
    if r.stream_error:
        named = [named[0], ("error", error_body(path, 500, r.stream_error))]
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in named]


def json_reply(path: str, r: Reply, model: str, call: int) -> Any:
    """The whole body a call to path is answered with."""
    if r.body is not None:
        return r.body
    if r.status != 200:
        return error_body(path, r.status, r.error_type)
    if path.endswith("/messages"):
        return anthropic_body(r, model, call)
    if path.endswith("/responses"):
        return responses_body(r, model)
    return chat_body(r, model)


__all__ = [
    "ERROR_TYPES",
    "FAKE_MODEL",
    "Reply",
    "ToolUse",
    "anthropic_body",
    "anthropic_stream",
    "chat_body",
    "chat_stream",
    "content_blocks",
    "error_body",
    "json_reply",
    "pieces",
    "responses_body",
    "responses_stream",
    "sse_frames",
    "tokens",
    "tool_use_id",
]
