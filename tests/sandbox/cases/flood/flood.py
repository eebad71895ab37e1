"""An agent that floods the proxy with requests it refuses at once (a loopback target), each as
large as the agent can make it: 63 headers of 2 KB, a 60 KB query, a 64 KB body. Then small
ones, as fast as it can, until it has sent N or S seconds have passed.

Usage: python3 flood.py N S
"""

from __future__ import annotations

import socket
import sys
import threading
import time

PROXY = ("127.0.0.1", 8080)
HEADERS = "".join(f"X-Flood-{i}: {'h' * 2000}\r\n" for i in range(63))
QUERY = "&".join(f"q{i}={'v' * 50}" for i in range(1100))
BODY = b'{"pad": "' + b"b" * 65500 + b'"}'


def send(big: bool) -> None:
    body = BODY if big else b"{}"
    head = (
        f"POST http://127.0.0.1:9/flood?{QUERY if big else 'q=1'} HTTP/1.1\r\n"
        f"Host: 127.0.0.1:9\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n{HEADERS if big else ''}Connection: close\r\n\r\n"
    )
    try:
        with socket.create_connection(PROXY, timeout=10) as s:
            s.sendall(head.encode() + body)
            s.recv(100)
    except OSError:
        pass  # refused: the proxy closes the connection


def main() -> None:
    total, seconds = int(sys.argv[1]), float(sys.argv[2])
    deadline = time.monotonic() + seconds
    sent = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal sent
        while time.monotonic() < deadline:
            with lock:
                if sent >= total:
                    return
                sent += 1
                big = sent <= 40
            send(big)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(f"flood: sent {sent}", flush=True)


if __name__ == "__main__":
    main()
