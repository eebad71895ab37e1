"""A PNG decoder in the standard library (zlib): enough to tell a blank screenshot from a page."""

from __future__ import annotations

import struct
import zlib

_CHANNELS = {2: 3, 6: 4, 0: 1, 4: 2}  # colour type -> bytes per pixel at 8 bits per channel


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(png: bytes, max_rows: int | None = None) -> tuple[int, int, int, list[bytes]]:
    """(width, height, bytes per pixel, rows of pixel bytes) of an 8-bit, non-interlaced PNG;
    max_rows: decode only the top rows (a row depends on the rows above it only)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = bpp = 0
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", data)
            assert depth == 8 and interlace == 0 and colour in _CHANNELS, (depth, colour)
            bpp = _CHANNELS[colour]
        elif kind == b"IDAT":
            idat += data
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(min(height, max_rows or height)):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            pred = (0, a, b, (a + b) // 2, _paeth(a, b, c))[kind]
            line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def colours(png: bytes, step: int = 7, max_rows: int = 600) -> set[bytes]:
    """The distinct pixel values of every step-th pixel of every step-th row (top rows only)."""
    width, _height, bpp, rows = decode(png, max_rows)
    return {row[x * bpp : (x + 1) * bpp] for row in rows[::step] for x in range(0, width, step)}


def encode(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A PNG of one colour (8-bit RGB), for a screenshot a harness saved."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


__all__ = ["colours", "decode", "encode"]
