"""Server equivalence (docs/security.md, the proxy's rule 5): requests a real framework routes to
the commit handler with the filtered values, though the reference's exact rule misses them. Each is
sent first straight to a Flask site (its handler runs: the equivalence is real), then through the
proxy to the same site (blocked, the handler never runs, interception.json names it)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.proxy.conftest import SHOP, write_task
from tests.proxy.flask_site import FlaskSite, start_flask_site

FORM = "application/x-www-form-urlencoded"


def _multipart(first: str, last: str) -> tuple[str, bytes]:
    """A body that reads as item=cup with boundary `first` and item=mug with `last`."""
    part = 'Content-Disposition: form-data; name="item"\r\n\r\n'
    body = (
        f"--{last}\r\n{part}mug\r\n--{last}--\r\n--{first}\r\n{part}cup\r\n--{first}--\r\n"
    ).encode()
    return f"multipart/form-data; boundary={first}; boundary={last}", body


MULTIPART_TYPE, MULTIPART_BODY = _multipart("AAA", "BBB")
PART_TYPE = "multipart/form-data; boundary=XYZ"
WERKZEUG = (
    "multipart part names read as Werkzeug (Flask) reads them: the last name=, name* decoded, "
    "quoted-pairs undone"
)


def _part(disposition: str) -> bytes:
    """A one-part body whose part Flask reads as item=mug and Python's email package not."""
    return f"--XYZ\r\nContent-Disposition: {disposition}\r\n\r\nmug\r\n--XYZ--\r\n".encode()


def _part_case(disposition: str) -> tuple[Any, ...]:
    return (
        ("/api/checkout", "POST", {"item": "mug"}, None), "POST", "/api/checkout", [],
        PART_TYPE, _part(disposition), ("checkout", "POST", "mug"), WERKZEUG,
    )  # fmt: skip


# (task, method, target, extra headers, content type, body, handler and value it reads,
#  the equivalence interception.json names)
CASES = {
    "HEAD for GET": (
        ("/api/item", "GET", None, {"id": "42"}), "HEAD", "/api/item?id=42", [], None, b"",
        ("item", "HEAD", "42"), "HEAD for GET",
    ),
    "a query field sent twice": (
        ("/api/item", "GET", None, {"id": "42"}), "GET", "/api/item?id=42&id=7", [], None, b"",
        ("item", "GET", "42"), "params.id sent 2 times, the first one read",
    ),
    "X-HTTP-Method-Override": (
        ("/api/cart", "PUT", {"item": "mug"}, None), "POST", "/api/cart",
        ["X-HTTP-Method-Override: PUT"], FORM, b"item=mug",
        ("cart", "PUT", "mug"), "method override: x-http-method-override: PUT",
    ),
    "X-Method-Override": (
        ("/api/cart", "PUT", {"item": "mug"}, None), "POST", "/api/cart",
        ["X-Method-Override: put"], FORM, b"item=mug",
        ("cart", "PUT", "mug"), "method override: x-method-override: PUT",
    ),
    "a form field sent twice": (
        ("/api/checkout", "POST", {"item": "mug"}, None), "POST", "/api/checkout", [], FORM,
        b"item=mug&item=cup", ("checkout", "POST", "mug"),
        "body.item sent 2 times, the first one read",
    ),
    "a body field moved to the query": (
        ("/api/checkout", "POST", {"item": "mug"}, None), "POST", "/api/checkout?item=mug", [],
        FORM, b"qty=1", ("checkout", "POST", "mug"), "body.item read from the query",
    ),
    "two boundary= parameters": (
        ("/api/checkout", "POST", {"item": "mug"}, None), "POST", "/api/checkout", [],
        MULTIPART_TYPE, MULTIPART_BODY, ("checkout", "POST", "mug"),
        "multipart read with boundary=BBB",
    ),
    "a part name given twice": _part_case('form-data; name="other"; name="item"'),
    "a part name in other case": _part_case('form-data; NAME="other"; Name="item"'),
    "a part's name*": _part_case("form-data; name=\"other\"; name*=UTF-8''item"),
    "a quoted-pair in a part name": _part_case('form-data; name="it\\em"'),
    "a filename= Werkzeug does not read": _part_case('form-data; name="item"; filename ="x"'),
    "%2F in the path": (
        ("/api/checkout", "POST", {"item": "mug"}, None), "POST", "/api%2Fcheckout", [], FORM,
        b"item=mug", ("checkout", "POST", "mug"), "%2F in the path read as /",
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def site() -> Iterator[FlaskSite]:
    up = start_flask_site()
    yield up
    up.close()


def _request(method: str, target: str, headers: list[str], ctype: str | None, body: bytes) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"Host: {SHOP}", *headers, "Connection: close"]
    if ctype:
        lines.append(f"Content-Type: {ctype}")
    if body or method in ("POST", "PUT"):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _send(address: tuple[str, int], raw: bytes) -> bytes:
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(raw)
        reply = b""
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except ConnectionResetError:
            pass
        return reply


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_the_framework_routes_to_the_commit_is_blocked(
    launch, tmp_path, site: FlaskSite, case: str
) -> None:
    (path, want, body_filter, params), method, target, headers, ctype, body, ran, named = CASES[
        case
    ]
    raw = _request(method, target, headers, ctype, body)
    # Straight to the site: Flask runs the commit's handler, with the filtered value.
    site.ran.clear()
    assert _send((site.host, site.port), raw).startswith(b"HTTP/1.1 200")
    assert site.ran == [ran]
    # Through the proxy (the same bytes, in absolute form): blocked before the site sees it.
    site.ran.clear()
    pattern = rf"shop\.clawbench\.test{path}"
    task = write_task(tmp_path / "task", pattern, want, body=body_filter, params=params)
    run = launch(task, clawbench_route=[f"{SHOP}={site.url}"])
    absolute = raw.replace(
        f"{method} {target} ".encode(), f"{method} http://{SHOP}{target} ".encode(), 1
    )
    assert _send(run.proxy.address(), absolute) == b""  # cut
    assert site.ran == []
    rec = run.interception()
    assert rec.request.equivalence == named and rec.request.method == method
    (entry,) = run.log()
    assert entry.blocked and entry.equivalence == named


def test_what_the_framework_does_not_route_to_the_commit_passes(
    launch, tmp_path, site: FlaskSite
) -> None:
    """The equivalences stop where the server's routing does: a GET overridden to PUT, a
    field whose every value is wrong, another path."""
    task = write_task(tmp_path / "task", r"shop\.clawbench\.test/api/cart", "PUT",
                      body={"item": "mug"})  # fmt: skip
    run = launch(task, clawbench_route=[f"{SHOP}={site.url}"])
    site.ran.clear()
    sent = [
        _request(
            "POST",
            f"http://{SHOP}/api/cart",
            ["X-HTTP-Method-Override: PUT"],
            FORM,
            b"item=cup&item=lamp&item=mug&item=pen",
        ),
        _request(
            "POST", f"http://{SHOP}/api/other", ["X-HTTP-Method-Override: PATCH"], FORM, b"item=mug"
        ),
    ]
    for raw in sent:
        assert _send(run.proxy.address(), raw).startswith(b"HTTP/1.1 ")
    assert [r[0] for r in site.ran] == ["cart"] and not (run.data / "interception.json").exists()
