"""Token usage from model replies: each API's shapes (written by hand after the public API
references), streamed and not, fed whole and split at every byte, compressed or not."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest

from proxy_addon.addon.usage import UsageReader, UsageTee
from proxy_addon.records import TokenCounts, tokens_from_usage

CHAT_BODY = b"""{
  "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4.1-2025-04-14",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello! How can I
    assist you today?", "refusal": null, "annotations": []}, "logprobs": null,
    "finish_reason": "stop"}],
  "usage": {"prompt_tokens": 19, "completion_tokens": 10, "total_tokens": 29,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
      "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
  "service_tier": "default"
}""".replace(b"I\n    assist", b"I assist")

CHAT_STREAM_WITH_USAGE = (
    b'data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,'
    b'"model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,'
    b'"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],'
    b'"usage":null}\n\n'
    b'data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,'
    b'"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello"},'
    b'"logprobs":null,"finish_reason":null}],"usage":null}\n\n'
    b'data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,'
    b'"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,'
    b'"finish_reason":"stop"}],"usage":null}\n\n'
    b'data: {"id":"chatcmpl-123","object":"chat.completion.chunk","created":1694268190,'
    b'"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":'
    b'35,"total_tokens":1235,"prompt_tokens_details":{"cached_tokens":1024}}}\n\n'
    b"data: [DONE]\n\n"
)

CHAT_STREAM_NO_USAGE = CHAT_STREAM_WITH_USAGE.split(b'data: {"id":"chatcmpl-123","object":'
    b'"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[],')[0] + (
    b"data: [DONE]\n\n")  # fmt: skip

DEEPSEEK_BODY = json.dumps({
    "id": "x", "object": "chat.completion", "model": "deepseek-chat", "choices": [],
    "usage": {"prompt_tokens": 500, "completion_tokens": 7, "total_tokens": 507,
              "prompt_cache_hit_tokens": 448, "prompt_cache_miss_tokens": 52},
}).encode()  # fmt: skip

RESPONSES_BODY = json.dumps({
    "id": "resp_67ccd2bed1ec8190b14f964abc054267", "object": "response",
    "created_at": 1741476542, "status": "completed", "model": "gpt-4.1-2025-04-14",
    "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "In a peaceful grove...",
                             "annotations": []}]}],
    "usage": {"input_tokens": 36, "input_tokens_details": {"cached_tokens": 0},
              "output_tokens": 87, "output_tokens_details": {"reasoning_tokens": 0},
              "total_tokens": 123},
}).encode()  # fmt: skip

RESPONSES_STREAM = (
    b'event: response.created\ndata: {"type":"response.created","sequence_number":0,'
    b'"response":{"id":"resp_1","object":"response","status":"in_progress",'
    b'"model":"gpt-4.1-2025-04-14","output":[],"usage":null}}\n\n'
    b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
    b'"sequence_number":1,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi"}\n\n'
    b'event: response.completed\ndata: {"type":"response.completed","sequence_number":2,'
    b'"response":{"id":"resp_1","object":"response","status":"completed",'
    b'"model":"gpt-4.1-2025-04-14","output":[],"usage":{"input_tokens":2048,'
    b'"input_tokens_details":{"cached_tokens":1536},"output_tokens":300,'
    b'"output_tokens_details":{"reasoning_tokens":128},"total_tokens":2348}}}\n\n'
)

ANTHROPIC_BODY = json.dumps({
    "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF", "type": "message", "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [{"type": "text", "text": "Hi! My name is Claude."}],
    "stop_reason": "end_turn", "stop_sequence": None,
    "usage": {"input_tokens": 2095, "cache_creation_input_tokens": 100,
              "cache_read_input_tokens": 1800, "output_tokens": 503},
}).encode()  # fmt: skip

ANTHROPIC_STREAM = (
    b'event: message_start\ndata: {"type": "message_start", "message": {"id": '
    b'"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY", "type": "message", "role": "assistant", '
    b'"content": [], "model": "claude-opus-4-1-20250805", "stop_reason": null, '
    b'"stop_sequence": null, "usage": {"input_tokens": 25, "cache_creation_input_tokens": 0, '
    b'"cache_read_input_tokens": 400, "output_tokens": 1}}}\n\n'
    b'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
    b'"content_block": {"type": "text", "text": ""}}\n\n'
    b'event: ping\ndata: {"type": "ping"}\n\n'
    b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
    b'"delta": {"type": "text_delta", "text": "Hello"}}\n\n'
    b'event: content_block_stop\ndata: {"type": "content_block_stop", "index": 0}\n\n'
    b'event: message_delta\ndata: {"type": "message_delta", "delta": {"stop_reason": '
    b'"end_turn", "stop_sequence":null}, "usage": {"output_tokens": 15}}\n\n'
    b'event: message_stop\ndata: {"type": "message_stop"}\n\n'
)

GEMINI_STREAM = (
    b'data: {"candidates": [{"content": {"parts": [{"text": "Hi"}],"role": "model"}}],'
    b'"usageMetadata": {"promptTokenCount": 8,"candidatesTokenCount": 1,"totalTokenCount": 9},'
    b'"modelVersion": "gemini-2.5-flash"}\r\n\r\n'
    b'data: {"candidates": [{"content": {"parts": [{"text": " there"}],"role": "model"},'
    b'"finishReason": "STOP"}],"usageMetadata": {"promptTokenCount": 8,'
    b'"candidatesTokenCount": 12,"thoughtsTokenCount": 30,"cachedContentTokenCount": 4,'
    b'"totalTokenCount": 50},"modelVersion": "gemini-2.5-flash"}\r\n\r\n'
)

SSE = "text/event-stream; charset=utf-8"
JSON = "application/json"

CASES: list[tuple[str, str, bytes, str | None, TokenCounts | None]] = [
    ("chat", JSON, CHAT_BODY, "gpt-4.1-2025-04-14", TokenCounts(input_tokens=19, output_tokens=10)),
    ("chat stream with usage", SSE, CHAT_STREAM_WITH_USAGE, "gpt-4o-mini",
     TokenCounts(input_tokens=1200, output_tokens=35, cached_tokens=1024)),
    ("chat stream without usage", SSE, CHAT_STREAM_NO_USAGE, "gpt-4o-mini", None),
    ("deepseek cache hits", JSON, DEEPSEEK_BODY, "deepseek-chat",
     TokenCounts(input_tokens=500, output_tokens=7, cached_tokens=448)),
    ("responses", JSON, RESPONSES_BODY, "gpt-4.1-2025-04-14",
     TokenCounts(input_tokens=36, output_tokens=87)),
    ("responses stream", SSE, RESPONSES_STREAM, "gpt-4.1-2025-04-14",
     TokenCounts(input_tokens=2048, output_tokens=300, cached_tokens=1536)),
    ("anthropic", JSON, ANTHROPIC_BODY, "claude-sonnet-4-5-20250929",
     TokenCounts(input_tokens=2095 + 100 + 1800, output_tokens=503, cached_tokens=1800)),
    ("anthropic stream", SSE, ANTHROPIC_STREAM, "claude-opus-4-1-20250805",
     TokenCounts(input_tokens=425, output_tokens=15, cached_tokens=400)),
    ("gemini stream", SSE, GEMINI_STREAM, "gemini-2.5-flash",
     TokenCounts(input_tokens=8, output_tokens=42, cached_tokens=4)),
    ("html error page", "text/html", b"<html>502 Bad Gateway</html>", None, None),
    ("json error", JSON, b'{"error": {"message": "Incorrect API key", "type": "x"}}', None, None),
    ("empty", JSON, b"", None, None),
]  # fmt: skip


def _tee(content_type: str, chunks: list[bytes], encoding: str | None = None) -> UsageTee:
    tee = UsageTee(content_type, encoding)
    for chunk in chunks:
        assert tee(chunk) is chunk  # handed on untouched
    assert tee(b"") == b""
    return tee


@pytest.mark.parametrize(("ctype", "body", "model", "tokens"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
def test_whole_reply(ctype: str, body: bytes, model: str | None, tokens: Any) -> None:
    tee = _tee(ctype, [body])
    assert (tee.reader.model, tee.reader.tokens, tee.error) == (model, tokens, None)
    assert tee.wire_bytes == len(body)
    assert tee.event_stream == (ctype == SSE)


@pytest.mark.parametrize(("ctype", "body", "model", "tokens"), [c[1:] for c in CASES[:9]],
                         ids=[c[0] for c in CASES[:9]])  # fmt: skip
def test_split_anywhere(ctype: str, body: bytes, model: str | None, tokens: Any) -> None:
    for cut in range(1, len(body), 7):
        tee = _tee(ctype, [body[:cut], body[cut:]])
        assert (tee.reader.model, tee.reader.tokens) == (model, tokens), cut
    tee = _tee(ctype, [body[i : i + 1] for i in range(len(body))])  # byte by byte
    assert (tee.reader.model, tee.reader.tokens) == (model, tokens)


def test_gzip_stream_in_pieces() -> None:
    wire = gzip.compress(ANTHROPIC_STREAM)
    tee = _tee(SSE, [wire[i : i + 10] for i in range(0, len(wire), 10)], "gzip")
    assert tee.reader.tokens == TokenCounts(input_tokens=425, output_tokens=15, cached_tokens=400)
    assert tee.wire_bytes == len(wire)


def test_usage_known_before_the_end() -> None:
    """A stream cut short still tells what its first events said (Anthropic's input)."""
    tee = UsageTee(SSE, None)
    tee(ANTHROPIC_STREAM[: ANTHROPIC_STREAM.index(b"event: ping")])
    assert tee.reader.tokens == TokenCounts(input_tokens=425, output_tokens=1, cached_tokens=400)


def test_undecodable_reply_is_passed_on_and_says_why() -> None:
    tee = UsageTee(JSON, "gzip")
    assert tee(b"not gzip at all") == b"not gzip at all"
    assert tee(b"more") == b"more"
    tee(b"")
    assert tee.reader.tokens is None
    assert tee.error is not None and "usage not read" in tee.error
    unknown = _tee(JSON, [CHAT_BODY], "x-custom")
    assert unknown.reader.tokens is None and "x-custom" in (unknown.error or "")


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [
        ({"prompt_tokens": 5, "completion_tokens": 2},
         TokenCounts(input_tokens=5, output_tokens=2)),
        ({"prompt_tokens": 5, "prompt_tokens_details": {"cached_tokens": 9}},
         TokenCounts(input_tokens=5, cached_tokens=5)),  # cached never above input
        ({"input_tokens": 3, "output_tokens": 4, "cache_creation_input_tokens": 10},
         TokenCounts(input_tokens=13, output_tokens=4)),
        ({"input_tokens": 3.0, "output_tokens": True}, TokenCounts(input_tokens=3)),
        ({"input_tokens": -1, "output_tokens": "7"}, TokenCounts()),
        ({"total_tokens": 5}, None),
        ([1, 2], None),
        (None, None),
    ],
)  # fmt: skip
def test_tokens_from_usage(usage: Any, tokens: TokenCounts | None) -> None:
    assert tokens_from_usage(usage) == tokens


def test_later_usage_fields_win_field_by_field() -> None:
    reader = UsageReader()
    reader.see({"type": "message_start", "message": {"model": "m", "usage": {"input_tokens": 7}}})
    reader.see({"type": "message_delta", "usage": {"output_tokens": 3, "input_tokens": None}})
    reader.see({"type": "message_delta", "usage": {"output_tokens": 9}})
    assert (reader.model, reader.tokens) == ("m", TokenCounts(input_tokens=7, output_tokens=9))


def test_deep_json_is_no_usage() -> None:
    tee = _tee(JSON, [b"[" * 100_000 + b"]" * 100_000])
    assert tee.reader.tokens is None and tee.error is None
