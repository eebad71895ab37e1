"""An incremental server-sent events parser (the WHATWG event stream format), bounded.

Chunks arrive split anywhere: mid-line, mid-UTF-8 character, between the CR and LF of one line
break. feed() returns the events each chunk completes; end() the last one when the stream stops
without the blank line (lenient, so a usage event at the very end is not lost).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_EVENT = 16 * 1024 * 1024
"""An event's data beyond this many bytes is dropped whole (the parser's memory stays bounded)."""

_BOM = b"\xef\xbb\xbf"
_EOL = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event: its type ('message' when the stream names none) and data bytes."""

    event: str
    data: bytes


class SseParser:
    """feed(chunk) -> the events it completes; end() -> the pending one, if any."""

    def __init__(self, max_event: int = MAX_EVENT) -> None:
        self._max = max_event
        self._pending = bytearray()  # an unterminated line
        self._data: list[bytes] = []
        self._size = 0
        self._event = b""
        self._skipping = False  # the current event outgrew max_event: wait for its end
        self._started = False
        self.dropped = 0
        """Events dropped for size."""

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Parse chunk; the events whose blank line it holds, in order."""
        buf = self._pending
        scan = max(len(buf) - 1, 0)  # the pending line holds no line break but a final CR
        buf += chunk
        if not self._started:
            if len(buf) < 3 and _BOM.startswith(buf):
                return []  # maybe a byte order mark, split
            self._started = True
            if buf.startswith(_BOM):
                del buf[:3]
        events: list[SseEvent] = []
        start = 0
        for m in _EOL.finditer(buf, scan):
            if m.group() == b"\r" and m.end() == len(buf):
                break  # a CR at the end: its LF may be the next chunk's first byte
            self._line(bytes(buf[start : m.start()]), events)
            start = m.end()
        del buf[:start]
        if len(buf) > self._max:
            self._overflow()
            buf.clear()
        return events

    def end(self) -> list[SseEvent]:
        """The stream ended: the last line and event even without their terminators."""
        events: list[SseEvent] = []
        if self._pending:
            line = bytes(self._pending.rstrip(b"\r"))
            self._pending.clear()
            self._line(line, events)
        self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[SseEvent]) -> None:
        if not line:
            if self._data and not self._skipping:
                name = self._event.decode("utf-8", "replace") or "message"
                events.append(SseEvent(name, b"\n".join(self._data)))
            self._data, self._size, self._event, self._skipping = [], 0, b"", False
            return
        if self._skipping or line.startswith(b":"):
            return
        field, sep, value = line.partition(b":")
        if sep and value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            self._size += len(value) + 1
            if self._size > self._max:
                self._overflow()
                return
            self._data.append(value)
        elif field == b"event":
            self._event = value
        # id and retry matter to a reconnecting client, not to reading usage

    def _overflow(self) -> None:
        if not self._skipping:
            self.dropped += 1
        self._skipping, self._data, self._size = True, [], 0


__all__ = ["MAX_EVENT", "SseEvent", "SseParser"]
