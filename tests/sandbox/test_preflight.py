"""Pre-flight alone: `clawbench-sandbox check` calls the agent's model and the judge once each; a
failure is one line naming the entry, the URL and what came back, exit 2. The model APIs are the
real fake ones on loopback. (`run` and `batch` do the same before any container starts:
tests/sandbox/test_model_api_docker.py counts the containers.)"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.cli import main as cli_main
from tests.support.fake_api import FakeModelAPI, start_judge_server, start_model_api
from tests.support.model_replies import Reply

KEY = "sk-preflight-KEY-8086"


@pytest.fixture
def api() -> Iterator[FakeModelAPI]:
    srv = start_model_api()
    srv.api_key = KEY
    yield srv
    srv.close()


@pytest.fixture
def judge() -> Iterator[FakeModelAPI]:
    server = start_judge_server()
    yield server
    server.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _models(tmp_path: Path, api: FakeModelAPI, judge: FakeModelAPI) -> Path:
    closed = _closed_port()
    entries = {
        "good": (f"{api.url}/v1", "openai-completions", KEY),
        "claude": (api.url, "anthropic-messages", KEY),
        "bad-key": (f"{api.url}/v1", "openai-completions", "sk-wrong-0000"),
        "no-such-model": (f"{api.url}/v1", "openai-completions", KEY),
        "closed-port": (f"http://127.0.0.1:{closed}/v1", "openai-completions", KEY),
        "judge-x": (judge.base_url, "openai-completions", "judge-key"),
    }
    path = tmp_path / "models.yaml"
    path.write_text(
        "".join(
            f"{name}:\n  base_url: {url}\n  api_type: {kind}\n  api_key: {key}\n"
            for name, (url, kind, key) in entries.items()
        )
    )
    return path


def test_check_calls_each_endpoint_once_and_names_what_failed(
    tmp_path: Path, api: FakeModelAPI, judge: FakeModelAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    models = _models(tmp_path, api, judge)
    yaml = ["--models-yaml", str(models)]
    assert cli_main(["check", "--model", "good", "--judge-model", "judge-x", *yaml]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"ok: agent model 'good' ({models}) at {api.url}/v1/chat/completions",
        f"ok: judge 'judge-x' ({models}) at {judge.base_url}/chat/completions",
    ]
    assert cli_main(["check", "--model", "claude", "--harness", "claude-code", *yaml]) == 0
    assert [(c.path, c.headers["x-api-key"]) for c in api.calls[-1:]] == [("/v1/messages", KEY)]
    assert judge.preflights == 1 and judge.count == 0  # a pre-flight, not a verdict
    capsys.readouterr()

    failures = {
        "bad-key": "answered HTTP 401 (authentication_error: fake authentication_error (401)): "
        "the key was refused",
        "no-such-model": "answered HTTP 404 (model_not_found: fake model_not_found (404)): the "
        "model name or the base_url is wrong",
        "closed-port": "could not reach http://127.0.0.1:",
    }
    for entry, said in failures.items():
        if entry == "no-such-model":
            api.replies.append(Reply(status=404, error_type="model_not_found"))
        assert cli_main(["check", "--model", entry, *yaml]) == 2, entry
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"clawbench-sandbox: pre-flight: agent model {entry!r} ({models})")
        assert said in err and "\n" not in err and KEY not in err, err
    assert cli_main(["check", "--model", "good", "--harness", "claude-code", *yaml]) == 2
    assert "api_type 'openai-completions': harness claude-code calls" in capsys.readouterr().err
    assert cli_main(["check", *yaml]) == 2
