"""A broken model endpoint is an infra failure of its own kind, decided from the proxy's record.

Both real harnesses run in the sandbox on the tests' closed network against the scripted model
servers answering 401, 404, 429 forever or 502 on every call, or a port nothing listens on,
each harness through every mode (Claude Code's retries shortened the way it allows,
CLAUDE_CODE_MAX_RETRIES). Every run ends model_api_failure with the reason, the harness's own
word beside it, exit 2. A batch against a 502 endpoint stops after --stop-after such runs and
exits 3; --resume against a fixed endpoint completes it, and the final scores keep no trace of
the failed attempts but the re-run count.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sandbox.cli import main as sandbox_main
from sandbox.harnesses import BROWSER_USE, CLAUDE_CODE
from scorer.cli import main as score_main
from tests.sandbox.conftest import CASES
from tests.sandbox.model_servers import ModelServer, harness_layer

pytestmark = pytest.mark.docker
KEY = "sk-model-api-docker-KEY-6502"
CASE = CASES / "form-order"
# Claude Code's retries are shortened the way it allows; the servers say retry-after-ms 20.
CC_ENV = ("--env", "CLAUDE_CODE_MAX_RETRIES=2")
SCRIPTS = {"claude-code": {"claude": {"steps": []}}, "browser-use": {"browser_use": []}}
"""What each harness's fake model answers when it does not fail: a script with no steps."""


@pytest.fixture(scope="module")
def images(docker_client, sandbox_image) -> dict[str, str]:
    return {
        h.name: harness_layer(docker_client, sandbox_image, h) for h in (BROWSER_USE, CLAUDE_CODE)
    }


@pytest.fixture
def servers(docker_client, sandbox_image, internet) -> Iterator[Any]:
    started: list[ModelServer] = []

    def start(harness: str, alias: str, *extra: str) -> ModelServer:
        server = ModelServer(
            docker_client, sandbox_image, internet.network_name, SCRIPTS[harness], extra, alias
        )
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def _entry(name: str, harness: str, host: str, port: int = 8000) -> str:
    if harness == "claude-code":
        url, kind = f"http://{host}:{port}", "anthropic-messages"
    else:
        url, kind = f"http://{host}:{port}/v1", "openai-completions"
    return f"{name}:\n  base_url: {url}\n  api_type: {kind}\n  api_key: {KEY}\n"


def _argv(images: dict[str, str], internet: Any, harness: str, models: Path) -> list[str]:
    return [
        "--harness", harness, "--models-yaml", str(models), "--image", images[harness],
        "--network", internet.network_name, "--upstream-ca", str(internet.ca),
        *(a for net in internet.subnets for a in ("--allow-private", net)),
        "--stop-grace", "3", "--max-steps", "3",
        "--no-preflight",  # the model's name resolves only on the tests' network
        *(CC_ENV if harness == "claude-code" else ()),
    ]  # fmt: skip


def _no_key(run_dir: Path) -> None:
    for path in run_dir.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


MODES = {
    # (harness, mode): what the failure reason names
    ("claude-code", "401"): "HTTP 401 (authentication_error)",
    ("claude-code", "404"): "HTTP 404 (not_found_error)",
    ("claude-code", "429"): "HTTP 429 (rate_limit_error)",
    ("claude-code", "502"): "HTTP 502 (api_error)",
    ("claude-code", "closed port"): "last: connection from http://m401-cc.clawbench.test:8001",
    ("browser-use", "401"): "HTTP 401 (invalid_api_key)",
    ("browser-use", "404"): "HTTP 404 (model_not_found)",
    ("browser-use", "429"): "HTTP 429 (rate_limit_exceeded)",
    ("browser-use", "502"): "HTTP 502 (server_error)",
    ("browser-use", "closed port"): "last: connection from http://m401-bu.clawbench.test:8001",
}


def test_every_way_the_model_api_fails_is_a_model_api_failure(
    images, internet, servers, tmp_path
) -> None:
    models = tmp_path / "models.yaml"
    entries = []
    for harness, mode in MODES:
        tag = "cc" if harness == "claude-code" else "bu"
        name = f"{tag}-{mode.replace(' ', '-')}"
        if mode == "closed port":  # the 401 server's name, on a port nothing listens on
            entries.append(_entry(name, harness, f"m401-{tag}.clawbench.test", 8001))
            continue
        servers(harness, f"m{mode}-{tag}.clawbench.test", "--fail", mode)
        entries.append(_entry(name, harness, f"m{mode}-{tag}.clawbench.test"))
    models.write_text("".join(entries))

    def run(key: tuple[str, str]) -> tuple[int, Path]:
        harness, mode = key
        name = f"{'cc' if harness == 'claude-code' else 'bu'}-{mode.replace(' ', '-')}"
        out = tmp_path / name
        argv = ["run", str(CASE), "--model", name, "--out", str(out)]
        code = sandbox_main([*argv, *_argv(images, internet, harness, models)])
        (run_dir,) = (p.parent for p in out.rglob("run-meta.json"))
        return code, run_dir

    with ThreadPoolExecutor(4) as pool:
        results = dict(zip(MODES, pool.map(run, MODES), strict=True))
    for (harness, mode), (code, run_dir) in results.items():
        meta = json.loads((run_dir / "run-meta.json").read_text())
        why = meta.get("failure_reason") or ""
        log = (run_dir / "data" / "agent.log").read_text(errors="replace")[-2000:]
        assert meta["result_category"] == "model_api_failure", (harness, mode, meta, log)
        assert code == 2 and meta["infra_failure"] is True
        assert why.startswith("model API failed: no reply in ") and MODES[harness, mode] in why
        api = meta["agent_usage"]["api"]
        assert api["own_calls"] >= 1 and api["own_replies"] == 0 and api["other_calls"] == 0
        assert meta["stop_reason"] in ("agent_exited", "agent_idle"), meta["stop_reason"]
        assert "agent_claim" in meta  # the harness's own word, shown beside
        if harness == "claude-code":
            assert meta["agent_claim"]["error"], meta["agent_claim"]
        _no_key(run_dir)


def test_a_batch_stops_on_a_broken_endpoint_and_resume_completes_it(
    images, internet, servers, tmp_path, capsys
) -> None:
    corpus = tmp_path / "corpus"
    for case in ("c1", "c2", "c3"):
        shutil.copytree(CASE, corpus / case)
    alias = "mbatch.clawbench.test"
    models = tmp_path / "models.yaml"
    models.write_text(_entry("cc-batch", "claude-code", alias))
    broken = servers("claude-code", alias, "--fail", "502")
    argv = ["batch", str(corpus), "--model", "cc-batch", "--out", str(tmp_path / "out")]
    argv += [*_argv(images, internet, "claude-code", models), "--concurrency", "1"]
    assert sandbox_main([*argv, "--stop-after", "2"]) == 3
    err = capsys.readouterr().err
    (batch,) = (tmp_path / "out").iterdir()
    assert "STOP  2 runs in a row ended model_api_failure (model API failed" in err
    assert "the batch stopped after 2 runs in a row ended model_api_failure" in err
    assert f"--resume {batch}`" in err and "1 run(s) not started" in err
    summary = json.loads((batch / "batch-summary.json").read_text())
    assert [j["status"] for j in summary["jobs"]] == ["error", "error", "skipped"]

    broken.close()  # the endpoint fixed: the model answers (and gives up on the task)
    servers("claude-code", alias)
    assert sandbox_main([*argv, "--resume", str(batch)]) == 0
    summary = json.loads((batch / "batch-summary.json").read_text())
    assert [(j["status"], j["result_category"]) for j in summary["jobs"]] == [
        ("failed", "model_not_intercepted")
    ] * 3
    capsys.readouterr()
    assert score_main([str(batch), "--no-judge", "--tasks", str(corpus)]) == 0
    scored = json.loads((batch / "rescore-summary.json").read_text())
    assert (scored["n_total"], scored["n_model_not_intercepted"], scored["n_rerun"]) == (3, 3, 2)
    assert (scored["n_infra_failure"], scored["n_model_api_failure"]) == (0, 0)
    counted = [t for t in scored["tasks"] if t["status"] == "counted"]
    assert {t["result_category"] for t in counted} == {"model_not_intercepted"}
    assert "incomplete" not in capsys.readouterr().err


@pytest.mark.parametrize("command", ["run", "batch"])
def test_a_model_or_judge_that_fails_its_preflight_starts_no_container(
    command, docker_client, images, internet, tmp_path, capsys
) -> None:
    """With the engine there and the image right: one call to the model (then to the judge),
    exit 2 naming the entry, the URL and what came back, no container of the image, no run or
    batch directory."""
    from tests.support.fake_api import error, start_judge_server, start_model_api

    api, judge = start_model_api(), start_judge_server()
    api.api_key = "sk-the-right-one-0000"
    judge.preflight = error(401, "bad judge key")
    try:
        models = tmp_path / "models.yaml"
        models.write_text(
            f"bad-key:\n  base_url: {api.url}/v1\n  api_type: openai-completions\n"
            f"  api_key: {KEY}\n"
            f"good:\n  base_url: {api.url}/v1\n  api_type: openai-completions\n"
            f"  api_key: {api.api_key}\n"
            f"judge-x:\n  base_url: {judge.base_url}\n  api_type: openai-completions\n"
            "  api_key: judge-key-00000000\n"
        )
        image = images["browser-use"]

        def ours() -> int:
            return len(docker_client.containers.list(all=True, filters={"ancestor": image}))

        before = ours()
        task = str(CASE if command == "run" else CASE.parent)
        argv = [command, task, "--out", str(tmp_path / "out")]
        argv += [a for a in _argv(images, internet, "browser-use", models) if a != "--no-preflight"]
        assert sandbox_main([*argv, "--model", "bad-key"]) == 2
        err = capsys.readouterr().err
        assert f"pre-flight: agent model 'bad-key' ({models}): {api.url}/v1/chat/completions" in err
        said = "HTTP 401 (authentication_error: fake authentication_error (401)): the key was"
        assert said in err
        assert sandbox_main([*argv, "--model", "good", "--judge-model", "judge-x"]) == 2
        err = capsys.readouterr().err
        assert "pre-flight: judge 'judge-x'" in err and "HTTP 401" in err and "bad judge key" in err
        assert ours() == before and not (tmp_path / "out").exists()
        assert len(api.calls) == 2 and judge.preflights == 1 and judge.count == 0
        assert KEY not in err
    finally:
        api.close()
        judge.close()
