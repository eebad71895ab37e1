"""The files a real mitmdump + addon writes: no secret the agent sent, and atomic rewrites."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import resource
import socket
import threading
import time

import httpx
from pydantic import ValidationError

from proxy_addon.records import Interception
from tests.proxy.conftest import SHOP, secrets_in, write_task

CHECKOUT = r"shop\.clawbench\.test/api/checkout"
SENT_SESSION, SENT_KEY, SENT_TOKEN, SENT_PASSWORD = "sess-e41d9a", "key-7c20bf", "t-93f1", "pw-5e0a"


def test_secret_filter_keys_leave_no_sent_value_in_the_data_dir(launch, tmp_path, curl) -> None:
    """session_id (body) and api_key (params) filters: near misses name the key, not the value."""
    task = write_task(
        tmp_path / "task",
        CHECKOUT,
        body={"session_id": "sess-want"},
        params={"api_key": "key-want"},
    )
    run = launch(task)
    json_type = ["-H", "Content-Type: application/json"]
    near = [
        run.curl("--http2", *json_type, "--data-binary", json.dumps({"session_id": SENT_SESSION}),
                 f"https://{SHOP}/api/checkout?api_key={SENT_KEY}"),
        run.curl("--http1.1", "-d", f"session_id={SENT_SESSION}&item=mug",
                 f"https://{SHOP}/api/checkout?api_key=key-want"),
        run.curl("-d", "session_id=sess-want", f"http://{SHOP}/api/checkout?api_key={SENT_KEY}"),
        run.curl("-d", f"session_id={SENT_SESSION}",
                 f"https://{SHOP}/api/cart?api_key={SENT_KEY}&token={SENT_TOKEN}"),
    ]  # fmt: skip
    assert [r.status for r in near] == ["200"] * 4  # near misses are forwarded untouched
    commit = run.curl(
        "--http2", *json_type, "--data-binary",
        json.dumps({"session_id": "sess-want", "password": SENT_PASSWORD}),
        f"https://{SHOP}/api/checkout?api_key=key-want&token={SENT_TOKEN}",
    )  # fmt: skip
    assert commit.code != 0 and commit.status == "000"

    log = run.log()
    assert [e.matched for e in log] == [False, False, False, False, True]
    body_why = 'body: key \'session_id\' expected "sess-want", got "[REDACTED]"'
    params_why = 'params: key \'api_key\' expected "key-want", got "[REDACTED]"'
    assert [e.near_miss for e in log[:3]] == [[body_why, params_why], [body_why], [params_why]]
    assert log[3].near_miss and "api_key=%5BREDACTED%5D&token=%5BREDACTED%5D" in log[3].near_miss[0]
    rec = run.interception()
    assert rec.request.body == {"session_id": "[REDACTED]", "password": "[REDACTED]"}
    sent = [SENT_SESSION, SENT_KEY, SENT_TOKEN, SENT_PASSWORD]
    assert secrets_in(run.data, sent) == []
    assert not [s for s in sent if s in run.proxy.log_path.read_text()]  # mitmdump's own output


def test_interception_json_is_never_seen_half_written(launch, tmp_path) -> None:
    """A reader polling interception.json while every blocked request rewrites it."""
    run = launch(write_task(tmp_path / "task", CHECKOUT), clawbench_block_mode="respond")
    path = run.data / "interception.json"
    n = 150
    counts: list[int] = []
    bad: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            try:
                raw = path.read_bytes()
            except FileNotFoundError:
                if counts:  # os.replace never lets the file vanish once it exists
                    bad.append("vanished")
                continue
            try:
                counts.append(Interception.model_validate_json(raw).blocked_count)
            except ValidationError as e:
                bad.append(f"{len(raw)} bytes: {e.errors()[0]['msg']}")

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    # A large record (the first request's body is kept), so a torn write would show.
    big = {"item": "mug", "note": "x" * 200_000}
    try:
        with httpx.Client(proxy=run.proxy.url, timeout=10) as client:
            for i in range(n):
                got = client.post(f"http://{SHOP}/api/checkout", json=big if i == 0 else {"i": i})
                assert got.status_code == 403
    finally:
        deadline = time.monotonic() + 10
        while (not counts or counts[-1] < n) and time.monotonic() < deadline:
            time.sleep(0.01)
        stop.set()
        reader.join(10)
    assert bad == []
    assert counts == sorted(counts) and counts[-1] == n
    assert len(set(counts)) > 10, "the reader saw too few rewrites to prove anything"
    assert run.interception().request.body == big
    assert run.upstream.requests == []
    assert sorted(p.name for p in run.data.iterdir()) == [
        ".proxy-ready",
        ".reserve",  # the space kept for the block's record while the proxy runs
        ".stop-requested",
        "interception.json",
        "requests-summary.json",
        "requests.jsonl",
    ]  # no temp file left behind


def test_a_restarted_proxy_keeps_the_first_credited_match(launch, tmp_path) -> None:
    """A second addon process on the same data dir (a proxy restart) used to overwrite the
    credited request and reset blocked_count; the reference never overwrites it either."""
    task = write_task(tmp_path / "task", CHECKOUT)
    first = launch(task)
    assert first.curl("-d", "first=1", f"https://{SHOP}/api/checkout").code != 0
    before = first.interception()
    first.proxy.stop()
    again = launch(task)  # same data dir
    assert again.curl("-d", "second=2", f"https://{SHOP}/api/checkout").code != 0
    after = again.interception()
    assert after.request == before.request and after.request.body == {"first": "1"}
    assert after.intercepted_at == before.intercepted_at and after.blocked_count == 2
    assert [e.body for e in again.log()] == [{"first": "1"}, {"second": "2"}]
    assert again.upstream.requests == []
    again.proxy.stop()
    # the data dir reused for another task: that record is not this run's match
    other = launch(write_task(tmp_path / "other", r"shop\.clawbench\.test/api/order"))
    assert other.curl("-d", "third=3", f"https://{SHOP}/api/order").code != 0
    replaced = other.interception()
    assert replaced.request.body == {"third": "3"} and replaced.blocked_count == 1


def _open(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=5)


def _send(sock: socket.socket, path: str, body: bytes = b"") -> int:
    """A plain-HTTP request on an open connection (POST with a body); the reply's status
    (0 when the connection was closed)."""
    method = b"POST" if body else b"GET"
    sock.sendall(
        method + b" http://" + SHOP.encode() + path.encode() + b" HTTP/1.1\r\nHost: "
        + SHOP.encode() + b"\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )  # fmt: skip
    reply = http.client.HTTPResponse(sock)
    try:
        reply.begin()
        reply.read()
    except (OSError, http.client.HTTPException):
        return 0
    return reply.status


def test_a_block_is_recorded_in_full_when_the_agent_used_up_the_proxys_descriptors(
    launch, tmp_path
) -> None:
    """Every connection the agent opens holds one of the proxy's descriptors: with the table
    full, interception.json was written but .stop-requested was not, so the agent ran on."""
    run = launch(write_task(tmp_path / "task", CHECKOUT), clawbench_block_mode="respond")
    pid = run.proxy.proc.pid
    agent = _open(run.proxy.address()[1])  # accepted while the proxy still has room
    assert _send(agent, "/products") == 200  # a page first, as an agent browses
    in_use = len(os.listdir(f"/proc/{pid}/fd"))
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (in_use + 4, in_use + 4))
    fillers = []
    for _ in range(12):  # the table fills; later connections wait in the backlog
        with contextlib.suppress(OSError):
            fillers.append(_open(run.proxy.address()[1]))
    time.sleep(0.5)
    assert len(os.listdir(f"/proc/{pid}/fd")) >= in_use + 3  # full, or one short of it
    try:
        assert _send(agent, "/api/checkout", b"item=mug") == 403
        deadline = time.monotonic() + 5
        while not (run.data / ".stop-requested").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (run.data / ".stop-requested").exists()
        assert run.interception().request.body == {"item": "mug"}
        assert [e.matched for e in run.log()] == [False, True]
        assert [r.path for r in run.upstream.requests] == ["/products"]
        assert run.proxy.proc.poll() is None  # recorded in full: the proxy runs on
    finally:
        for s in [agent, *fillers]:
            s.close()


def test_a_block_that_cannot_be_recorded_stops_the_proxy(launch, tmp_path) -> None:
    """Blocked but unrecorded, the run would be scored as if the agent never committed: the
    proxy stops instead, so the run ends proxy_failed (an infra failure, re-run by --resume)."""
    run = launch(write_task(tmp_path / "task", CHECKOUT), clawbench_block_mode="respond")
    (run.data / "interception.json").mkdir()  # any write failure: a full disk, an I/O error
    with _open(run.proxy.address()[1]) as agent:
        _send(agent, "/api/checkout", b"item=mug")
    assert run.proxy.proc.wait(10) is not None
    assert run.upstream.requests == []  # blocked all the same
    assert "the block was not recorded" in run.proxy.log_path.read_text()
    assert not (run.data / ".stop-requested").exists()
