"""Edges through the real proxy: oversize and bomb bodies fail closed, WebSocket passes, raw TCP
does not."""

from __future__ import annotations

import gzip
import socket
from collections.abc import Iterator

import pytest
import wsproto
import wsproto.events as ws

from tests.proxy.conftest import SHOP, write_task
from tests.support.upstream import WsUpstream, start_ws_upstream

CHECKOUT = r"shop\.clawbench\.test/api/checkout"


def test_body_over_body_size_limit_is_credited_unverified(launch, tmp_path, curl) -> None:
    run = launch(
        write_task(tmp_path / "task", CHECKOUT, body={"item": "mug"}), body_size_limit="4k"
    )
    big = tmp_path / "big.json"
    big.write_text('{"item": "mug", "pad": "' + "x" * 20000 + '"}')
    blocked = run.curl("--http1.1", "-H", "Content-Type: application/json",
                       "--data-binary", f"@{big}", f"https://{SHOP}/api/checkout")  # fmt: skip
    assert blocked.status == "413"  # mitmproxy's answer; only the error hook saw the flow
    small = run.curl("--data-binary", "@" + str(big), f"https://{SHOP}/api/other")
    assert small.status == "413"  # non-matching oversize: refused too, but not credited
    assert run.upstream.requests == [] and run.upstream.connections == 0
    rec = run.interception()
    assert rec.request.body_unverified and rec.request.body is None and rec.blocked_count == 1
    assert rec.request.body_size == big.stat().st_size
    entry, other = run.log()
    assert entry.matched and entry.blocked and entry.body_size == big.stat().st_size
    assert not other.matched and other.url == f"https://{SHOP}/api/other"


def test_a_non_matching_body_over_body_size_limit_is_logged(launch, tmp_path, curl) -> None:
    """One requests.jsonl line per request (docs/formats.md, "data/requests.jsonl"), the refused
    upload included (the request hook never runs for it, only the error hook)."""
    run = launch(write_task(tmp_path / "task", CHECKOUT), body_size_limit="4k")
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(range(256)) * 40)
    refused = run.curl("--data-binary", f"@{big}", f"https://{SHOP}/api/preview?x=1")
    chunked = run.curl("-H", "Transfer-Encoding: chunked", "--data-binary", f"@{big}",
                       f"http://{SHOP}/api/upload")  # fmt: skip
    assert refused.status == chunked.status == "413"
    assert run.upstream.requests == []
    first, second = run.log()
    assert first.url == f"https://{SHOP}/api/preview?x=1" and not first.blocked
    assert first.body == f"[{big.stat().st_size} bytes, over body_size_limit, not read]"
    assert first.query_params == {"x": "1"} and first.method == "POST"
    assert second.url == f"http://{SHOP}/api/upload" and not second.matched
    assert second.body == "[over body_size_limit, not read]"
    assert not (run.data / "interception.json").exists()


def test_gzip_bomb_on_a_body_filter_fails_closed(launch, tmp_path, curl) -> None:
    run = launch(write_task(tmp_path / "task", CHECKOUT, body={"item": "mug"}))
    bomb = tmp_path / "bomb.gz"
    bomb.write_bytes(gzip.compress(b'{"item": "mug", "pad": "' + b"0" * (80 << 20), 9))
    gz = ["-H", "Content-Encoding: gzip", "-H", "Content-Type: application/json"]
    # Elsewhere the same bytes are forwarded untouched (never decoded on the way).
    passed = run.curl(*gz, "--data-binary", f"@{bomb}", f"https://{SHOP}/api/upload")
    blocked = run.curl(*gz, "--data-binary", f"@{bomb}", f"https://{SHOP}/api/checkout")
    assert passed.status == "200" and blocked.code != 0 and blocked.status == "000"
    (got,) = run.upstream.requests
    assert got.path == "/api/upload" and got.body == bomb.read_bytes()
    assert ("Content-Encoding", "gzip") in got.headers or ("content-encoding", "gzip") in [
        (k.lower(), v) for k, v in got.headers
    ]
    rec = run.interception()
    assert rec.request.body_unverified and rec.request.body is None
    log = run.log()
    assert [e.matched for e in log] == [False, True]
    assert isinstance(log[1].body, str) and log[1].body.startswith("[unevaluable:")


@pytest.fixture(scope="module")
def ws_upstream() -> Iterator[WsUpstream]:
    up = start_ws_upstream()
    yield up
    up.close()


def _recv_events(sock: socket.socket, conn: wsproto.WSConnection, want: int) -> list[ws.Event]:
    out: list[ws.Event] = []
    while len(out) < want:
        data = sock.recv(65536)
        assert data, "proxy closed the WebSocket"
        conn.receive_data(data)
        out += list(conn.events())
    return out


def test_websocket_passes_and_is_logged(launch, tmp_path, ws_upstream: WsUpstream) -> None:
    run = launch(
        write_task(tmp_path / "task", CHECKOUT),
        clawbench_route=[f"ws.clawbench.test=http://127.0.0.1:{ws_upstream.port}"],
    )
    host, port = run.proxy.address()
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(b"CONNECT ws.clawbench.test:80 HTTP/1.1\r\nHost: ws.clawbench.test:80\r\n\r\n")
        assert sock.recv(1024).startswith(b"HTTP/1.1 200")
        conn = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
        sock.sendall(conn.send(ws.Request(host="ws.clawbench.test", target="/live?room=1")))
        (accept,) = _recv_events(sock, conn, 1)
        assert isinstance(accept, ws.AcceptConnection)
        sock.sendall(conn.send(ws.TextMessage("hello")) + conn.send(ws.BytesMessage(b"\x00\x01")))
        echoes = _recv_events(sock, conn, 2)
        sock.sendall(conn.send(ws.CloseConnection(code=1000)))
    assert [e.data for e in echoes] == ["echo:hello", b"echo:\x00\x01"]
    assert ws_upstream.messages[-2:] == ["hello", b"\x00\x01"]
    assert ws_upstream.handshakes[-1][0] == "/live?room=1"
    entry, text, binary = run.log()
    assert entry.websocket and entry.url == "http://ws.clawbench.test/live?room=1"
    assert not entry.matched and entry.method == "GET" and entry.websocket_message is None
    # each message the client sent: a line of its own, parsed and redacted as a body is
    assert (text.url, text.websocket_message, text.body) == (entry.url, "text", {"hello": ""})
    assert (binary.websocket_message, binary.body, binary.body_size) == (
        "binary",
        "base64:AAE=",
        2,
    )


def test_raw_tcp_in_a_tunnel_is_refused(launch, tmp_path, upstream) -> None:
    """Bytes mitmproxy cannot read as HTTP would be relayed unseen; the addon refuses them."""
    run = launch(write_task(tmp_path / "task", CHECKOUT))
    host, port = run.proxy.address()
    with socket.create_connection((host, port), timeout=10) as sock:
        target = f"127.0.0.1:{upstream.port}".encode()
        sock.sendall(b"CONNECT " + target + b" HTTP/1.1\r\nHost: " + target + b"\r\n\r\n")
        assert sock.recv(1024).startswith(b"HTTP/1.1 200")
        sock.sendall(b"\x00\x01 not http, not tls\r\n\r\n")
        # raw TCP relaying is off: the bytes are read as HTTP, and refused as bad HTTP
        reply = sock.recv(1024)
        assert reply.startswith(b"HTTP/1.1 400") and b"clawbench" not in reply
    assert run.upstream.connections == 0
