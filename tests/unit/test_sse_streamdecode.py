"""The incremental SSE parser (WHATWG event stream rules) and the streaming Content-Encoding
decoder: same result however the bytes are split, bounded, and loud about corrupt input."""

from __future__ import annotations

import gzip
import os
import zlib

import brotli
import pytest

from proxy_addon.addon.sse import SseEvent, SseParser
from proxy_addon.addon.streamdecode import StreamDecodeError, StreamDecoder

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd


def _events(chunks: list[bytes], max_event: int = 1 << 20) -> tuple[list[SseEvent], SseParser]:
    parser = SseParser(max_event)
    out = [e for c in chunks for e in parser.feed(c)]
    return out + parser.end(), parser


@pytest.mark.parametrize(
    ("stream", "events"),
    [
        (b"data: a\n\n", [SseEvent("message", b"a")]),
        (b"data:a\r\n\r\n", [SseEvent("message", b"a")]),  # no space after the colon
        (b"data: a\r\rdata: b\r\r", [SseEvent("message", b"a"), SseEvent("message", b"b")]),
        (b"event: x\ndata: 1\ndata: 2\n\n", [SseEvent("x", b"1\n2")]),
        (b"data:  two spaces\n\n", [SseEvent("message", b" two spaces")]),
        (b": comment\nretry: 5\nid: 7\n\n", []),  # no data: nothing dispatched
        (b"event: only\n\n", []),
        (b"\xef\xbb\xbfdata: bom\n\n", [SseEvent("message", b"bom")]),
        (b"data\n\n", [SseEvent("message", b"")]),  # a field name alone: empty data
        (b"data: no blank line at the end", [SseEvent("message", b"no blank line at the end")]),
        (b"data: x\n\nevent: y\n\ndata: z\n\n",
         [SseEvent("message", b"x"), SseEvent("message", b"z")]),
        (b"data: \xe2\x82\xac\n\n", [SseEvent("message", b"\xe2\x82\xac")]),
    ],
)  # fmt: skip
def test_parse_split_at_every_byte(stream: bytes, events: list[SseEvent]) -> None:
    assert _events([stream])[0] == events
    for cut in range(1, len(stream)):
        assert _events([stream[:cut], stream[cut:]])[0] == events, cut
    assert _events([stream[i : i + 1] for i in range(len(stream))])[0] == events


def test_cr_then_lf_in_the_next_chunk_is_one_line_break() -> None:
    parser = SseParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n") == []  # not a blank line: \r\n was one break
    assert parser.feed(b"\r\n") == [SseEvent("message", b"a")]


def test_oversized_event_dropped_whole_and_the_next_one_kept() -> None:
    big = b"data: " + b"x" * 5000 + b"\ndata: more\n\n"
    events, parser = _events(
        [big[i : i + 100] for i in range(0, len(big), 100)] + [b"data: ok\n\n"], 1000
    )
    assert events == [SseEvent("message", b"ok")]
    assert parser.dropped == 1
    one_line, parser = _events([b"data: " + b"y" * 3000, b"y" * 3000, b"\n\ndata: ok\n\n"], 1000)
    assert one_line == [SseEvent("message", b"ok")] and parser.dropped == 1


PAYLOAD = b"data: " + os.urandom(3000).hex().encode() + b"\n\n" + b"event: x\ndata: {}\n\n" * 300


def _gzip_members() -> bytes:
    half = len(PAYLOAD) // 2
    return gzip.compress(PAYLOAD[:half]) + gzip.compress(PAYLOAD[half:])


def _zstd_frames() -> bytes:
    half = len(PAYLOAD) // 2
    return zstd.compress(PAYLOAD[:half]) + zstd.compress(PAYLOAD[half:])


ENCODED = {
    "gzip": gzip.compress(PAYLOAD),
    "x-gzip": gzip.compress(PAYLOAD),
    "gzip (two members)": _gzip_members(),
    "deflate": zlib.compress(PAYLOAD),
    "deflate (raw)": zlib.compress(PAYLOAD, wbits=-15),
    "br": brotli.compress(PAYLOAD),
    "zstd": zstd.compress(PAYLOAD),
    "zstd (two frames)": _zstd_frames(),
    "identity": PAYLOAD,
    "gzip, br": brotli.compress(gzip.compress(PAYLOAD)),
}


def _decode(encoding: str, chunks: list[bytes], limit: int = 1 << 24) -> bytes:
    decoder = StreamDecoder(encoding.split(" (")[0], limit)
    return b"".join(decoder.decode(c) for c in chunks) + decoder.end()


@pytest.mark.parametrize("encoding", list(ENCODED))
def test_decode_in_pieces(encoding: str) -> None:
    wire = ENCODED[encoding]
    assert _decode(encoding, [wire]) == PAYLOAD
    for size in (1, 2, 7, 1000):
        assert _decode(encoding, [wire[i : i + size] for i in range(0, len(wire), size)]) == PAYLOAD


def test_flushed_gzip_decodes_each_flush_on_arrival() -> None:
    z = zlib.compressobj(wbits=31)
    decoder = StreamDecoder("gzip", 1 << 20)
    for part in (b"data: 1\n\n", b"data: 2\n\n"):
        assert decoder.decode(z.compress(part) + z.flush(zlib.Z_SYNC_FLUSH)) == part
    assert decoder.decode(z.flush()) + decoder.end() == b""


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_bomb_is_bounded(encoding: str) -> None:
    bomb = {
        "gzip": gzip.compress(b"\0" * 4_000_000),
        "deflate": zlib.compress(b"\0" * 4_000_000),
        "br": brotli.compress(b"\0" * 4_000_000),
        "zstd": zstd.compress(b"\0" * 4_000_000),
    }[encoding]
    decoder = StreamDecoder(encoding, 1 << 20)
    with pytest.raises(StreamDecodeError, match="exceeds"):
        decoder.decode(bomb)


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "br", "zstd"])
def test_truncated_or_corrupt(encoding: str) -> None:
    wire = {"gzip": ENCODED["gzip"], "deflate": ENCODED["deflate"], "br": ENCODED["br"],
            "zstd": ENCODED["zstd"]}[encoding]  # fmt: skip
    decoder = StreamDecoder(encoding, 1 << 24)
    decoder.decode(wire[: len(wire) // 2])
    with pytest.raises(StreamDecodeError):
        decoder.end()
    with pytest.raises(StreamDecodeError):
        _decode(encoding, [b"\xff" * 64])


def test_unknown_coding_and_trailing_garbage() -> None:
    with pytest.raises(StreamDecodeError, match="unknown Content-Encoding 'compress'"):
        StreamDecoder("compress", 100)
    with pytest.raises(StreamDecodeError, match="after the end"):
        _decode("deflate", [zlib.compress(b"x") + b"junk"])
    assert _decode("", [b"plain"]) == b"plain"
