"""The proxy's record of the model API (usage.json's `api`, each call's `outcome` and `own`),
through a real mitmdump + addon, to the real fake model API on loopback, from real clients.

Only the run's own calls (its key, endpoint and model, a request of the API) decide a
model_api_failure: an agent that makes its own calls fail on purpose leaves the record saying
the model's failure is its own. The key never reaches a file; the proxy gets a keyed hash."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from pydantic import TypeAdapter

from proxy_addon.addon import key_fingerprint
from proxy_addon.records import (
    REQUESTS_FILE,
    RESERVE_FILE,
    AgentUsage,
    CallOutcome,
    ModelApiRecord,
    ModelCallLine,
    model_api_failure,
    read_usage,
)
from sandbox.container.contract import PROXY_RECORDS
from tests.proxy.conftest import SHOP, Run, write_task
from tests.support.fake_api import FakeModelAPI, start_model_api
from tests.support.model_replies import Reply, tokens
from tests.support.upstream import Upstream

MODEL = "model.clawbench.test"
KEY = "sk-run-own-KEY-5150"
OWN = "gpt-own"
CHAT = f"http://{MODEL}/v1/chat/completions"
MESSAGES = f"http://{MODEL}/v1/messages"


@pytest.fixture(scope="module")
def model_server() -> Iterator[FakeModelAPI]:
    srv = start_model_api()
    srv.api_key = KEY  # a provider: another key is answered 401
    yield srv
    srv.close()


def _run(launch: Any, tmp_path: Path, upstream: Upstream, srv: FakeModelAPI, **opts: Any) -> Run:
    srv.calls.clear()
    srv.replies.clear()
    task = write_task(tmp_path / "task", r"^https://shop\.clawbench\.test/checkout")
    options = {
        "clawbench_route": [f"{SHOP}={upstream.url}", f"{MODEL}={srv.url}"],
        "clawbench_model_hosts": [MODEL],
        "clawbench_model_endpoint": [CHAT, MESSAGES],
        "clawbench_model_name": OWN,
        "clawbench_model_key": key_fingerprint(KEY),
        **opts,
    }
    return launch(task, **options)


def _client(run: Run, key: str = KEY, **headers: str) -> openai.OpenAI:
    http = httpx.Client(proxy=run.proxy.url, timeout=20)
    return openai.OpenAI(
        base_url=f"http://{MODEL}/v1",
        api_key=key,
        http_client=http,
        max_retries=0,
        default_headers=headers or None,
    )


def _chat(client: openai.OpenAI, model: str = OWN) -> str | None:
    """One chat call: None when it got a reply, else the client's error."""
    try:
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
    except openai.APIError as e:
        return f"{type(e).__name__}: {e}"
    return None


def _raw(run: Run, url: str, body: bytes, key: str = KEY) -> int:
    headers = {"authorization": f"Bearer {key}", "content-type": "application/json"}
    with httpx.Client(proxy=run.proxy.url, timeout=20) as client:
        return client.post(url, content=body, headers=headers).status_code


def _record(run: Run, calls: int) -> tuple[AgentUsage, list[ModelCallLine]]:
    """usage.json and the model-call lines once calls calls are recorded."""
    deadline = time.monotonic() + 5
    while True:
        usage = read_usage(run.data / "usage.json")
        raw = [line for line in run.raw_log().splitlines() if '"model_call":true' in line]
        if (usage is not None and usage.calls >= calls) or time.monotonic() > deadline:
            assert usage is not None
            return usage, [ModelCallLine.model_validate_json(line) for line in raw]
        time.sleep(0.02)


def _no_key_on_disk(run: Run) -> None:
    for path in run.data.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


Hostile = Callable[[Run, FakeModelAPI], None]


def _another_key(run: Run, srv: FakeModelAPI) -> None:
    assert _chat(_client(run, key="sk-someone-else-0000"))  # the provider says 401


def _another_path(run: Run, srv: FakeModelAPI) -> None:
    srv.replies.append(Reply(status=404))
    body = json.dumps({"model": OWN, "messages": [{"role": "user", "content": "x"}]}).encode()
    assert _raw(run, f"http://{MODEL}/v1/not-an-endpoint", body) == 404


def _another_model(run: Run, srv: FakeModelAPI) -> None:
    srv.replies.append(Reply(status=404, error_type="model_not_found"))
    assert _chat(_client(run), model="gpt-nonexistent")


def _malformed_body(run: Run, srv: FakeModelAPI) -> None:
    srv.replies.append(Reply(status=400))
    assert _raw(run, CHAT, b'{"model": "gpt-own", "messages": [') == 400


def _flood_of_429s(run: Run, srv: FakeModelAPI) -> None:
    srv.replies.append(Reply(status=429))
    assert _chat(_client(run))  # its own key, endpoint and model: a rate limit it drew


def _header_that_fails_the_key(run: Run, srv: FakeModelAPI) -> None:
    srv.replies.append(Reply(status=401, error_type="mismatched_organization"))
    assert _chat(_client(run, **{"OpenAI-Organization": "org-not-mine"}))


HOSTILE: dict[str, tuple[Hostile, str | None, CallOutcome]] = {
    "another key": (_another_key, "another key", CallOutcome.AUTH),
    "another path": (_another_path, "another endpoint", CallOutcome.NOT_FOUND),
    "another model": (_another_model, "another model", CallOutcome.NOT_FOUND),
    "a malformed body": (_malformed_body, "not a request of the API", CallOutcome.BAD_REQUEST),
    "a flood that draws 429s": (_flood_of_429s, None, CallOutcome.RATE_LIMITED),
    "a header that makes the key fail": (_header_that_fails_the_key, None, CallOutcome.AUTH),
}


def test_calls_the_agent_makes_fail_on_purpose_decide_nothing(
    launch: Any, tmp_path: Path, upstream: Upstream, model_server: FakeModelAPI
) -> None:
    """For each way: the model answered, then the agent's own calls failed (three times, the
    last calls so far): the record keeps them apart and the run is still the model's failure.
    Then the contrast: the harness's own calls refused (credit or key gone) is the API's."""
    run = _run(launch, tmp_path, upstream, model_server)
    client, calls = _client(run), 0
    for case, (hostile, not_own, outcome) in HOSTILE.items():
        assert (reply := _chat(client)) is None, (case, reply)  # what came before: no longer counts
        for _ in range(3):
            hostile(run, model_server)
        calls += 4
        usage, lines = _record(run, calls)
        assert [line.outcome for line in lines[-4:]] == [CallOutcome.OK, *[outcome] * 3], case
        assert [(x.own, x.not_own) for x in lines[-3:]] == [(not_own is None, not_own)] * 3, case
        assert usage.api is not None and model_api_failure(usage.api) is None, (case, usage.api)
    assert _chat(client) is None and _chat(client) is None
    model_server.replies += [Reply(status=401)] * 2 + [Reply(status=429)]
    model_server.replies[-1].error_type = "insufficient_quota"
    assert all(_chat(client) for _ in range(3))
    usage, lines = _record(run, calls + 5)
    assert [line.outcome for line in lines[-3:]] == ["auth", "auth", "quota"]
    assert usage.api is not None and usage.api.own_replies == len(HOSTILE) + 2
    assert model_api_failure(usage.api) == (
        "model API failed: the last 3 call(s) after 8 reply(s) (2 auth, 1 quota); "
        f"last: HTTP 429 (insufficient_quota) from {CHAT}"
    )
    _no_key_on_disk(run)


REPLIES: dict[str, tuple[Reply, CallOutcome]] = {
    "401": (Reply(status=401), CallOutcome.AUTH),
    "403": (Reply(status=403), CallOutcome.AUTH),
    "402": (Reply(status=402), CallOutcome.QUOTA),
    "404": (Reply(status=404), CallOutcome.NOT_FOUND),
    "429": (Reply(status=429), CallOutcome.RATE_LIMITED),
    "500": (Reply(status=500), CallOutcome.SERVER_ERROR),
    "529 overloaded": (Reply(status=529), CallOutcome.SERVER_ERROR),
    "a stream ending in an error event": (
        Reply(stream_error="overloaded_error"),
        CallOutcome.SERVER_ERROR,
    ),
    "a stream cut short": (Reply(cut=True), CallOutcome.STREAM_CUT),
}
DOWN = "down.clawbench.test"


def test_each_way_a_call_ends_is_named(
    launch: Any, tmp_path: Path, upstream: Upstream, model_server: FakeModelAPI
) -> None:
    """Anthropic's streamed messages API, as Claude Code calls it, and a model host on a closed
    port; no reply ever came, so the run is a model_api_failure whatever the failures."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    run = _run(
        launch,
        tmp_path,
        upstream,
        model_server,
        clawbench_route=[f"{SHOP}={upstream.url}", f"{MODEL}={model_server.url}",
                         f"{DOWN}=http://127.0.0.1:{closed}"],
        clawbench_model_hosts=[MODEL, DOWN],
        clawbench_model_endpoint=[MESSAGES, f"http://{DOWN}/v1/messages"],
    )  # fmt: skip
    body = {"model": OWN, "max_tokens": 9, "stream": True, "messages": [{"role": "user",
            "content": "hi"}]}  # fmt: skip
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    with httpx.Client(proxy=run.proxy.url, timeout=20) as client:
        for reply, _ in REPLIES.values():
            model_server.replies.append(reply)
            try:
                with client.stream("POST", MESSAGES, json=body, headers=headers) as resp:
                    list(resp.iter_raw())
            except httpx.HTTPError:
                pass  # the cut stream
        got = client.post(f"http://{DOWN}/v1/messages", json=body, headers=headers)
        assert got.status_code == 502
    usage, lines = _record(run, len(REPLIES) + 1)
    expected = [outcome for _, outcome in REPLIES.values()] + [CallOutcome.CONNECTION]
    assert [(x.outcome, x.own) for x in lines] == [(o, True) for o in expected]
    down = lines[-1]
    assert down.status is None and "connect" in (down.error or "").lower()
    assert [x.api_error for x in lines[:2]] == ["authentication_error", "permission_error"]
    why = model_api_failure(usage.api)
    assert why is not None and why.startswith(f"model API failed: no reply in {len(lines)} call")
    assert why.endswith(f"last: connection from http://{DOWN}/v1/messages")


def test_usage_under_another_name_is_counted_and_other_model_apis_mark_it_incomplete(
    launch: Any, tmp_path: Path, upstream: Upstream, model_server: FakeModelAPI
) -> None:
    """Without the run's endpoint, model and key (not a harness run) nothing is decided. The
    model host reached by its address counts; a reply with usage from a host that is no model
    host (another provider) is not counted, and usage.json says usage is incomplete."""
    opts = {"clawbench_model_endpoint": [], "clawbench_model_name": "", "clawbench_model_key": ""}
    run = _run(launch, tmp_path, upstream, model_server, clawbench_allow_private=["127.0.0.1"],
               **opts)  # fmt: skip
    other = start_model_api()
    try:
        model_server.replies += [Reply(status=502), Reply(usage=tokens(100, 10, 0), model=OWN),
                                Reply(usage=tokens(200, 20, 0), model=OWN)]  # fmt: skip
        other.replies.append(Reply(usage=tokens(999, 99, 0), model="elsewhere"))
        assert _chat(_client(run)) and _chat(_client(run)) is None
        usage, (failed, _) = _record(run, 2)
        assert usage.api is None and model_api_failure(usage.api) is None
        assert (failed.outcome, failed.own) == (CallOutcome.SERVER_ERROR, None)
        http = httpx.Client(proxy=run.proxy.url, timeout=20)
        address = f"http://127.0.0.1:{model_server.port}/v1"
        assert _chat(openai.OpenAI(base_url=address, api_key=KEY, http_client=http)) is None
        elsewhere = f"{other.url}/v1"
        assert _chat(openai.OpenAI(base_url=elsewhere, api_key="sk-x", http_client=http)) is None
        deadline = time.monotonic() + 5
        while (u := read_usage(run.data / "usage.json")) is None or u.unmetered is None:
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        other.close()
    assert (u.calls, u.other_names, u.models[OWN].input_tokens) == (3, 1, 300)
    assert u.unmetered is not None and u.unmetered.calls == 1
    assert u.unmetered.hosts == [f"127.0.0.1:{other.port}"] and not u.complete
    assert "elsewhere" not in u.models


def test_every_record_the_proxy_writes_is_part_of_the_image_contract(
    launch: Any, tmp_path: Path, upstream: Upstream, model_server: FakeModelAPI
) -> None:
    """A run with a model call, a forwarded request and a blocked commit, the proxy stopped:
    every record in its data dir is one the image's io.clawbench.contract covers, and reads as
    the shape the contract hashes. A new record, or a record out of its shape, fails here."""
    run = _run(launch, tmp_path, upstream, model_server)
    assert _chat(_client(run)) is None
    assert run.curl(f"https://{SHOP}/cart").status == "200"
    assert run.curl("-d", "item=mug", f"https://{SHOP}/checkout").status == "000"
    _record(run, 1)
    assert run.interception().request.url == f"https://{SHOP}/checkout"
    assert run.proxy.stop() == 0
    # mitmproxy's own output, the disk reserve, the block's empty signal: no record to parse
    not_records = {"mitmdump.log", RESERVE_FILE, ".stop-requested"}
    written = {p.name for p in run.data.iterdir()} - not_records
    assert written == set(PROXY_RECORDS), written
    for name, shape in PROXY_RECORDS.items():
        raw = (run.data / name).read_bytes()
        for line in raw.splitlines() if name == REQUESTS_FILE else [raw]:
            TypeAdapter(shape).validate_json(line)


def test_the_rule() -> None:
    """records.modelapi.model_api_failure on hand-made records."""
    api = ModelApiRecord(configured=True)
    assert model_api_failure(api) is None  # no call at all: nothing to say
    api.add(own=False, outcome=CallOutcome.AUTH, shape="a", failed=None)
    assert model_api_failure(api) is None  # only the agent's own calls failed
    api.add(own=True, outcome=CallOutcome.RATE_LIMITED, shape="a", failed=None)
    assert model_api_failure(api) == "model API failed: no reply in 1 call(s) (1 rate_limited)"
    api.add(own=True, outcome=CallOutcome.OK, shape="a", failed=None)
    assert model_api_failure(api) is None  # the model answered
    api.add(own=True, outcome=CallOutcome.CLIENT_GAVE_UP, shape="a", failed=None)
    assert model_api_failure(api) is None  # the client hung up: not the API's side
    api.add(own=True, outcome=CallOutcome.OK, shape="a", failed=None)
    api.add(own=True, outcome=CallOutcome.SERVER_ERROR, shape="a", failed=None)
    assert model_api_failure(api) is not None
    api.add(own=True, outcome=CallOutcome.SERVER_ERROR, shape="b", failed=None)
    assert model_api_failure(api) is None  # sent unlike any call that got a reply
    assert (
        ModelApiRecord().model_dump()
        == ModelApiRecord.model_validate_json(ModelApiRecord().model_dump_json()).model_dump()
    )
