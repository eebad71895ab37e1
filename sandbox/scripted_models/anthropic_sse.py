"""The Anthropic Messages API's reply shapes: a whole message, or its server-sent event stream.

The stream is what the real API sends: `message_start` (the message with empty content and the
input usage, output_tokens 1), a `ping`, per content block `content_block_start`, its deltas
(`text_delta`, or `input_json_delta` with the tool input's JSON in pieces) and
`content_block_stop`, then `message_delta` (stop_reason and the final output_tokens; a client
replaces, not adds, the count it had) and `message_stop`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from sandbox.scripted_models.anthropic_script import Reply, Usage

__all__ = ["content_blocks", "message_json", "pieces", "sse_events", "tool_use_id"]

PIECE = 24
"""Characters per delta: small enough that every reply spans several events."""


def tool_use_id(call: int, position: int) -> str:
    """A stable id for the position-th tool_use of the call-th reply."""
    return f"toolu_scripted_{call:04d}_{position}"


def pieces(text: str, size: int = PIECE) -> list[str]:
    """text cut into deltas of at most size characters (one empty piece for empty text)."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def content_blocks(reply: Reply, call: int) -> list[dict[str, Any]]:
    """The reply's content as whole blocks: its text first, then its tool calls."""
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for position, use in enumerate(reply.tool_uses):
        blocks.append(
            {
                "type": "tool_use",
                "id": tool_use_id(call, position),
                "name": use.name,
                "input": use.input,
            }
        )
    return blocks


def _usage(usage: Usage, output_tokens: int) -> dict[str, int]:
    return {**asdict(usage), "output_tokens": output_tokens}


def message_json(message_id: str, model: str, reply: Reply, call: int) -> dict[str, Any]:
    """The non-streaming response body."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content_blocks(reply, call),
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": _usage(reply.usage, reply.usage.output_tokens),
    }


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n".encode()


def sse_events(message_id: str, model: str, reply: Reply, call: int) -> Iterator[bytes]:
    """The streaming response, one encoded server-sent event at a time."""
    start = {**message_json(message_id, model, reply, call), "content": [], "stop_reason": None}
    start["usage"] = _usage(reply.usage, min(1, reply.usage.output_tokens))
    yield _event("message_start", {"message": start})
    yield _event("ping", {})
    for index, block in enumerate(content_blocks(reply, call)):
        if block["type"] == "text":
            first, deltas = (
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": p} for p in pieces(block["text"])],
            )
        else:
            first = {**block, "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": p}
                for p in pieces(json.dumps(block["input"]))
            ]
        yield _event("content_block_start", {"index": index, "content_block": first})
        for delta in deltas:
            yield _event("content_block_delta", {"index": index, "delta": delta})
        yield _event("content_block_stop", {"index": index})
    yield _event(
        "message_delta",
        {
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": reply.usage.output_tokens},
        },
    )
    yield _event("message_stop", {})
