"""Token usage read from model API replies: OpenAI chat completions and responses, Anthropic
messages (and Gemini's usageMetadata), streamed or not, whatever the harness.

The API is told by the reply's shape, not its URL. UsageReader sees each JSON object of a reply
(the whole body, or each server-sent event's data) and keeps the model and the usage fields,
later values over earlier ones field by field: Anthropic's message_delta updates the counts of
message_start; a chat stream's final chunk and a responses stream's response.completed carry
the totals. UsageTee is the callable mitmproxy streams a reply through: it hands every chunk on
untouched and reads a decoded copy.
"""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any

from proxy_addon.addon.modelapi import says_quota
from proxy_addon.addon.requestlog import printable
from proxy_addon.addon.sse import SseParser
from proxy_addon.addon.streamdecode import StreamDecodeError, StreamDecoder
from proxy_addon.records.tokens import TokenCounts, tokens_from_usage

logger = logging.getLogger("clawbench")

MAX_BODY = 16 * 1024 * 1024
"""A reply that is not an event stream is read for usage up to this size (decoded)."""

_RESPONSE_EVENTS = frozenset(
    {
        "response.created",
        "response.in_progress",
        "response.completed",
        "response.incomplete",
        "response.failed",
    }
)


class UsageReader:
    """The model and usage of one reply, from the JSON objects it is made of, and the error it
    names (an error reply, or an error event in a stream)."""

    def __init__(self) -> None:
        self.model: str | None = None
        self.api_error: str | None = None
        """The error's code, else its type (OpenAI's and Anthropic's error objects)."""
        self.quota_said: bool = False
        """Whether that error is about quota or credit."""
        self._usage: dict[str, Any] = {}

    @property
    def tokens(self) -> TokenCounts | None:
        """The reply's usage so far, normalised; None if it has named none."""
        return tokens_from_usage(self._usage) if self._usage else None

    def see(self, obj: Any) -> None:
        """Take the model and usage from one body or event."""
        if not isinstance(obj, dict):
            return
        kind = obj.get("type")
        if kind == "message_start":  # Anthropic, streamed
            obj = obj.get("message")
        elif kind in _RESPONSE_EVENTS:  # OpenAI responses API, streamed
            obj = obj.get("response")
        if not isinstance(obj, dict):
            return
        if isinstance(error := obj.get("error"), dict):
            self._error(error)
        model = obj.get("model") or obj.get("modelVersion")
        if self.model is None and isinstance(model, str) and model:
            self.model = model[:200]
        usage = obj.get("usage")
        if not isinstance(usage, dict):
            usage = obj.get("usageMetadata")
        if isinstance(usage, dict):
            self._usage.update((k, v) for k, v in usage.items() if v is not None)

    def _error(self, error: dict[str, Any]) -> None:
        words = [error.get(k) for k in ("code", "type", "message")]
        named = next((w for w in words[:2] if isinstance(w, str) and w), None)
        if named is not None and self.api_error is None:
            self.api_error = printable(named[:100])
        self.quota_said = self.quota_said or says_quota(
            " ".join(w for w in words if isinstance(w, str))
        )

    def see_json(self, data: bytes) -> None:
        """Parse data as JSON and see it; text that is not JSON is no usage."""
        # A reply that is not JSON (an HTML error page) names no usage.
        with contextlib.suppress(ValueError, RecursionError):
            self.see(json.loads(data))


class UsageTee:
    """flow.response.stream for a model call: every chunk goes on as it came, and a decoded copy
    is read for usage (event by event for an event stream, else the whole body at the end)."""

    def __init__(self, content_type: str | None, content_encoding: str | None) -> None:
        self.event_stream = (content_type or "").lower().startswith("text/event-stream")
        self.reader = UsageReader()
        self.wire_bytes = 0
        self.ended = False
        self.error: str | None = None
        self._sse = SseParser() if self.event_stream else None
        self._body = bytearray()
        self._decoder: StreamDecoder | None = None
        try:
            self._decoder = StreamDecoder(content_encoding, MAX_BODY)
        except StreamDecodeError as e:
            self.error = f"usage not read: {e}"

    def __call__(self, chunk: bytes) -> bytes:
        self.wire_bytes += len(chunk)
        if not chunk:
            self.ended = True
        if self._decoder is None:
            return chunk
        try:
            if chunk:
                self._take(self._decoder.decode(chunk))
            else:
                self._take(self._decoder.end())
                self._finish()
        except StreamDecodeError as e:
            self._stop(f"usage not read: {e}")
        except Exception as e:
            # Reading usage must never break the agent's reply: log the bug, pass the bytes on.
            logger.exception("clawbench: reading a model reply's usage failed")
            self._stop(f"usage not read: {type(e).__name__}: {e}")
        return chunk

    def _stop(self, error: str) -> None:
        self.error, self._decoder, self._sse = error, None, None
        self._body = bytearray()

    def _take(self, data: bytes) -> None:
        if not data:
            return
        if self._sse is not None:
            for event in self._sse.feed(data):
                self._event(event.data)
        else:
            self._body += data

    def _event(self, data: bytes) -> None:
        # Most events of a chat stream carry neither usage nor (once known) anything new.
        if (
            b"sage" in data
            or b'"error"' in data
            or (self.reader.model is None and b'"model' in data)
        ):
            self.reader.see_json(data)

    def _finish(self) -> None:
        if self._sse is not None:
            for event in self._sse.end():
                self._event(event.data)
            if self._sse.dropped:
                self.error = f"{self._sse.dropped} event(s) over the size bound not read"
        elif self._body:
            self.reader.see_json(bytes(self._body))
            self._body = bytearray()


__all__ = ["MAX_BODY", "UsageReader", "UsageTee"]
