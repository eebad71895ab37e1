"""Model API replies shaped as the public API references show them: OpenAI chat completions
(whole and streamed, with and without the final usage chunk), OpenAI responses (whole and
streamed), Anthropic messages (whole and streamed). The usage a reply reports is ModelReply's
(input incl. cached, output, cached), in each API's own fields.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any


@dataclass
class ModelReply:
    """What one call is answered with; usage is (input incl. cached, output, cached).

    status other than 200: an error reply in the API's shape (error_type: its type or code,
    else the usual one for the status); stream_error: a 200 stream that ends with an error
    event of that type after its first event; cut: a 200 stream the server closes after its
    first event."""

    usage: tuple[int, int, int] = (100, 20, 0)
    model: str = "fake-model-1"
    text: str = "Hello from the fake model."
    encoding: str | None = None
    gate: threading.Event | None = None
    status: int = 200
    error_type: str | None = None
    stream_error: str | None = None
    cut: bool = False


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


def error_body(path: str, status: int, kind: str | None = None) -> dict[str, Any]:
    """An error reply as the API sends it: Anthropic's for /messages, else OpenAI's."""
    kind = kind or ERROR_TYPES.get(status, "api_error")
    message = f"fake {kind} ({status})"
    if path.endswith("/messages"):
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


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
        chunks = chat_stream(r, include)
        if r.stream_error:
            chunks = [chunks[0], error_body(path, 500, r.stream_error)]
        return [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n".encode() for c in chunks]
    if r.stream_error:
        named = [named[0], ("error", error_body(path, 500, r.stream_error))]
    return [f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in named]


def json_reply(path: str, r: ModelReply) -> dict[str, Any]:
    if r.status != 200:
        return error_body(path, r.status, r.error_type)
    if path.endswith("/messages"):
        return anthropic_body(r)
    if path.endswith("/responses"):
        return responses_body(r)
    return chat_body(r)


__all__ = [
    "ERROR_TYPES",
    "ModelReply",
    "anthropic_body",
    "anthropic_stream",
    "chat_body",
    "chat_stream",
    "error_body",
    "json_reply",
    "responses_body",
    "responses_stream",
    "sse_frames",
]
