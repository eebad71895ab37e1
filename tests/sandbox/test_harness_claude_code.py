"""Claude Code + Playwright MCP, installed in the image's harness layer, does a task through the
proxy, once with the browser and once with curl from its shell tool.

The fake model API with Claude Code's script (tests.support.fake_api: Anthropic Messages,
streamed SSE with tool calls) runs in its own container on the tests' internal network. Both
commits are blocked and credited, the fake site receives neither, and the tokens the proxy
counted from the streamed replies equal what the server streamed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from proxy_addon.records import read_interception
from sandbox.cli import main as sandbox_main
from sandbox.harnesses import CLAUDE_CODE
from sandbox.harnesses.claude_code.transcript import TIMES_FILE
from scorer.html_report.runpage import image_type
from scorer.html_report.runtext import single_run_view
from tests.sandbox.conftest import CASES
from tests.sandbox.model_servers import MODEL_HOST, ModelServer, harness_layer

pytestmark = pytest.mark.docker
KEY = "sk-ant-claude-code-test-0123456789"
CASE = CASES / "form-order"
DONE = "Ordered.\nTASK_STATUS: success"
BROWSER = {
    "steps": [
        {
            "text": "I'll open the order form.",
            "tool_use": [
                {"name": "browser_navigate", "input": {"url": "https://shop.clawbench.test/order"}}
            ],
            "usage": {"input_tokens": 1200, "output_tokens": 40},
        },
        {
            "tool_use": [{"name": "browser_snapshot", "input": {}}],
            "usage": {"input_tokens": 1500, "output_tokens": 20, "cache_read_input_tokens": 1000},
        },
        {
            "expect": "Place order",
            "tool_use": [
                {
                    "name": "browser_fill_form",
                    "input": {
                        "fields": [
                            {
                                "name": "Quantity",
                                "type": "textbox",
                                "target": {"$ref": ["spinbutton", "Quantity"]},
                                "value": "2",
                            },
                            {
                                "name": "Deliver to",
                                "type": "textbox",
                                "target": {"$ref": ["textbox", "Deliver to"]},
                                "value": "Alex Green",
                            },
                        ]
                    },
                }
            ],
            "usage": {"input_tokens": 2600, "output_tokens": 120, "cache_read_input_tokens": 1400},
        },
        {
            "tool_use": [{"name": "browser_take_screenshot", "input": {"type": "jpeg"}}],
            "usage": {"input_tokens": 2700, "output_tokens": 15},
        },
        {
            "tool_use": [
                {
                    "name": "browser_click",
                    "input": {
                        "element": "Place order button",
                        "target": {"$ref": ["button", "Place order"]},
                    },
                }
            ],
            "usage": {"input_tokens": 2900, "output_tokens": 30},
        },
        {
            "text": "Ordered.\nTASK_STATUS: success",
            "usage": {"input_tokens": 3000, "output_tokens": 9},
        },
    ]
}
CURL = {
    "steps": [
        {
            "text": "I'll order with curl.",
            "tool_use": [
                {
                    "name": "Bash",
                    "input": {
                        "command": "curl -sS --max-time 20 -X POST "
                        "https://shop.clawbench.test/api/order-form "
                        "-d item=lamp -d qty=2 --data-urlencode 'name=Alex Green'",
                        "description": "Place the order",
                    },
                }
            ],
            "usage": {"input_tokens": 1800, "output_tokens": 120},
        },
        {
            "text": "Ordered.\nTASK_STATUS: success",
            "usage": {"input_tokens": 2100, "output_tokens": 25},
        },
    ]
}


@pytest.fixture(scope="module")
def cc_image(docker_client, sandbox_image) -> str:
    return harness_layer(docker_client, sandbox_image, CLAUDE_CODE)


@pytest.fixture
def anthropic(docker_client, sandbox_image, internet) -> Iterator[Any]:
    servers: list[ModelServer] = []

    def start(script: dict[str, Any]) -> ModelServer:
        server = ModelServer(
            docker_client, sandbox_image, internet.network_name, {"claude": script}
        )
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.mark.parametrize("script", [BROWSER, CURL], ids=["browser", "curl"])
def test_claude_code_commits_through_the_proxy_and_is_blocked_and_credited(
    cc_image, internet, anthropic, tmp_path, script
) -> None:
    server = anthropic(script)
    models = tmp_path / "models.yaml"
    models.write_text(
        f"scripted-claude:\n  base_url: http://{MODEL_HOST}:8000\n"
        "  api_type: anthropic-messages\n  api_key: ${CC_TEST_KEY}\n"
    )
    before = len(internet.log())
    os.environ["CC_TEST_KEY"] = KEY
    try:
        code = sandbox_main(
            [
                "run",
                str(CASE),
                "--harness",
                "claude-code",
                "--model",
                "scripted-claude",
                "--models-yaml",
                str(models),
                "--image",
                cc_image,
                "--network",
                internet.network_name,
                "--upstream-ca",
                str(internet.ca),
                *(a for net in internet.subnets for a in ("--allow-private", net)),
                "--out",
                str(tmp_path / "out"),
                "--stop-grace",
                "3",
                "--max-steps",
                "8",
                "--no-preflight",  # the model's name resolves only on the tests' network
            ]
        )
    finally:
        del os.environ["CC_TEST_KEY"]
    (run_dir,) = (p.parent for p in (tmp_path / "out").rglob("run-meta.json"))
    assert code == 0, (run_dir / "data" / "agent.log").read_text()[-3000:]
    got = read_interception(run_dir / "data" / "interception.json")
    assert got.request is not None
    assert got.request["body"] == {"item": "lamp", "qty": "2", "name": "Alex Green"}
    assert not any(e["path"] == "/api/order-form" for e in internet.log()[before:])
    meta = json.loads((run_dir / "run-meta.json").read_text())
    assert meta["harness"] == "claude-code" and meta["model"] == "scripted-claude"
    assert (run_dir / "agent" / "transcript.jsonl").is_file()
    # the run page: Claude Code's tool calls placed among the requests by their arrival times,
    # the call that committed before the block
    lines = (run_dir / "agent" / "transcript.jsonl").read_bytes().splitlines()
    assert len((run_dir / "agent" / TIMES_FILE).read_text().splitlines()) == len(lines)
    timeline = single_run_view(run_dir).timeline
    assert timeline is not None and not [n for n in timeline.notes if "arrival" in n]
    order = [e.kind.value for e in timeline.events]
    block = order.index("block")
    assert "tool_call" in order[:block] and "model_call" in order[:block], order
    if script is BROWSER:  # Playwright MCP's screenshot, at its step
        (shot,) = [e for e in timeline.events if e.screenshot is not None]
        assert shot.screenshot and image_type(shot.screenshot.data or b"") == "image/jpeg"
    assert order[-1] == "end" or "end" in order[block:], order
    # the tokens the proxy read from the streamed replies are the ones the server streamed
    streamed = server.record()["usage_totals"]
    (counted,) = meta["agent_usage"]["models"].values()
    assert counted["calls"] == streamed["calls"] >= 1
    assert counted["output_tokens"] == streamed["output_tokens"]
    assert counted["input_tokens"] == streamed["input_tokens"]  # the cache's reads and writes in
    assert counted["cached_tokens"] == streamed["cached_tokens"]
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
