"""The fake model API's Anthropic Messages with Claude Code's script, on the wire: a real server
on loopback, a plain HTTP client, the event stream parsed the way an SDK parses it (events
reassembled into a message)."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.claude_script import ModelRequest, Script, ScriptError, Usage, script_from_json
from tests.support.fake_api import FakeModelAPI, start_model_api
from tests.support.model_replies import Reply, ToolUse
from tests.support.playwright_snapshot import find_ref, nodes

SNAPSHOT = """### Snapshot
```yaml
- generic [active] [ref=e1]:
  - combobox "Rating" [ref=e8]:
    - option "5" [selected]
  - textbox "Title" [ref=e10]
  - textbox "Say \\"hi\\"" [ref=e11]
  - button "Post review" [ref=e15] [cursor=pointer]
```"""
TOOLS = [{"name": "mcp__playwright__browser_click", "input_schema": {}}, {"name": "Bash"}]
KEY = "sk-test-key"


def post(
    server: FakeModelAPI,
    body: dict[str, Any],
    key: str = KEY,
    path: str = "/v1/messages?beta=true",
) -> tuple[int, str, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request(
        "POST", path, json.dumps(body), {"x-api-key": key, "content-type": "application/json"}
    )
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, resp.getheader("content-type") or "", data


def assemble(stream: bytes) -> tuple[list[str], dict[str, Any]]:
    """The event names and the message they build, as an SDK's accumulator does."""
    names: list[str] = []
    message: dict[str, Any] = {}
    partial: dict[int, str] = {}
    for chunk in stream.decode().split("\n\n"):
        if not chunk.strip():
            continue
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        data = json.loads(lines["data"])
        names.append(lines["event"])
        assert data["type"] == lines["event"]
        if data["type"] == "message_start":
            message = data["message"]
        elif data["type"] == "content_block_start":
            message["content"].append(data["content_block"])
        elif data["type"] == "content_block_delta":
            delta, block = data["delta"], message["content"][data["index"]]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
        elif data["type"] == "content_block_stop" and data["index"] in partial:
            message["content"][data["index"]]["input"] = json.loads(partial[data["index"]])
        elif data["type"] == "message_delta":
            message["stop_reason"] = data["delta"]["stop_reason"]
            message["usage"]["output_tokens"] = data["usage"]["output_tokens"]
    return names, message


def turn(*results: str) -> dict[str, Any]:
    """A request after tool calls whose results are these texts."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Post the review."}]
    for i, text in enumerate(results):
        use = {"type": "tool_use", "id": f"t{i}", "name": "x", "input": {}}
        messages.append({"role": "assistant", "content": [use]})
        block = {
            "type": "tool_result",
            "tool_use_id": f"t{i}",
            "content": [{"type": "text", "text": text}],
        }
        messages.append({"role": "user", "content": [block]})
    return {"model": "m-1", "max_tokens": 100, "stream": True, "tools": TOOLS, "messages": messages}


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[FakeModelAPI] = []

    def _serve(script: Script) -> FakeModelAPI:
        servers.append(start_model_api(script, api_key=KEY))
        return servers[-1]

    yield _serve
    for server in servers:
        server.close()


CLICK = {"target": {"$ref": ["button", "Post review"]}, "note": "é" * 40}


def test_stream_carries_text_and_tool_use_and_usage(serve: Any) -> None:
    long_text = "Clicking the button now, " * 5
    server = serve(
        script_from_json(
            [
                {
                    "text": long_text,
                    "usage": {"input_tokens": 700, "output_tokens": 90},
                    "tool_use": [{"name": "browser_click", "input": CLICK}],
                },
            ]
        )
    )
    status, ctype, data = post(server, turn(SNAPSHOT))
    assert status == 200 and ctype.startswith("text/event-stream")
    names, message = assemble(data)
    assert names[:2] == ["message_start", "ping"] and names[-2:] == [
        "message_delta",
        "message_stop",
    ]
    assert names.count("content_block_delta") > 4  # text and JSON both arrive in pieces
    text, use = message["content"]
    assert text == {"type": "text", "text": long_text}
    assert use["name"] == "mcp__playwright__browser_click"
    assert use["input"] == {"target": "e15", "note": "é" * 40}
    assert message["stop_reason"] == "tool_use" and message["model"] == "m-1"
    assert message["usage"]["input_tokens"] == 700 and message["usage"]["output_tokens"] == 90
    assert server.usage_totals()["output_tokens"] == 90


def test_whole_message_side_requests_and_the_end_of_the_script(serve: Any) -> None:
    server = serve(
        script_from_json(
            {"usage": {"input_tokens": 5, "output_tokens": 2}, "steps": [{"text": "done"}]}
        )
    )
    side = {"model": "m", "max_tokens": 1, "messages": [{"role": "user", "content": "quota"}]}
    status, _, data = post(server, side)
    assert status == 200 and json.loads(data)["content"][0]["text"] == "OK"
    status, ctype, data = post(server, {**turn(), "stream": False})
    reply = json.loads(data)
    assert ctype == "application/json" and reply["content"] == [{"type": "text", "text": "done"}]
    assert reply["stop_reason"] == "end_turn" and reply["usage"]["input_tokens"] == 5
    _, _, data = post(server, turn())  # past the last step
    assert "no more steps" in assemble(data)[1]["content"][0]["text"]
    assert [c.step for c in server.calls] == [None, 0, None]
    assert server.usage_totals() == {
        "calls": 3,
        "input_tokens": 5 + 10 + 10,
        "output_tokens": 2 + 1 + 1,
        "cached_tokens": 0,
    }


def test_a_step_that_cannot_be_taken_ends_the_conversation(serve: Any) -> None:
    click = {"name": "browser_click", "input": {"target": {"$ref": ["button", "Buy"]}}}
    script = script_from_json([{"tool_use": [click]}, {"text": "never"}])
    server = serve(script)
    _, _, data = post(server, turn(SNAPSHOT))
    message = assemble(data)[1]
    assert message["stop_reason"] == "end_turn"
    assert "no button named 'Buy'" in message["content"][0]["text"]
    _, _, data = post(server, turn(SNAPSHOT))
    assert "never" not in data.decode()
    assert len(script.errors) == 1 and script.steps_taken == 1


def test_unknown_paths_and_a_wrong_key_are_refused_and_recorded(serve: Any) -> None:
    script = script_from_json([{"text": "hi"}])
    server = serve(script)
    assert post(server, turn(), key="wrong")[0] == 401
    assert post(server, {}, path="/v1/complete")[0] == 404
    status, _, data = post(server, turn(), path="/v1/messages/count_tokens")
    assert status == 200 and json.loads(data)["input_tokens"] > 0
    assert [c.status for c in server.calls] == [401, 404, 200]
    assert script.steps_taken == 0 and server.usage_totals()["calls"] == 0


def test_expect_and_python_steps() -> None:
    def echo(request: ModelRequest) -> Reply:
        return Usage(1, 1).reply(None, (ToolUse(request.tool_name("Bash"), {"command": "echo"}),))

    script = script_from_json([{"expect": "Title", "text": "ok"}])
    with pytest.raises(ScriptError, match="expected 'Title'"):
        script.steps[0](ModelRequest(turn("nothing here")))
    assert script.steps[0](ModelRequest(turn(SNAPSHOT))).text == "ok"
    assert echo(ModelRequest(turn())).tool_uses[0].name == "Bash"
    with pytest.raises(ScriptError, match="unknown keys"):
        script_from_json([{"txt": "typo"}])
    with pytest.raises(ScriptError, match="non-negative"):
        script_from_json([{"text": "x", "usage": {"input_tokens": -1}}])


@pytest.mark.parametrize(
    ("role", "name", "exact", "ref"),
    [
        ("textbox", "Title", True, "e10"),
        ("textbox", "title", True, "e10"),
        ("button", "Post", True, None),
        ("button", "Post", False, "e15"),
        ("textbox", 'Say "hi"', True, "e11"),
        ("combobox", "Rating", True, "e8"),
        ("option", "5", True, None),
    ],
)
def test_find_ref(role: str, name: str, exact: bool, ref: str | None) -> None:
    assert find_ref(SNAPSHOT, role, name, exact=exact) == ref
    assert [n.ref for n in nodes(SNAPSHOT)] == ["e1", "e8", "e10", "e11", "e15"]


def test_cli_serves_a_script_file_and_keeps_a_record(tmp_path: Path) -> None:
    script, record = tmp_path / "script.json", tmp_path / "record.json"
    steps = [{"text": "hello", "usage": {"input_tokens": 3, "output_tokens": 4}}]
    script.write_text(json.dumps({"claude": steps}))
    cmd = [
        sys.executable,
        "-m",
        "tests.support.fake_api",
        "--script",
        str(script),
        "--record",
        str(record),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().strip().rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("POST", "/v1/messages", json.dumps(turn()))
        assert b"hello" in conn.getresponse().read()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    kept = json.loads(record.read_text())
    assert kept["usage_totals"]["input_tokens"] == 3 and kept["steps_taken"] == 1
