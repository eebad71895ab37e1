"""The addon's hooks called directly (mitmproxy.test.taddons / tflow) for quick edge cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mitmproxy import exceptions
from mitmproxy.addonmanager import traverse
from mitmproxy.addons.proxyserver import Proxyserver
from mitmproxy.test import taddons, tflow

from proxy_addon.addon.modeltraffic import ClawbenchModelTraffic, is_model_call
from proxy_addon.addon.options import parse_routes
from proxy_addon.clawbench import ClawbenchInterceptor
from tests.proxy.conftest import secrets_in
from tests.proxy.hooks import make_flow


def test_host_header_wins_over_the_peer_ip(arm) -> None:
    """Transparent mode knows only the IP; the Host header names the site (docs/security.md, the
    proxy's rule 1)."""
    armed = arm()
    flow = armed.send(
        make_flow("203.0.113.7", 80, headers=[("Host", "Shop.Clawbench.Test")], mode="transparent")
    )
    assert flow.error is not None and flow.error.msg == "Connection killed."
    (entry,) = armed.log()
    assert entry.url == "http://shop.clawbench.test/api/checkout" and entry.mode == "transparent"
    assert armed.interception().request.url == entry.url


def test_http2_authority_is_the_host(arm) -> None:
    armed = arm()
    flow = make_flow(
        "shop.clawbench.test", 443, "/api/%2e/checkout", scheme="https", http_version="HTTP/2.0",
        authority="SHOP.clawbench.test.:443", sni="shop.clawbench.test",
    )  # fmt: skip
    armed.send(flow)
    rec = armed.interception()
    assert rec.request.url == "https://shop.clawbench.test/api/checkout"
    assert rec.request.http_version == "HTTP/2.0"


def test_a_forged_host_header_is_refused_not_forwarded(arm) -> None:
    """Host names a host routed elsewhere than where the request goes: refused and logged,
    never forwarded, never credited (docs/security.md, the proxy's rule 2)."""
    armed = arm(clawbench_route=["shop.clawbench.test=http://203.0.113.7:80",
                                 "cdn.example=http://198.51.100.9:80"])  # fmt: skip
    flow = armed.send(make_flow("shop.clawbench.test", 80, headers=[("Host", "cdn.example")]))
    assert flow.error is not None and flow.response is None
    assert not (armed.data / "interception.json").exists()
    (entry,) = armed.log()
    # it matches (under its target): shown, yet neither blocked as the commit nor credited
    assert entry.url == "http://shop.clawbench.test/api/checkout"
    assert entry.matched and not entry.blocked
    assert entry.refused == (
        "its names disagree: Host cdn.example is routed to http://198.51.100.9:80, "
        "target shop.clawbench.test:80 is routed to http://203.0.113.7:80"
    )
    ok = armed.send(make_flow("cdn.example", 80, headers=[("Host", "cdn.example")]))
    assert ok.error is None and ok.response is None
    assert (ok.request.host, ok.request.port) == ("198.51.100.9", 80)
    assert ok.request.host_header == "cdn.example"  # what the client sent is kept


def test_respond_mode_echoes_origin_and_error_mode_kills(arm) -> None:
    armed = arm(clawbench_block_mode="respond", clawbench_block_status=418,
                clawbench_block_body="teapot")  # fmt: skip
    flow = armed.send(make_flow("shop.clawbench.test", 80, headers=[("Origin", "https://a.test")]))
    assert flow.response is not None and flow.error is None
    assert (flow.response.status_code, flow.response.content) == (418, b"teapot")
    assert flow.response.headers["access-control-allow-origin"] == "https://a.test"
    assert flow.response.headers["vary"] == "Origin"
    bare = armed.send(make_flow("shop.clawbench.test", 80))
    assert bare.response is not None and "access-control-allow-origin" not in bare.response.headers
    killed = arm().send(make_flow("shop.clawbench.test", 80))
    assert killed.response is None and killed.error is not None and not killed.live


@pytest.mark.parametrize("has_body_filter", [True, False])
def test_body_size_limit_error_credits_a_head_match(arm, has_body_filter: bool) -> None:
    schema = {"body": {"item": "mug"}} if has_body_filter else {}
    armed = arm(schema=schema)
    flow = make_flow("shop.clawbench.test", 80, headers=[("Content-Length", "999999")])
    flow.error = tflow.flow.Error("Request body exceeds mitmproxy's body_size_limit.")
    armed.error(flow)
    rec = armed.interception()
    assert rec.request.body_unverified is has_body_filter and rec.request.body_size == 999999
    (entry,) = armed.log()
    assert entry.matched and entry.blocked


def test_other_errors_and_non_matching_heads_are_not_credited(arm) -> None:
    armed = arm()
    aborted = make_flow("shop.clawbench.test", 80)
    aborted.error = tflow.flow.Error("Client disconnected.")  # the upload never completed
    armed.error(aborted)
    other = make_flow("shop.clawbench.test", 80, "/elsewhere")
    other.error = tflow.flow.Error("Request body exceeds mitmproxy's body_size_limit.")
    armed.error(other)
    assert not (armed.data / "interception.json").exists()


def test_near_miss_reasons_and_lines_carry_no_secret(arm) -> None:
    armed = arm(schema={"params": {"step": "pay"}})
    body = json.dumps({"password": "hunter2", "item": "mug"}).encode()
    flow = make_flow(
        "shop.clawbench.test", 80, "/api/checkout?step=review&api_key=k-123",
        headers=[("Cookie", "sid=s-456"), ("Content-Type", "application/json"),
                 ("X-Raw", "caf\udce9")],  # a header byte that is not UTF-8
        body=body,
    )  # fmt: skip
    armed.send(flow)
    raw = (armed.data / "requests.jsonl").read_text()
    for secret in ("hunter2", "k-123", "s-456"):
        assert secret not in raw
    (entry,) = armed.log()
    assert entry.near_miss and any("params: key 'step'" in r for r in entry.near_miss)
    assert entry.body == {"password": "[REDACTED]", "item": "mug"}
    assert entry.query_params == {"step": "review", "api_key": "[REDACTED]"}
    assert entry.headers["X-Raw"] == "caf\\xe9"  # the byte kept, as valid text
    # A raw non-UTF-8 byte in the target and a secret: the reason quotes neither raw.
    armed.send(make_flow("shop.clawbench.test", 80, "/api/x\udce9?api_key=k-789", method="GET"))
    assert "k-789" not in (armed.data / "requests.jsonl").read_text()
    last = armed.log()[-1]
    assert last.url == "http://shop.clawbench.test/api/x\\xe9?api_key=%5BREDACTED%5D"
    assert last.near_miss and "k-789" not in " ".join(last.near_miss)


SENT_SESSION, SENT_KEY, SENT_TOKEN, SENT_PASSWORD = "sess-5ec12e7", "key-a91b3c", "t-0c4", "pw-77d"
FORM = [("Content-Type", "application/x-www-form-urlencoded")]


def test_secret_filter_keys_leave_no_sent_value_on_disk(arm) -> None:
    """A filter on a secret key: the reasons name it but never quote what the agent sent."""
    armed = arm(schema={"body": {"session_id": "sess-want"}, "params": {"api_key": "key-want"}})
    shop = "shop.clawbench.test"
    sent = [
        # each filter fails on the secret value itself, both at once, then one at a time
        (f"/api/checkout?api_key={SENT_KEY}", f"session_id={SENT_SESSION}&item=mug"),
        ("/api/checkout?api_key=key-want", f"session_id={SENT_SESSION}"),
        (f"/api/checkout?api_key={SENT_KEY}", "session_id=sess-want"),
        # the same host, another path: the URL reason quotes the URL with its secrets redacted
        (f"/api/cart?api_key={SENT_KEY}&token={SENT_TOKEN}", f"session_id={SENT_SESSION}"),
        # the commit, with more secrets riding along
        (f"/api/checkout?api_key=key-want&token={SENT_TOKEN}",
         f"session_id=sess-want&password={SENT_PASSWORD}"),
    ]  # fmt: skip
    for target, body in sent:
        armed.send(make_flow(shop, 80, target, headers=FORM, body=body.encode()))
    log = armed.log()
    assert [e.matched for e in log] == [False, False, False, False, True]
    body_why = 'body: key \'session_id\' expected "sess-want", got "[REDACTED]"'
    params_why = 'params: key \'api_key\' expected "key-want", got "[REDACTED]"'
    assert [e.near_miss for e in log[:3]] == [[body_why, params_why], [body_why], [params_why]]
    cart = "http://shop.clawbench.test/api/cart?api_key=%5BREDACTED%5D&token=%5BREDACTED%5D"
    assert log[3].url == cart and log[3].near_miss and repr(cart) in log[3].near_miss[0]
    rec = armed.interception()
    assert rec.request.body == {"session_id": "[REDACTED]", "password": "[REDACTED]"}
    assert rec.request.params == {"api_key": "[REDACTED]", "token": "[REDACTED]"}
    assert secrets_in(armed.data, [SENT_SESSION, SENT_KEY, SENT_TOKEN, SENT_PASSWORD]) == []


def test_unarmed_addon_kills_everything() -> None:
    addon = ClawbenchInterceptor()
    with taddons.context(Proxyserver(), addon):
        flow = make_flow("shop.clawbench.test", 80, "/anything", method="GET")
        addon.request(flow)
        assert flow.error is not None


def test_raw_tcp_and_udp_are_refused_before_connecting(arm) -> None:
    armed = arm()
    for flow in (tflow.ttcpflow(), tflow.tudpflow()):
        flow.server_conn.error = None
        (armed.addon.tcp_start if flow.type == "tcp" else armed.addon.udp_start)(flow)
        assert flow.server_conn.error and "refused" in flow.server_conn.error


@pytest.mark.parametrize(
    ("opts", "words"),
    [
        ({"clawbench_block_mode": "drop"}, "clawbench_block_mode"),
        ({"clawbench_block_status": 700}, "200 to 599"),
        ({"clawbench_max_body": -1}, "clawbench_max_body"),
        ({"clawbench_route": ["shop.test=ftp://x:1"]}, "clawbench_route"),
        ({"stream_large_bodies": "1m"}, "stream_large_bodies"),
    ],
)
def test_bad_options_at_startup_make_the_addon_fatal(arm, opts, words) -> None:
    armed = arm()
    armed.tctx.configure(armed.addon, **opts)
    assert armed.addon.fatal is not None and words in armed.addon.fatal
    flow = armed.send(make_flow("cdn.example", 80, "/x", method="GET"))
    assert flow.error is not None  # about to exit: nothing passes meanwhile


def test_a_live_change_is_refused_and_the_armed_task_stays(arm, tmp_path: Path) -> None:
    armed = arm()
    armed.addon.running()
    assert (armed.data / ".proxy-ready").exists()
    with pytest.raises(exceptions.OptionsError, match="connection_strategy"):
        armed.tctx.configure(armed.addon, connection_strategy="eager")
    with pytest.raises(exceptions.OptionsError, match="bad task"):
        armed.tctx.configure(armed.addon, clawbench_task=str(tmp_path / "missing.json"))
    assert armed.tctx.options.connection_strategy == "lazy"
    assert armed.addon.matcher is not None and armed.addon.fatal is None
    assert armed.send(make_flow("shop.clawbench.test", 80)).error is not None


def test_parse_routes() -> None:
    assert parse_routes(["Shop.Test.=http://127.0.0.1:8080"]) == {
        "shop.test": ("http", "127.0.0.1", 8080)
    }
    for bad in ("shop.test", "shop.test=http://127.0.0.1", "shop.test=ftp://h:1"):
        with pytest.raises(ValueError, match="HOST=http://ADDR:PORT"):
            parse_routes([bad])


def test_a_failure_inside_the_hook_kills_the_flow(arm) -> None:
    # requests.jsonl cannot be written (its fd is gone): the request is not forwarded unseen.
    armed = arm()
    armed.addon.log.close()
    flow = armed.send(make_flow("shop.clawbench.test", 80, "/products", method="GET"))
    assert flow.error is not None and flow.response is None


def test_an_earlier_record_in_the_data_dir(arm, tmp_path: Path) -> None:
    """Arming keeps an earlier process's credited match; the runner's not-intercepted record is
    replaced by a match; a record that cannot be read stops the proxy rather than be lost."""
    armed = arm()
    not_intercepted = {"intercepted": False, "stop_reason": "unknown", "stop_description": "x"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "interception.json").write_text(json.dumps(not_intercepted))
    armed.tctx.configure(armed.addon, clawbench_data=str(elsewhere))
    armed.data = elsewhere
    armed.send(make_flow("shop.clawbench.test", 80, body=b"a=1"))
    assert armed.interception().request.body == {"a": "1"}

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "interception.json").write_text('{"intercepted": true, "request": {}}')
    armed.tctx.configure(armed.addon, clawbench_data=str(broken))
    assert armed.addon.fatal is not None and "move it away" in armed.addon.fatal
    assert armed.send(make_flow("shop.clawbench.test", 80)).error is not None


def test_an_override_header_past_the_recorded_ones_still_counts(arm) -> None:
    """The records keep 64 header fields; the matcher reads the request's own, so a method
    override sent as the 70th header is still the commit."""
    armed = arm(method="PUT")
    filler = [(f"X-Filler-{i}", "x") for i in range(69)]
    flow = make_flow(
        "shop.clawbench.test", 80, headers=[*filler, ("X-HTTP-Method-Override", "PUT")]
    )
    armed.send(flow)
    assert flow.error is not None
    rec = armed.interception()
    assert rec.request.equivalence == "method override: x-http-method-override: PUT"
    assert "X-HTTP-Method-Override" not in rec.request.headers  # past the records' cap


def test_model_call_hooks_exist_only_once_model_hosts_are_set() -> None:
    # mitmproxy calls every hook an addon (or sub-addon) has on every request: a run without
    # model hosts must not pay for the model-call hooks.
    traffic = ClawbenchModelTraffic()

    def hooked() -> bool:
        return any(hasattr(a, "requestheaders") for a in traverse([traffic]))

    with taddons.context(traffic) as tctx:
        assert not hooked()
        tctx.configure(traffic, clawbench_model_hosts=["model.test"])
        assert hooked()
        flow = make_flow("model.test", 80, "/v1/chat/completions", headers=[("Host", "model.test")])
        for a in traverse([traffic]):
            getattr(a, "requestheaders", lambda f: None)(flow)
        assert is_model_call(flow)
