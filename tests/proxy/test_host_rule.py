"""The host rule (docs/security.md, the proxy's rules 1 and 2) through the real proxy: a commit sent
under a name other than the one it is delivered to never reaches the site. Each case is sent with
curl or a raw socket to a real mitmdump + addon; the loopback upstream (the shop, by
clawbench_route) records what it receives. A request is either matched under one of its names and
blocked, or refused."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Callable

import pytest

from tests.proxy.conftest import SHOP, Run, read_head, write_task
from tests.proxy.hooks import SHOP as HOOK_SHOP
from tests.proxy.hooks import make_flow

CHECKOUT = r"shop\.clawbench\.test/api/checkout"
BODY = b"item=mug"


def exchange(
    run: Run,
    request: bytes,
    connect: str | None = None,
    tls: bool = False,
    sni: str | None = None,
) -> bytes:
    """Send raw request bytes through the proxy (after CONNECT, and TLS with this SNI, if
    asked); the reply bytes, b"" when the proxy cut the connection."""
    host, port = run.proxy.address()
    sock: socket.socket = socket.create_connection((host, port), timeout=10)
    try:
        if connect:
            sock.sendall(f"CONNECT {connect} HTTP/1.1\r\nHost: {connect}\r\n\r\n".encode())
            assert read_head(sock).startswith(b"HTTP/1.1 200")
        if tls:
            context = ssl.create_default_context(cafile=str(run.proxy.ca_cert))
            context.check_hostname = False  # the SNI is the point here, not the certificate
            context.verify_mode = ssl.CERT_NONE
            sock = context.wrap_socket(sock, server_hostname=sni)
        sock.sendall(request)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
        return reply
    except (ConnectionResetError, ssl.SSLError):
        return b""
    finally:
        sock.close()


def post(target: str, *headers: str, version: str = "HTTP/1.1") -> bytes:
    """A raw POST of BODY with these header lines (no Host unless given)."""
    form = "Content-Type: application/x-www-form-urlencoded"
    lines = [f"POST {target} {version}", *headers, form, f"Content-Length: {len(BODY)}"]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + BODY


Case = Callable[[Run, int], bytes]

BLOCKED: dict[str, Case] = {
    # The port trick: Host names :8443 on a connection to :443 (curl -H 'Host: ...:8443').
    "Host with another port": lambda run, port: exchange(
        run, post("/api/checkout", f"Host: {SHOP}:8443"), f"{SHOP}:443", tls=True, sni=SHOP
    ),
    # CONNECT to the shop's own address, no name at all: matched as the host it leads to.
    "CONNECT to the address, no Host": lambda run, port: exchange(
        run, post("/api/checkout", version="HTTP/1.0"), f"127.0.0.1:{port}"
    ),
    "absolute-form decimal address, no Host": lambda run, port: exchange(
        run, post(f"http://2130706433:{port}/api/checkout", version="HTTP/1.0")
    ),
    "absolute-form v4-mapped v6 address, no Host": lambda run, port: exchange(
        run, post(f"http://[::ffff:127.0.0.1]:{port}/api/checkout", version="HTTP/1.0")
    ),
    "TLS without SNI, no Host": lambda run, port: exchange(
        run, post("/api/checkout", version="HTTP/1.0"), f"{SHOP}:443", tls=True
    ),
}

REFUSED: dict[str, Case] = {
    "CONNECT to the address, Host elsewhere": lambda run, port: exchange(
        run, post("/api/checkout", f"Host: other.invalid:{port}"), f"127.0.0.1:{port}"
    ),
    "absolute-form decimal address, Host elsewhere": lambda run, port: exchange(
        run, post(f"http://2130706433:{port}/api/checkout", "Host: other.invalid")
    ),
    "absolute-form v4-mapped address, Host elsewhere": lambda run, port: exchange(
        run, post(f"http://[::ffff:127.0.0.1]:{port}/api/checkout", "Host: other.invalid")
    ),
    "a second Host header": lambda run, port: exchange(
        run, post("/api/checkout", f"Host: {SHOP}", "Host: x.invalid"), f"{SHOP}:443", True, SHOP
    ),
    "SNI names another host": lambda run, port: exchange(
        run, post("/api/checkout", f"Host: {SHOP}"), f"{SHOP}:443", tls=True, sni="other.invalid"
    ),
    "Host names another host": lambda run, port: exchange(
        run, post("/api/checkout", "Host: other.invalid"), f"{SHOP}:443", tls=True, sni=SHOP
    ),
    "CONNECT elsewhere, SNI and Host the shop": lambda run, port: exchange(
        run, post("/api/checkout", f"Host: {SHOP}"), "other.invalid:443", tls=True, sni=SHOP
    ),
}


@pytest.mark.parametrize("case", sorted(BLOCKED))
def test_a_commit_under_any_name_it_carries_is_blocked(launch, tmp_path, case: str) -> None:
    run = launch(write_task(tmp_path / "task", CHECKOUT))
    BLOCKED[case](run, run.upstream.port)
    assert run.received("/api/checkout") == []
    assert run.upstream.connections == 0
    rec = run.interception()
    assert rec.blocked_count == 1 and rec.request.body == {"item": "mug"}
    (entry,) = run.log()
    assert entry.matched and entry.blocked and entry.refused is None


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_commit_whose_names_disagree_is_refused(launch, tmp_path, case: str) -> None:
    run = launch(write_task(tmp_path / "task", CHECKOUT))
    reply = REFUSED[case](run, run.upstream.port)
    assert reply == b""  # cut, as a block is: nothing tells it apart
    assert run.received("/api/checkout") == [] and run.upstream.connections == 0
    assert not (run.data / "interception.json").exists()  # refused is never credited
    (entry,) = run.log()
    assert entry.refused and not entry.blocked
    assert entry.body == {"item": "mug"}  # logged like any request


def test_names_that_lead_to_the_same_place_pass(launch, tmp_path) -> None:
    """The rule refuses disagreement, not variety: the shop by name and by address, and
    localhost for 127.0.0.1 (an allowed private destination), are forwarded."""
    run = launch(write_task(tmp_path / "task", CHECKOUT), clawbench_allow_private=["127.0.0.1"])
    port = run.upstream.port
    ok = exchange(run, post("/api/cart", f"Host: localhost:{port}"), f"127.0.0.1:{port}")
    also = exchange(run, post("/api/cart", f"Host: {SHOP}"), f"{SHOP}:443", tls=True, sni=SHOP)
    assert ok.startswith(b"HTTP/1.1 200") and also.startswith(b"HTTP/1.1 200")
    assert [(r.path, r.host) for r in run.upstream.requests] == [
        ("/api/cart", f"localhost:{port}"),
        ("/api/cart", SHOP),
    ]
    assert [e.refused for e in run.log()] == [None, None]


# Transparent mode (the sandbox's path for the agent's direct traffic) needs a redirecting
# firewall, so it is driven through the hooks: request.host is then the original destination
# address, which is not a name the request gives. The shop is routed to SITE.

TRANSPARENT: list[tuple[str, list[tuple[str, str]], str | None, str]] = [
    # (Host headers, SNI, outcome) of a request to the shop's address
    ("address, Host the shop", [("Host", HOOK_SHOP)], None, "blocked"),
    ("address, Host the address", [("Host", "203.0.113.7")], None, "blocked"),
    ("address, no name", [], None, "refused: it names no host"),
    ("address, Host elsewhere", [("Host", "other.invalid")], None, "refused: Host other.invalid"),
    ("address, SNI elsewhere", [("Host", HOOK_SHOP)], "other.invalid", "refused: its names"),
    ("address, two Hosts", [("Host", HOOK_SHOP), ("Host", "a.invalid")], None, "refused: its"),
    ("address, Host with a comma", [("Host", f"{HOOK_SHOP}, a.invalid")], None, "refused: its"),
]


@pytest.mark.parametrize(("case", "headers", "sni", "outcome"), TRANSPARENT)
def test_transparent_requests_go_only_where_their_names_lead(
    arm, case: str, headers: list[tuple[str, str]], sni: str | None, outcome: str
) -> None:
    armed = arm()
    flow = make_flow("203.0.113.7", 80, headers=headers, sni=sni, mode="transparent")
    armed.send(flow)
    assert flow.error is not None and flow.response is None, case  # cut either way
    (entry,) = armed.log()
    if outcome == "blocked":
        assert entry.blocked and armed.interception().blocked_count == 1
        assert entry.url == f"http://{HOOK_SHOP}/api/checkout"
    else:
        assert entry.refused and entry.refused.startswith(outcome.removeprefix("refused: "))
        assert not (armed.data / "interception.json").exists()


def test_a_transparent_request_to_an_unrouted_private_address_is_refused(arm) -> None:
    armed = arm(clawbench_route=[])
    flow = armed.send(make_flow("10.1.2.3", 443, headers=[("Host", "10.1.2.3")], scheme="https",
                                mode="transparent"))  # fmt: skip
    assert flow.error is not None
    (entry,) = armed.log()
    assert entry.refused == (
        "its destination 10.1.2.3 is private (allow it with clawbench_allow_private)"
    )


def test_a_commit_to_a_name_that_does_not_resolve_is_blocked_and_credited(launch, tmp_path) -> None:
    """A block needs no connection: the commit to a host with no address is the commit
    (interception.json says the host did not resolve); any other request there stays refused."""
    run = launch(write_task(tmp_path / "task", r"shop\.invalid/api/checkout"))
    host = "shop.invalid"
    other = exchange(run, post("/api/cart", f"Host: {host}"), f"{host}:443", tls=True, sni=host)
    commit = exchange(run, post("/api/checkout", f"Host: {host}"), f"{host}:443", True, host)
    assert other == commit == b""  # cut either way
    rec = run.interception()
    assert rec.request.host_unresolved and rec.request.url == f"https://{host}/api/checkout"
    assert rec.request.body == {"item": "mug"} and rec.blocked_count == 1
    cart, checkout = run.log()
    assert cart.refused == f"its destination {host} has no address" and not cart.blocked
    assert checkout.blocked and checkout.matched and checkout.refused is None
    # names that disagree stay refused: the Host leads nowhere the CONNECT target does
    run = launch(write_task(tmp_path / "task2", r"shop\.invalid/api/checkout"), name="data2")
    exchange(run, post("/api/checkout", f"Host: {host}"), "elsewhere.invalid:443", True, host)
    assert not (run.data / "interception.json").exists()
    (entry,) = run.log()
    assert entry.refused and entry.refused.startswith("Host shop.invalid leads to no address")
