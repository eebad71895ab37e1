"""curl and httpx through a real mitmdump + addon in front of a real upstream.

HTTP/1.1 and HTTP/2 over TLS (the proxy's CA trusted with --cacert / verify=), plain HTTP,
non-canonical URLs, secrets, near misses, respond and error block modes.
"""

from __future__ import annotations

import json
import ssl

import httpx
import pytest

from tests.proxy.conftest import SHOP, end_to_end, write_task

CHECKOUT = r"shop\.clawbench\.test/api/checkout"
SECRET_KEY_VALUE = "key-5aa1c0de"
SECRET_BEARER = "Bearer tok-77e1"
SECRET_COOKIE = "sid=cookie-9f00d"
SECRET_PASSWORD = "pw-31337"


def _no_secret(text: str) -> None:
    for secret in (SECRET_KEY_VALUE, "tok-77e1", "cookie-9f00d", SECRET_PASSWORD):
        assert secret not in text


def test_curl_http1_http2_tls_blocks_counts_and_redacts(launch, tmp_path, curl) -> None:
    task = write_task(tmp_path / "task", CHECKOUT, "POST", params={"step": "pay"})
    run = launch(task)
    secrets = ["-H", f"Authorization: {SECRET_BEARER}", "-H", f"Cookie: {SECRET_COOKIE}"]

    # Non-matching traffic first: forwarded untouched over HTTP/1.1+TLS, HTTP/2+TLS, plain HTTP.
    payload = json.dumps({"item": "mug", "password": SECRET_PASSWORD, "n": [1, 2]})
    h1 = run.curl(
        "--http1.1", "-H", "Content-Type: application/json", "-H", "X-Order: a, b",
        *secrets, "--data-binary", payload, f"https://{SHOP}/api/cart?api_key={SECRET_KEY_VALUE}",
    )  # fmt: skip
    h2 = run.curl(
        "--http2", "-X", "PUT", "-H", "X-Custom: one", "-H", "X-Custom: two",
        "--data-binary", "a=1&b=%20x", f"https://{SHOP}/api/cart/2",
    )  # fmt: skip
    plain = run.curl("-H", "Accept: text/x-test", f"http://{SHOP}/products?page=2&sort=price")
    assert (h1.code, h1.status, h2.code, h2.status, plain.status) == (0, "200", 0, "200", "200")
    assert "HTTP/2 200" in h2.stderr
    cart, cart2, products = (run.received(p)[0] for p in ("/api/cart?", "/api/cart/2", "/products"))
    assert (cart.method, cart.body, cart.path) == (
        "POST",
        payload.encode(),
        f"/api/cart?api_key={SECRET_KEY_VALUE}",
    )
    end_to_end(h1.sent, cart.headers)
    assert (cart2.method, cart2.body) == ("PUT", b"a=1&b=%20x")
    end_to_end(h2.sent, cart2.headers)  # :authority arrives as Host, names lower-cased
    assert [v for k, v in cart2.headers if k == "x-custom"] == ["one", "two"]
    end_to_end(plain.sent, products.headers)
    assert products.path == "/products?page=2&sort=price"

    # A near miss (params filter fails) is forwarded and says why.
    near = run.curl("-d", "x=1", f"https://{SHOP}/api/checkout?step=review")
    assert near.status == "200" and run.received("/api/checkout?step=review")

    # The commit, over HTTP/2 with an upper-case host and a dot segment, secrets everywhere.
    commit_body = json.dumps({"item": "mug", "qty": 1, "password": SECRET_PASSWORD})
    first = run.curl(
        "--http2", "-H", "Content-Type: application/json", *secrets, "--data-binary", commit_body,
        f"https://SHOP.CLAWBENCH.TEST/api/./checkout?step=pay&api_key={SECRET_KEY_VALUE}",
    )  # fmt: skip
    # Again over plain HTTP/1.1 with a '..' segment: blocked and counted, the first stays.
    second = run.curl("-d", "step=2", f"http://{SHOP}/api/x/../checkout?step=pay")
    for blocked in (first, second):
        assert blocked.code != 0 and blocked.status == "000"  # reset: no response at all
    assert first.code in (16, 92, 52, 56), first.stderr  # HTTP/2 stream reset
    assert second.code in (52, 56), second.stderr  # empty reply / connection reset
    assert not [r for r in run.upstream.requests if "step=pay" in r.path]

    rec = run.interception()
    assert rec.blocked_count == 2 and rec.intercepted
    req = rec.request
    assert req.url == "https://shop.clawbench.test/api/checkout?step=pay&api_key=%5BREDACTED%5D"
    assert (req.method, req.http_version, req.body_unverified) == ("POST", "HTTP/2.0", False)
    assert req.params == {"step": "pay", "api_key": "[REDACTED]"}
    assert req.body == {"item": "mug", "qty": 1, "password": "[REDACTED]"}
    assert req.headers["authorization"] == "[REDACTED]" and req.headers["cookie"] == "[REDACTED]"
    assert req.body_size == len(commit_body) and req.content_type == "application/json"
    assert rec.schema_ == {"url_pattern": CHECKOUT, "method": "POST", "params": {"step": "pay"}}
    assert (run.data / ".stop-requested").exists()

    log = run.log()
    assert [(e.method, e.matched, e.blocked) for e in log] == [
        ("POST", False, False),
        ("PUT", False, False),
        ("GET", False, False),
        ("POST", False, False),
        ("POST", True, True),
        ("POST", True, True),
    ]
    assert log[0].query_params == {"api_key": "[REDACTED]"}
    assert log[0].body == {"item": "mug", "password": "[REDACTED]", "n": [1, 2]}
    assert log[0].headers["Authorization"] == "[REDACTED]"
    assert log[0].headers["X-Order"] == "a, b" and log[0].http_version == "HTTP/1.1"
    assert log[1].http_version == "HTTP/2.0" and log[1].body == {"a": "1", "b": " x"}
    assert log[2].near_miss is not None  # same host as the pattern
    assert log[3].near_miss and "params: key 'step'" in " ".join(log[3].near_miss)
    assert log[5].url == "http://shop.clawbench.test/api/checkout?step=pay"
    _no_secret(run.raw_log())
    _no_secret((run.data / "interception.json").read_text())


def test_first_request_blocked_opens_no_upstream_connection(launch, tmp_path, curl) -> None:
    run = launch(write_task(tmp_path / "task", CHECKOUT, "POST"))
    for url in (f"https://{SHOP}/api/checkout", f"http://{SHOP}/api/checkout"):
        result = run.curl("--data-binary", "{}", url)
        assert result.code != 0 and result.status == "000"
    assert run.upstream.connections == 0 and run.upstream.requests == []
    assert run.interception().blocked_count == 2


def test_eager_connection_strategy_is_overridden(launch, tmp_path, upstream, curl) -> None:
    """Eager would open the upstream connection at CONNECT time, before any request is seen."""
    pattern = rf"127\.0\.0\.1:{upstream.port}/api/checkout"
    run = launch(write_task(tmp_path / "task", pattern), connection_strategy="eager")
    result = run.curl("-d", "a=1", f"https://127.0.0.1:{upstream.port}/api/checkout")
    assert result.code != 0 and result.status == "000"
    assert run.upstream.connections == 0
    assert run.interception().request.url == f"https://127.0.0.1:{upstream.port}/api/checkout"


def test_respond_mode_status_body_and_cors(launch, tmp_path, curl) -> None:
    task = write_task(tmp_path / "task", CHECKOUT, "POST")
    run = launch(
        task, clawbench_block_mode="respond", clawbench_block_status="409",
        clawbench_block_body="nope, blocked",
    )  # fmt: skip
    origin = "https://www.clawbench.test"
    cors = run.curl("-i", "-H", f"Origin: {origin}", "-d", "a=1", f"https://{SHOP}/api/checkout")
    plain = run.curl("-i", "--http1.1", "-d", "a=1", f"https://{SHOP}/api/checkout")
    assert (cors.code, cors.status, plain.status) == (0, "409", "409")
    head, _, body = cors.body.partition("\n\n")  # text mode: \r\n read as \n
    assert body == "nope, blocked"
    lines = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in
             head.splitlines()[1:]}  # fmt: skip
    assert lines["access-control-allow-origin"] == origin
    assert lines["access-control-allow-credentials"] == "true"
    assert lines["x-clawbench"] == "blocked"
    assert "access-control-allow-origin" not in plain.body.lower()
    assert run.upstream.requests == [] and run.interception().blocked_count == 2


def test_httpx_through_the_proxy(launch, tmp_path) -> None:
    task = write_task(tmp_path / "task", CHECKOUT, "POST", body={"item": "mug"})
    run = launch(task)
    verify = ssl.create_default_context(cafile=str(run.proxy.ca_cert))
    # (httpx offers http/1.1 before h2 in a proxy tunnel, so it always gets HTTP/1.1 here.)
    with httpx.Client(proxy=run.proxy.url, verify=verify, timeout=10) as client:
        ok = client.post(f"https://{SHOP}/api/checkout", json={"item": "cup"})  # body differs
        assert ok.status_code == 200
        sent = ok.request
        with pytest.raises(httpx.TransportError):
            client.post(f"https://{SHOP}/api/checkout", json={"item": "mug", "qty": 2})
    (got,) = run.upstream.requests
    assert got.body == sent.content == b'{"item":"cup"}'
    end_to_end(list(sent.headers.multi_items()), got.headers)
    rec = run.interception()
    assert rec.request.body == {"item": "mug", "qty": 2} and rec.blocked_count == 1
    assert rec.request.http_version == "HTTP/1.1"
    log = run.log()
    assert [e.matched for e in log] == [False, True]
    assert log[0].near_miss and "body: key 'item'" in log[0].near_miss[0]
