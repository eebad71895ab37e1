"""Nothing passes the addon unseen (docs/security.md, the proxy's rule 4): raw TCP relaying is off,
so the bytes after a 101 that is not a WebSocket never reach the site; a WebSocket's opening request
is matched like any request and the messages a client sends are logged, redacted and capped."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator

import pytest
import wsproto
import wsproto.events as ws

from proxy_addon.records import build_har
from tests.proxy.conftest import read_head, write_task
from tests.proxy.hooks import make_flow
from tests.support.upstream import WsUpstream, start_ws_upstream

UP = "up.clawbench.test"


class UpgradeServer:
    """Answers any request with 101 Switching Protocols (Upgrade: x-raw), then records every byte
    the connection carries after it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.after: list[bytes] = []
        self.heads: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            head, found, rest = read_head(conn).partition(b"\r\n\r\n")
            if not found:
                return
            self.heads.append(head)
            conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x-raw\r\n"
                         b"Connection: Upgrade\r\n\r\n")  # fmt: skip
            if rest:
                self.after.append(rest)
            conn.settimeout(3)
            try:
                while chunk := conn.recv(4096):
                    self.after.append(chunk)
            except OSError:
                pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def upgrade_server() -> Iterator[UpgradeServer]:
    server = UpgradeServer()
    yield server
    server.close()


def test_nothing_passes_after_a_101_that_is_not_a_websocket(
    launch, tmp_path, upgrade_server: UpgradeServer
) -> None:
    pattern = rf"{UP.replace('.', chr(92) + '.')}/api/checkout"
    run = launch(write_task(tmp_path / "task", pattern),
                 clawbench_route=[f"{UP}=http://127.0.0.1:{upgrade_server.port}"])  # fmt: skip
    host, port = run.proxy.address()
    commit = (
        b"POST /api/checkout HTTP/1.1\r\nHost: "
        + UP.encode()
        + b"\r\nContent-Length: 8\r\n\r\nitem=mug"
    )
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(f"GET http://{UP}/live HTTP/1.1\r\nHost: {UP}\r\nUpgrade: x-raw\r\n"
                     "Connection: Upgrade\r\n\r\n".encode())  # fmt: skip
        reply = sock.recv(4096)
        assert reply.startswith(b"HTTP/1.1 101")
        try:
            sock.sendall(commit)  # written into the pipe the 101 opened
            while sock.recv(4096):
                pass
        except OSError:
            pass
    assert len(upgrade_server.heads) == 1  # the upgrade request itself was seen and logged
    assert b"".join(upgrade_server.after) == b""  # nothing after it reached the site
    (entry,) = run.log()
    assert entry.url == f"http://{UP}/live" and not entry.matched


def test_raw_tcp_relaying_is_off_and_stays_off(arm) -> None:
    armed = arm()
    assert armed.tctx.options.rawtcp is False
    armed.addon.running()
    from mitmproxy import exceptions

    with pytest.raises(exceptions.OptionsError, match="rawtcp is on"):
        armed.tctx.configure(armed.addon, rawtcp=True)
    assert armed.tctx.options.rawtcp is False


@pytest.fixture(scope="module")
def ws_upstream() -> Iterator[WsUpstream]:
    up = start_ws_upstream()
    yield up
    up.close()


def _handshake(run, target: str) -> tuple[socket.socket, wsproto.WSConnection, ws.Event | None]:
    host, port = run.proxy.address()
    sock = socket.create_connection((host, port), timeout=10)
    sock.sendall(b"CONNECT ws.clawbench.test:80 HTTP/1.1\r\nHost: ws.clawbench.test:80\r\n\r\n")
    assert sock.recv(1024).startswith(b"HTTP/1.1 200")
    conn = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
    sock.sendall(conn.send(ws.Request(host="ws.clawbench.test", target=target)))
    data = sock.recv(65536)
    if not data:
        return sock, conn, None
    conn.receive_data(data)
    return sock, conn, next(iter(conn.events()), None)


def test_a_websocket_to_the_commit_url_is_blocked(launch, tmp_path, ws_upstream) -> None:
    task = write_task(tmp_path / "task", r"ws\.clawbench\.test/live", "GET")
    run = launch(task, clawbench_route=[f"ws.clawbench.test=http://127.0.0.1:{ws_upstream.port}"])
    before = len(ws_upstream.handshakes)
    sock, _, event = _handshake(run, "/live?room=1")
    sock.close()
    assert event is None and len(ws_upstream.handshakes) == before
    assert run.interception().request.url == "http://ws.clawbench.test/live?room=1"


def test_websocket_messages_are_logged_redacted_and_capped(launch, tmp_path, ws_upstream) -> None:
    task = write_task(tmp_path / "task", r"shop\.clawbench\.test/api/checkout")
    run = launch(task, clawbench_route=[f"ws.clawbench.test=http://127.0.0.1:{ws_upstream.port}"])
    sock, conn, event = _handshake(run, "/chat")
    assert isinstance(event, ws.AcceptConnection)
    secret = json.dumps({"token": "tok-5ec12e7", "text": "hi"})
    big = "x" * 200_000
    with sock:
        sock.sendall(conn.send(ws.TextMessage(secret)) + conn.send(ws.TextMessage(big)))
        got = b""
        while got.count(b"echo:") < 2:
            got += sock.recv(1 << 20)
        sock.sendall(conn.send(ws.CloseConnection(code=1000)))
    _, first, second = run.log()
    assert first.websocket_message == "text" and first.body == {"token": "[REDACTED]", "text": "hi"}
    assert second.body_size == 200_000 and len(second.body) < 70_000
    assert "tok-5ec12e7" not in run.raw_log()
    # traffic.har: the messages ride on their opening request's entry, as DevTools writes them
    (opening,) = build_har(run.data.parent).log.entries
    sent = opening.webSocketMessages
    assert opening.request.url == "http://ws.clawbench.test/chat" and len(sent) == 2
    assert json.loads(sent[0].data) == {"token": "[REDACTED]", "text": "hi"}
    assert sent[0].opcode == 1 and sent[0].type == "send" and len(sent[1].data) < 70_000


def test_server_messages_are_not_the_agents_and_are_not_logged(arm) -> None:
    from mitmproxy.test import tflow

    armed = arm()
    flow = make_flow("shop.clawbench.test", 80, "/chat", method="GET")
    armed.send(flow)
    flow.websocket = tflow.twebsocketflow().websocket
    assert flow.websocket is not None
    for message in flow.websocket.messages:
        flow.websocket.messages = [message]
        armed.addon.websocket_message(flow)
    lines = armed.log()
    client = [m for m in tflow.twebsocketflow().websocket.messages if m.from_client]
    assert len(lines) == 1 + len(client)
