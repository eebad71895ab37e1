"""Content-Encoding undone within a bound (docs/formats.md, "Matching"): gzip (several members),
deflate (zlib or raw), br, zstd (several frames), identity, stacked; a bomb, a cut or corrupt
stream, an unknown encoding is Unevaluable, never an exception of the codec's."""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import brotli

try:
    from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+
except ImportError:
    from backports import zstd  # mitmproxy's own dependency before 3.14

__all__ = ["MAX_DECODED", "Unevaluable", "decode_content"]

MAX_DECODED = 64 * 1024 * 1024
"""Largest body (after Content-Encoding) that is parsed; beyond it the body is unevaluable."""


class Unevaluable(ValueError):
    """The body cannot be checked: too large, a decompression bomb, or undecodable."""


_STEP = 1 << 20
"""Decoders produce at most this much output per call, so the bound is checked as they go."""


class _Corrupt(ValueError):
    """A compressed stream that is cut short or followed by data that is not part of it."""


def _bounded(chunks: Iterator[bytes], limit: int) -> bytes:
    out = bytearray()
    for chunk in chunks:
        out += chunk
        if len(out) > limit:
            raise Unevaluable(f"decoded body exceeds {limit} bytes (decompression bomb?)")
    return bytes(out)


def _zlib_chunks(data: bytes, wbits: int) -> Iterator[bytes]:
    while True:
        d = zlib.decompressobj(wbits)
        buf = data
        while buf and not d.eof:
            yield d.decompress(buf, _STEP)
            buf = d.unconsumed_tail
        if not d.eof:
            yield d.flush()  # at most one pending match copy once the input is used up
            if not d.eof:
                raise _Corrupt("stream truncated")
        data = d.unused_data
        if not data:
            return
        if wbits != 31:  # only gzip may have several members (RFC 1952 section 2.2)
            raise _Corrupt("data after the end of the stream")


def _brotli_chunks(data: bytes) -> Iterator[bytes]:
    d = brotli.Decompressor()
    yield d.process(data, output_buffer_limit=_STEP)
    while not d.is_finished() and not d.can_accept_more_data():
        yield d.process(b"", output_buffer_limit=_STEP)
    if not d.is_finished():
        raise _Corrupt("stream truncated")


def _zstd_chunks(data: bytes) -> Iterator[bytes]:
    while data:  # a zstd stream may hold several frames (RFC 8878 section 3.1)
        d = zstd.ZstdDecompressor()
        yield d.decompress(data, max_length=_STEP)
        while not d.eof and not d.needs_input:
            yield d.decompress(b"", max_length=_STEP)
        if not d.eof:
            raise _Corrupt("stream truncated")
        data = d.unused_data


def _decode_one(data: bytes, enc: str, limit: int) -> bytes:
    if enc in ("gzip", "x-gzip"):
        return _bounded(_zlib_chunks(data, 31), limit)
    if enc == "deflate":
        try:
            return _bounded(_zlib_chunks(data, 15), limit)
        except zlib.error:  # no zlib header: raw deflate, as some clients send it
            return _bounded(_zlib_chunks(data, -15), limit)
    if enc == "br":
        return _bounded(_brotli_chunks(data), limit)
    if enc == "zstd":
        return _bounded(_zstd_chunks(data), limit)
    if enc == "identity":
        return data
    raise Unevaluable(f"unknown Content-Encoding {enc!r}")


def decode_content(data: bytes, content_encoding: str | None, limit: int = MAX_DECODED) -> bytes:
    """Undo Content-Encoding (gzip, deflate, br, zstd, identity; stacked), bounded by limit."""
    if not content_encoding:
        return data
    for enc in reversed([e.strip().lower() for e in content_encoding.split(",") if e.strip()]):
        try:
            data = _decode_one(data, enc, limit)
        except Unevaluable:
            raise
        except Exception as e:  # zlib.error, brotli.error, zstd.ZstdError, _Corrupt
            raise Unevaluable(f"cannot decode Content-Encoding {enc!r}: {e}") from e
    return data
