"""The LLM judge's stand-in for the demo's runs: a loopback judge server (the openai client's
real calls) that fails exactly the demo's wrong payloads, and the models.yaml that names it."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.fake_api import Call, FakeModelAPI, Reply, start_judge_server, verdict

KEY = "sk-demo-test-5b1f7e0c2a9d4c3e"
KEY_VAR = "DEMO_JUDGE_KEY"
WRONG_MARKERS = (
    '"size":"medium"',  # 001: the medium mug
    '"rating":"5"',  # 002: five stars
    '"filename":"","content_type":"application/octet-stream","size":0',  # 003: no resume
    '"list":"weekly-digest"}',  # 010: unsubscribed from the wrong list
)
"""What the scripted judge calls a mismatch, in the compact request dump it is shown."""


def demo_verdict(call: Call) -> Reply:
    """A stand-in for the LLM: mismatch iff the request between the markers is a wrong one."""
    found = re.search(r"<<<REQUEST (\w+)>>>\n(.*)\n<<<END REQUEST \1>>>", call.user, re.S)
    assert found, call.user
    wrong = next((m for m in WRONG_MARKERS if m in found.group(2)), None)
    return verdict(wrong is None, f"found {wrong}" if wrong else "as asked")


def start_demo_judge() -> FakeModelAPI:
    server = start_judge_server()
    server.script(demo_verdict)
    return server


def judge_models_yaml(path: Path, judge: FakeModelAPI) -> Path:
    """A models.yaml whose entry `loop` is the judge, its key from $DEMO_JUDGE_KEY."""
    path.write_text(
        f"loop:\n  base_url: {judge.base_url}\n  api_type: openai-completions\n"
        f"  api_key: ${{{KEY_VAR}}}\n"
    )
    return path


__all__ = [
    "KEY",
    "KEY_VAR",
    "WRONG_MARKERS",
    "demo_verdict",
    "judge_models_yaml",
    "start_demo_judge",
]
