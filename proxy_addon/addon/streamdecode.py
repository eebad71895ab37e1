"""Undo a response's Content-Encoding chunk by chunk, as it streams (gzip, deflate, br, zstd).

matching.bodies decodes a whole body at once; a model's streamed reply is read as it passes, so
each coding here keeps its decompressor between chunks. Output is bounded (a decompression bomb
raises StreamDecodeError), and the bytes the client gets are never touched: this is a copy.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import brotli

try:
    from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+
except ImportError:  # pragma: no cover
    from backports import zstd  # mitmproxy's own dependency before 3.14

_STEP = 1 << 20
"""Decoders produce at most this much per call, so the bound is checked as they go."""

CODINGS = ("gzip", "x-gzip", "deflate", "br", "zstd", "identity")


class StreamDecodeError(ValueError):
    """The stream cannot be decoded: unknown coding, corrupt data, or over the size bound."""


class _Zlib:
    """gzip (several members allowed) or deflate (zlib-wrapped, or raw as some servers send)."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._head = b""  # deflate: the first two bytes tell zlib from raw deflate
        self._d: zlib._Decompress | None = zlib.decompressobj(31) if gzip else None

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self._d is None:
            self._head += data
            if len(self._head) < 2:
                return
            first, second = self._head[0], self._head[1]
            wrapped = first & 0x0F == 8 and (first << 8 | second) % 31 == 0
            self._d = zlib.decompressobj(15 if wrapped else -15)
            data, self._head = self._head, b""
        while data:
            if self._d.eof:
                if not self._gzip:
                    raise StreamDecodeError("data after the end of the deflate stream")
                self._d = zlib.decompressobj(31)  # the next gzip member (RFC 1952 2.2)
            yield self._d.decompress(data, _STEP)
            data = self._d.unconsumed_tail or (self._d.unused_data if self._d.eof else b"")

    def end(self) -> Iterator[bytes]:
        if self._d is None:
            if self._head:
                raise StreamDecodeError("deflate stream truncated")
            return
        yield self._d.flush()
        if not self._d.eof:
            raise StreamDecodeError("compressed stream truncated")


class _Brotli:
    def __init__(self) -> None:
        self._d = brotli.Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        yield self._d.process(data, output_buffer_limit=_STEP)
        while not self._d.is_finished() and not self._d.can_accept_more_data():
            yield self._d.process(b"", output_buffer_limit=_STEP)

    def end(self) -> Iterator[bytes]:
        if not self._d.is_finished():
            raise StreamDecodeError("brotli stream truncated")
        yield b""


class _Zstd:
    def __init__(self) -> None:
        self._d = zstd.ZstdDecompressor()
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            if self._d.eof:  # a zstd stream may hold several frames (RFC 8878 3.1)
                self._d = zstd.ZstdDecompressor()
            self._started = True
            yield self._d.decompress(data, max_length=_STEP)
            while not self._d.eof and not self._d.needs_input:
                yield self._d.decompress(b"", max_length=_STEP)
            data = self._d.unused_data if self._d.eof else b""

    def end(self) -> Iterator[bytes]:
        if self._started and not self._d.eof:
            raise StreamDecodeError("zstd stream truncated")
        yield b""


class _Identity:
    def feed(self, data: bytes) -> Iterator[bytes]:
        yield data

    def end(self) -> Iterator[bytes]:
        yield b""


_Coding = _Zlib | _Brotli | _Zstd | _Identity


def _coding(name: str) -> _Coding:
    if name in ("gzip", "x-gzip"):
        return _Zlib(gzip=True)
    if name == "deflate":
        return _Zlib(gzip=False)
    if name == "br":
        return _Brotli()
    if name == "zstd":
        return _Zstd()
    if name == "identity":
        return _Identity()
    raise StreamDecodeError(f"unknown Content-Encoding {name!r}")


class StreamDecoder:
    """Content-Encoding undone incrementally: decode(chunk) as chunks arrive, then end()."""

    def __init__(self, content_encoding: str | None, limit: int) -> None:
        names = [e.strip().lower() for e in (content_encoding or "").split(",") if e.strip()]
        # The codings were applied in the order listed, so they are undone last first.
        self._codings = [_coding(n) for n in reversed(names) if n != "identity"]
        self._limit = limit
        self._out = 0

    def decode(self, chunk: bytes) -> bytes:
        """The decoded bytes this chunk completes (possibly none)."""
        return self._run(chunk, final=False)

    def end(self) -> bytes:
        """The last decoded bytes; StreamDecodeError if the stream was cut short."""
        return self._run(b"", final=True)

    def _run(self, data: bytes, final: bool) -> bytes:
        try:
            for coding in self._codings:
                out = bytearray()
                for part in coding.feed(data) if data else ():
                    out += part
                    self._check(len(out))
                for part in coding.end() if final else ():
                    out += part
                    self._check(len(out))
                data = bytes(out)
        except StreamDecodeError:
            raise
        except (zlib.error, brotli.error, zstd.ZstdError) as e:
            raise StreamDecodeError(f"cannot decode the stream: {e}") from e
        self._out += len(data)
        self._check(self._out)
        return data

    def _check(self, size: int) -> None:
        if size > self._limit:
            raise StreamDecodeError(f"decoded stream exceeds {self._limit} bytes")


__all__ = ["CODINGS", "StreamDecodeError", "StreamDecoder"]
