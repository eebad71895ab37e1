"""The claude-code driver's pure parts: its argv and environment, the transcript's summary."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest

from sandbox.harnesses.claude_code import anthropic_base_url
from sandbox.harnesses.claude_code.invocation import build_command, claude_env, mcp_config
from sandbox.harnesses.claude_code.transcript import TIMES_FILE, Transcript, claim_of


@pytest.mark.parametrize(
    ("given", "wanted"),
    [
        ("https://api.anthropic.com/v1", "https://api.anthropic.com"),
        ("https://api.anthropic.com/v1/", "https://api.anthropic.com"),
        ("https://api.anthropic.com", "https://api.anthropic.com"),
        ("https://host.test/anthropic/v1", "https://host.test/anthropic"),
        ("https://host.test/v1beta", "https://host.test/v1beta"),
    ],
)
def test_anthropic_base_url(given: str, wanted: str) -> None:
    assert anthropic_base_url(given) == wanted


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("Done.\nTASK_STATUS: success", True),
        ("TASK_STATUS: failure", False),
        ("**TASK_STATUS: Success**", True),
        ("TASK_STATUS: success\nwait, no.\nTASK_STATUS: failure", False),
        ("I posted it.", None),
        ("", None),
    ],
)
def test_claim_of(text: str, claim: bool | None) -> None:
    assert claim_of(text) is claim


def test_command_limits_tools_and_ends_options_before_the_instruction(tmp_path: Path) -> None:
    cmd = build_command(tmp_path, "m", 7, tmp_path / "mcp.json", "extra", str(tmp_path), "--x")
    assert cmd[0] == str(tmp_path / "node_modules" / ".bin" / "claude")
    assert cmd[-2:] == ["--", "--x"]  # an instruction starting with '-' is still the prompt
    pairs = dict(itertools.pairwise(cmd))
    assert pairs["--max-turns"] == "7" and pairs["--permission-mode"] == "dontAsk"
    assert pairs["--tools"] == "Bash,Read"
    assert pairs["--allowedTools"] == "mcp__playwright__*,Bash,Read"
    assert pairs["--add-dir"] == str(tmp_path) and "--strict-mcp-config" in cmd
    assert "--add-dir" not in build_command(tmp_path, "m", 7, tmp_path, None, "/nonexistent", "x")


def test_env_carries_the_key_only_as_anthropic_api_key() -> None:
    base = {"CLAWBENCH_AGENT_API_KEY": "k", "HTTPS_PROXY": "http://p:1", "CLAWBENCH_CA_CERT": "/ca"}
    env = claude_env(base, "https://h.test/v1", "k", "m")
    assert [name for name, value in env.items() if value == "k"] == ["ANTHROPIC_API_KEY"]
    assert env["ANTHROPIC_BASE_URL"] == "https://h.test" and env["HTTPS_PROXY"] == "http://p:1"
    assert env["NODE_EXTRA_CA_CERTS"] == "/ca" and env["DISABLE_TELEMETRY"] == "1"


def test_mcp_config_uses_the_system_chromium_through_the_proxy(tmp_path: Path) -> None:
    server = mcp_config(tmp_path, "/usr/bin/chromium", "http://127.0.0.1:8080", tmp_path)
    args = server["mcpServers"]["playwright"]["args"]
    assert {"--headless", "--isolated", "--no-sandbox"} <= set(args)
    assert args[args.index("--executable-path") + 1] == "/usr/bin/chromium"
    assert args[args.index("--proxy-server") + 1] == "http://127.0.0.1:8080"


def test_transcript_scrubs_the_key_and_summarises(tmp_path: Path) -> None:
    events = [
        {"type": "system", "subtype": "init", "claude_code_version": "9.9", "mcp_servers": []},
        {"type": "assistant", "message": {"id": "a", "content": [
            {"type": "tool_use", "name": "Bash", "input": {"command": "echo sk-secret"}}]}},
        {"type": "user", "message": {"content": [
            {"type": "tool_result", "is_error": True, "content": "sk-secret"}]}},
        {"type": "assistant", "message": {"id": "b", "content": [
            {"type": "text", "text": "ok\nTASK_STATUS: success"}]}},
    ]  # fmt: skip
    sink = Transcript(tmp_path / "t.jsonl", secrets=["sk-secret"])
    for event in events:
        sink.line(json.dumps(event).encode() + b"\n")
    sink.line(b"not json")
    sink.close()
    assert b"sk-secret" not in (tmp_path / "t.jsonl").read_bytes()
    result = sink.result("claude-code", {"claude_code": "9.9", "playwright_mcp": "1"}, "m")
    assert result["success"] is True and result["steps"] == 2
    assert result["tool_calls"] == {"Bash": 1} and result["tool_errors"] == 1
    assert result["error"] == "no result event (claude stopped before it finished)"
    assert sink.unparsed == 1 and sink.lines == 5
    times = (tmp_path / TIMES_FILE).read_text().splitlines()  # one arrival time per line
    assert len(times) == 5 and all(abs(float(t) - time.time()) < 60 for t in times)
