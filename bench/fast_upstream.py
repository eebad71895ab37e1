"""A fast single-process HTTP/1.1 upstream for benchmarks: fixed reply, streams and hashes bodies.

Usage: python bench/fast_upstream.py PORT_FILE   (writes its port to PORT_FILE, serves forever)
GET /__stats returns {"requests": N, "bytes": B, "sha256": <last body>, "paths": {...}}.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys

STATS = {"requests": 0, "bytes": 0, "sha256": None, "matching": 0}
REPLY = (
    b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}'
)


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            _method, target, _ = lines[0].split(b" ", 2)
            headers = {}
            for line in lines[1:]:
                if b":" in line:
                    k, v = line.split(b":", 1)
                    headers[k.strip().lower()] = v.strip()
            length = int(headers.get(b"content-length", b"0"))
            digest = hashlib.sha256()
            remaining = length
            while remaining:
                chunk = await reader.read(min(remaining, 1 << 20))
                if not chunk:
                    return
                digest.update(chunk)
                remaining -= len(chunk)
            if target.endswith(b"/__stats"):
                body = json.dumps(STATS).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                    + str(len(body)).encode()
                    + b"\r\n\r\n"
                    + body
                )
            else:
                STATS["requests"] += 1
                STATS["bytes"] += length
                if b"/checkout" in target:
                    STATS["matching"] += 1
                if length:
                    STATS["sha256"] = digest.hexdigest()
                writer.write(REPLY)
            await writer.drain()
            if headers.get(b"connection", b"").lower() == b"close":
                break
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def main(port_file: str) -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
    with open(port_file, "w") as f:
        f.write(str(server.sockets[0].getsockname()[1]))
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
