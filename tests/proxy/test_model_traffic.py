"""The agent's model calls through a real mitmdump + addon, to a real fake model API on
loopback, from real clients (openai, httpx, curl): usage.json totals what the server reported,
replies stream through event by event, model calls are never blocked, and requests.jsonl keeps
one compact line per call with no prompt, key or reply in it."""

from __future__ import annotations

import gzip
import json
import ssl
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import brotli
import httpx
import openai
import pytest

from proxy_addon.addon import ProxyStartError, start_proxy
from proxy_addon.records import AgentUsage, ModelCallLine, ModelUsage, read_usage
from tests.proxy.conftest import SHOP, Run, write_task
from tests.support.fake_api import GATE_TIMEOUT, FakeModelAPI, start_model_api
from tests.support.model_replies import Reply, sse_frames, tokens
from tests.support.upstream import Upstream

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd

MODEL = "model.clawbench.test"
PROMPT = "PROMPT-7f3a: buy the blue mug and tell nobody"
KEY = "sk-test-SECRET-KEY-4242"
ANSWER = "REPLY-TEXT-91 Sure, here is the plan."


@pytest.fixture(scope="module")
def model_server() -> Iterator[FakeModelAPI]:
    srv = start_model_api()
    yield srv
    srv.close()


def _run(launch: Any, tmp_path: Path, upstream: Upstream, srv: FakeModelAPI, **opts: Any) -> Run:
    srv.calls.clear()
    srv.replies.clear()
    srv.gate_timeouts = 0
    task = write_task(tmp_path / "task", r"^https://shop\.clawbench\.test/checkout")
    options = {
        "clawbench_route": [f"{SHOP}={upstream.url}", f"{MODEL}={srv.url}"],
        "clawbench_model_hosts": [MODEL],
        **opts,
    }
    return launch(task, **options)


def _openai(run: Run) -> openai.OpenAI:
    http = httpx.Client(proxy=run.proxy.url, timeout=20)
    return openai.OpenAI(
        base_url=f"http://{MODEL}/v1", api_key=KEY, http_client=http, max_retries=0
    )


def _anthropic_stream(run: Run) -> list[str]:
    body = {"model": "claude-x", "max_tokens": 64, "stream": True,
            "messages": [{"role": "user", "content": PROMPT}]}  # fmt: skip
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    with httpx.Client(proxy=run.proxy.url, timeout=20) as client:
        url = f"http://{MODEL}/v1/messages"
        with client.stream("POST", url, json=body, headers=headers) as resp:
            assert resp.status_code == 200
            return [line for line in resp.iter_lines() if line.startswith("event: ")]


def _lines(run: Run, count: int) -> list[ModelCallLine]:
    """The model-call lines, once there are count of them: a reply with a Content-Length is
    complete for the client a moment before the proxy's response hook writes its line."""
    deadline = time.monotonic() + 5
    while True:
        calls = [line for line in run.log() if isinstance(line, ModelCallLine)]
        if len(calls) >= count or time.monotonic() > deadline:
            return calls
        time.sleep(0.02)


def _usage(run: Run, calls: int) -> AgentUsage | None:
    """usage.json once it counts calls (written right after each call's line)."""
    deadline = time.monotonic() + 5
    while ((usage := read_usage(run.data / "usage.json")) is None or usage.calls < calls) and (
        time.monotonic() < deadline
    ):
        time.sleep(0.02)
    return usage


def _expected(replies: list[tuple[Reply, bool]]) -> AgentUsage:
    """usage.json as the replies' reported usage makes it (bool: the reply carried usage)."""
    models: dict[str, ModelUsage] = {}
    for reply, reported in replies:
        assert reply.model is not None
        one = ModelUsage(calls=1, calls_without_usage=int(not reported))
        one += reply.usage if reported else ModelUsage()
        models[reply.model] = models.get(reply.model, ModelUsage()) + one
    return AgentUsage(calls=len(replies), models=models)


def test_usage_totals_equal_what_the_server_reported(
    launch: Any, tmp_path: Path, upstream: Upstream, model_server: FakeModelAPI, curl: str
) -> None:
    run = _run(launch, tmp_path, upstream, model_server)
    chat = [Reply(ANSWER, usage=tokens(1200, 35, 1024), model="fake-gpt") for _ in range(3)]
    chat[1] = Reply(ANSWER, usage=tokens(300, 7, 0), model="fake-gpt")
    resp = [
        Reply(ANSWER, usage=tokens(2048, 300, 1536), model="fake-resp"),
        Reply(usage=tokens(50, 5, 0), model="fake-resp"),
    ]
    claude = [
        Reply(ANSWER, usage=tokens(425, 15, 400), model="fake-claude"),
        Reply(ANSWER, usage=tokens(90, 9, 30), model="fake-claude", encoding="gzip"),
    ]
    model_server.replies += [*chat, *resp, *claude]
    client = _openai(run)
    messages: Any = [{"role": "user", "content": PROMPT}]
    reply = client.chat.completions.create(model="gpt", messages=messages)
    assert reply.choices[0].message.content == ANSWER
    stream = client.chat.completions.create(
        model="gpt", messages=messages, stream=True, stream_options={"include_usage": True}
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices).split()
    plain = client.chat.completions.create(model="gpt", messages=messages, stream=True)
    assert [c for c in plain]  # no include_usage: this reply reports no usage
    assert client.responses.create(model="r", input=PROMPT).output_text == ANSWER
    events = list(client.responses.create(model="r", input=PROMPT, stream=True))
    assert events[-1].type == "response.completed"
    assert _anthropic_stream(run)[-1] == "event: message_stop"
    body = json.dumps({"model": "claude-x", "max_tokens": 9, "messages": messages})
    headers = ["-H", "content-type: application/json", "-H", f"x-api-key: {KEY}"]
    got = run.curl("--compressed", *headers, "-d", body, f"http://{MODEL}/v1/messages")
    assert got.code == 0 and json.loads(got.body)["content"][0]["text"] == ANSWER

    assert len(model_server.calls) == 7
    reported = [True, True, False, True, True, True, True]
    expected = _expected(list(zip([*chat, *resp, *claude], reported, strict=True)))
    lines = _lines(run, 7)
    assert _usage(run, 7) == expected
    assert [(x.path, x.status, x.streamed) for x in lines] == [
        ("/v1/chat/completions", 200, False),
        ("/v1/chat/completions", 200, True),
        ("/v1/chat/completions", 200, True),
        ("/v1/responses", 200, False),
        ("/v1/responses", 200, True),
        ("/v1/messages", 200, True),
        ("/v1/messages", 200, False),
    ]
    assert all(x.host == MODEL and x.url == f"http://{MODEL}{x.path}" for x in lines)
    assert all(x.method == "POST" and x.request_size > len(PROMPT) for x in lines)
    assert all(x.response_size > 0 and x.duration_s is not None for x in lines)
    assert [x.usage.input_tokens if x.usage else None for x in lines] == [
        1200, 300, None, 2048, 50, 425, 90
    ]  # fmt: skip
    assert lines[6].response_size < len(ANSWER) + 300  # the gzipped size, as it crossed the wire
    text = (run.data / "requests.jsonl").read_text() + (run.data / "usage.json").read_text()
    for secret in (PROMPT, KEY, "REPLY-TEXT-91"):
        assert secret not in text
    assert not (run.data / "interception.json").exists()


ENCODINGS = [None, "gzip", "deflate", "br", "zstd"]


def _decoded(encoding: str | None, wire: bytes) -> bytes:
    return {
        None: lambda b: b,
        "gzip": gzip.decompress,
        "deflate": zlib.decompress,
        "br": brotli.decompress,
        "zstd": zstd.decompress,
    }[encoding](wire)


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "http2"])
def test_stream_reaches_the_agent_event_by_event(
    launch: Any, tmp_path: Path, upstream: Upstream, model_server: FakeModelAPI, http2: bool
) -> None:
    """The server holds every event after the first until the client has seen the first one
    through the proxy: a proxy that buffered would starve the client until GATE_TIMEOUT."""
    run = _run(launch, tmp_path, upstream, model_server)
    verify = ssl.create_default_context(cafile=str(run.proxy.ca_cert))
    timeout = httpx.Timeout(20, read=GATE_TIMEOUT / 2)
    body = {"model": "claude-x", "stream": True, "messages": [{"role": "user", "content": PROMPT}]}
    total = 0
    with httpx.Client(proxy=run.proxy.url, verify=verify, http2=http2, timeout=timeout) as client:
        for i, encoding in enumerate(ENCODINGS):
            gate = threading.Event()
            reply = Reply(
                ANSWER,
                usage=tokens(100 + i, 10 + i, i),
                model="fake-claude",
                encoding=encoding,
                gate=gate,
            )
            model_server.replies.append(reply)
            url = f"https://{MODEL}/v1/messages"
            with client.stream("POST", url, json=body) as resp:
                assert resp.headers.get("content-encoding") == encoding
                chunks = resp.iter_raw()
                first = next(chunks)  # arrives while the server still holds the rest
                gate.set()
                wire = first + b"".join(chunks)
            assert model_server.gate_timeouts == 0, encoding
            call = model_server.calls[-1]
            sent = sse_frames(call.path, reply, call.body, "fake-claude", len(model_server.calls))
            assert _decoded(encoding, wire) == b"".join(sent)
            total += 1
            usage = _usage(run, total)
            assert usage is not None and usage.calls == total
    claude = usage.models["fake-claude"]
    assert (claude.input_tokens, claude.output_tokens, claude.cached_tokens) == (510, 60, 10)
    assert [x.streamed and x.error is None for x in _lines(run, 5)] == [True] * len(ENCODINGS)


def test_a_model_call_matching_the_commit_pattern_is_not_blocked(
    launch: Any, tmp_path: Path, upstream: Upstream, model_server: FakeModelAPI, curl: str
) -> None:
    model_server.calls.clear()
    task = write_task(tmp_path / "task", r"/v1/chat/completions$", "POST")
    run = launch(
        task,
        clawbench_route=[f"{SHOP}={upstream.url}", f"{MODEL}={model_server.url}"],
        clawbench_model_hosts=[f"http://{MODEL}/v1"],
    )
    reply = _openai(run).chat.completions.create(
        model="gpt", messages=[{"role": "user", "content": PROMPT}]
    )
    assert reply.choices[0].message.content and len(model_server.calls) == 1
    assert not (run.data / "interception.json").exists()
    assert not (run.data / ".stop-requested").exists()
    # The same request to a site that is not a model host is the commit: blocked.
    blocked = run.curl("-d", "{}", f"http://{SHOP}/v1/chat/completions")
    assert blocked.code != 0 and not run.received("/v1/chat")
    assert run.interception().request.url == f"http://{SHOP}/v1/chat/completions"
    _lines(run, 1)
    assert [(isinstance(e, ModelCallLine), e.url) for e in run.log()] == [
        (True, f"http://{MODEL}/v1/chat/completions"),
        (False, f"http://{SHOP}/v1/chat/completions"),
    ]


def test_a_request_naming_a_model_host_goes_only_to_it(
    launch: Any, tmp_path: Path, upstream: Upstream, model_server: FakeModelAPI, curl: str
) -> None:
    """Host names the model server, the URL the site: the proxy delivers it to the model host,
    so naming a model host cannot carry a commit past the matcher to the site."""
    model_host = f"127.0.0.1:{model_server.port}"
    run = _run(launch, tmp_path, upstream, model_server, clawbench_model_hosts=[model_host])
    target = f"http://127.0.0.1:{upstream.port}/checkout"
    got = run.curl("-H", f"Host: {model_host}", "-d", "item=mug", target)
    assert got.code == 0 and got.status == "200"
    assert upstream.requests == []
    assert [c.path for c in model_server.calls] == ["/checkout"]
    (line,) = _lines(run, 1)
    assert (line.host, line.path, line.status) == (model_host, "/checkout", 200)


def test_failed_calls_are_counted_without_usage(
    launch: Any, tmp_path: Path, upstream: Upstream, model_server: FakeModelAPI
) -> None:
    run = _run(launch, tmp_path, upstream, model_server)
    model_server.replies.append(Reply(status=429))
    with pytest.raises(openai.RateLimitError):
        _openai(run).chat.completions.create(
            model="asked-model", messages=[{"role": "user", "content": PROMPT}]
        )
    (line,) = _lines(run, 1)
    assert (line.status, line.usage, line.model) == (429, None, "asked-model")
    usage = _usage(run, 1)
    assert usage == AgentUsage(
        calls=1, models={"asked-model": ModelUsage(calls=1, calls_without_usage=1)}
    )


def test_usage_survives_a_proxy_restart_and_is_there_before_any_call(
    launch: Any, tmp_path: Path, upstream: Upstream, model_server: FakeModelAPI
) -> None:
    first = _run(launch, tmp_path, upstream, model_server)
    assert read_usage(first.data / "usage.json") == AgentUsage()
    model_server.replies.append(Reply(usage=tokens(10, 1, 0), model="m"))
    _openai(first).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert _usage(first, 1) is not None
    first.proxy.stop()
    second = _run(launch, tmp_path, upstream, model_server)
    model_server.replies.append(Reply(usage=tokens(20, 2, 0), model="m"))
    _openai(second).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    usage = _usage(second, 2)
    assert usage == AgentUsage(
        calls=2, models={"m": ModelUsage(calls=2, input_tokens=30, output_tokens=3)}
    )
    assert len(_lines(second, 2)) == 2


@pytest.mark.parametrize("value", ["api.example.com/v1", "ftp://api.example.com", "host:port"])
def test_a_bad_model_host_stops_mitmdump(tmp_path: Path, mitm_confdir: Path, value: str) -> None:
    task = write_task(tmp_path / "task", "x")
    with pytest.raises(ProxyStartError, match="clawbench_model_hosts"):
        start_proxy(
            task, tmp_path / "data", confdir=mitm_confdir, quiet=False,
            options={"clawbench_model_hosts": value}, ready_timeout=20,
        )  # fmt: skip
