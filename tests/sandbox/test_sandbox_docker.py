"""The sandbox against a real Docker engine, inside a closed world the tests build.

An --internal network with an IPv6 subnet (no route off the machine) holds the fake site
(shop.clawbench.test: HTTP 80/8080, HTTPS 443, UDP 443/5353) and the agent's container. Tests
send traffic only there. The slow 1-minute time-limit run starts first, in the background.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import docker.errors
import pytest

from proxy_addon.matching import HttpRequest, Matcher, parse_body
from proxy_addon.records import REQUESTS_FILE, RequestLogEntry, read_interception, read_run_meta
from proxy_addon.records.har import HAR_FILE, read_har
from proxy_addon.records.requestlog import read_request_log
from proxy_addon.tasks import load_task
from sandbox.cli import main as sandbox_main
from sandbox.container.contract import CONTRACT_LABEL, contract_id
from sandbox.host import AgentChoice, check_image, run_task
from sandbox.host.docker_api import BATCH_LABEL, LABEL, local_image
from sandbox.runs import RunOutcome
from scorer.html_report.cli import main as report_main
from tests.conftest import TEST_CASES
from tests.sandbox.conftest import CASES, closed_args, closed_request
from tests.support.fake_api import error, start_judge_server, verdict
from tests.support.interrupt import interruptible

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DEMO_CASE = "001-shop-checkout-mug"  # test-cases/clawbench-demo: POST /api/checkout


def _quick_cmd(
    client: Any, internet: Any, image: str, out: Path, command: str, **over: Any
) -> RunOutcome:
    """Run a shell command as the agent of the quick-null task (a 1-minute task, no commit)."""
    agent = AgentChoice("cmd", command=command)
    return run_task(client, closed_request(internet, image, out, "quick-null", agent, **over))


def _requests(data: Path) -> list[RequestLogEntry]:
    """The agent's requests in data/requests.jsonl, through its reader."""
    lines = read_request_log(data / REQUESTS_FILE)
    return [line for line in lines if isinstance(line, RequestLogEntry)]


def _site_matches(internet: Any, case: str) -> list[dict[str, Any]]:
    """Requests the fake site received that the case's eval_schema would have matched."""
    matcher = Matcher(load_task(CASES / case).eval_schema)
    hits = []
    for entry in internet.log():
        if entry["proto"] not in ("http", "https"):
            continue
        url = f"{entry['proto']}://{entry['host']}{entry['path']}"
        body = parse_body(entry["body"].encode(), "application/json", None).value
        if matcher.match(HttpRequest(entry["method"], url, body)).match:
            hits.append(entry)
    return hits


@pytest.fixture(scope="module", autouse=True)
def time_limit_run(docker_client, sandbox_image, internet, tmp_path_factory):
    """Start the 1-minute run in the background; its test collects it last."""
    pool = ThreadPoolExecutor(max_workers=1)
    agent = AgentChoice("cmd", command="trap '' TERM; while true; do sleep 1; done")
    req = closed_request(
        internet,
        sandbox_image,
        tmp_path_factory.mktemp("slow"),
        "quick-null",
        agent,
        stop_grace_s=1,
    )
    future = pool.submit(run_task, docker_client, req)
    yield future
    pool.shutdown(wait=True)


def test_image_holds_no_build_ca_bundle(docker_client, sandbox_image) -> None:
    out = docker_client.containers.run(
        sandbox_image,
        entrypoint=["sh", "-c", "ls /tmp; find / -xdev -name 'build-ca.pem'"],
        remove=True,
        network_mode="none",
    )
    assert out.decode().strip() == ""
    history = docker_client.images.get(sandbox_image).history()
    assert not any("build-ca.pem" in (layer.get("CreatedBy") or "") for layer in history)


@pytest.mark.parametrize("command", ["run", "batch"])
def test_a_missing_wrong_or_stale_image_is_one_error_before_anything_starts(
    command, docker_client, sandbox_image, stale_images, internet, tmp_path, capsys
) -> None:
    """A missing image, --harness with an image without that harness's layer, or an image built
    from other code (its io.clawbench.contract label differs or is missing): one error naming
    the image and the build command that makes one, before any container or run directory."""
    models = tmp_path / "models.yaml"
    models.write_text(
        "m:\n  base_url: http://model.test/v1\n  api_type: openai-completions\n  api_key: k\n"
    )
    target = CASES / "quick-null" if command == "run" else CASES
    harness = ["--harness", "browser-use", "--model", "m", "--models-yaml", str(models)]
    missing = f"{sandbox_image}-nothing-browser-use"
    other, unlabelled = stale_images
    ours = contract_id()
    for image, why, agent in (
        (
            f"{sandbox_image}-nothing",
            f"image {sandbox_image}-nothing is missing: build it with `clawbench-sandbox build "
            f"--tag {sandbox_image}-nothing`",
            [],  # no harness: the image itself
        ),
        (
            sandbox_image,
            f"image {sandbox_image} does not hold the browser-use harness (no "
            "io.clawbench.harness label): build the harness's image with `clawbench-sandbox "
            f"build --tag {sandbox_image} --harness browser-use` and run with --image "
            f"{sandbox_image}-browser-use",
            harness,
        ),
        (
            missing,
            f"image {missing} is missing: build it with `clawbench-sandbox build --tag "
            f"{sandbox_image}-nothing --harness browser-use`",
            harness,
        ),
        (
            other,
            f"image {other} was built from other clawbench code (its io.clawbench.contract label "
            f"is '0123456789abcdef', this code's is {ours!r}): build it with `clawbench-sandbox "
            f"build --tag {other.removesuffix('-browser-use')} --harness browser-use`",
            harness,
        ),
        (
            unlabelled,
            f"image {unlabelled} was built from other clawbench code (no io.clawbench.contract "
            f"label, this code's is {ours!r}): build it with `clawbench-sandbox build --tag "
            f"{unlabelled}`",
            [],
        ),
    ):
        out = tmp_path / "out"
        code = sandbox_main([command, str(target), *agent, *closed_args(internet, image, out)])
        assert (code, capsys.readouterr().err) == (2, f"clawbench-sandbox: {why}\n")
        assert not list(out.rglob("*"))  # no run directory: nothing started
    for image in stale_images:  # and no container of either
        assert docker_client.containers.list(all=True, filters={"ancestor": image}) == []
    assert check_image(docker_client, sandbox_image, None).labels[CONTRACT_LABEL] == ours


def test_a_base_image_that_cannot_be_pulled_is_one_line_naming_base_image(
    docker_client, capsys, monkeypatch, tmp_path
) -> None:
    """Not here, and its registry (loopback port 9) refuses: the build says to name a local
    base, not the daemon's raw pull error; nothing is tagged. Without --ca-bundle it says which
    bundle of this machine's its downloads trust ($SSL_CERT_FILE's, PIP_CERT being unset)."""
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    monkeypatch.delenv("PIP_CERT", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    token = secrets.token_hex(3)
    base, tag = f"127.0.0.1:9/clawbench-no-such-base:{token}", f"clawbench-sandbox:never-{token}"
    code = sandbox_main(["build", "--base-image", base, "--tag", tag])
    err = capsys.readouterr().err
    assert code == 2 and err.endswith(
        f"\nclawbench-sandbox: base image {base} is not on this machine and cannot be pulled: "
        "give --base-image IMAGE, an image already here (see `docker images`)\n"
    ), err
    assert err.splitlines()[:2] == [
        f"the build's downloads trust {bundle} ($SSL_CERT_FILE; or give --ca-bundle)",
        f"pulling the base image {base}",
    ]
    assert len(err.splitlines()) == 3
    assert local_image(docker_client, tag) is None


def test_scripted_agent_batch_is_intercepted_scored_and_resumable(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    demo = TEST_CASES / "clawbench-demo"
    if not (demo / DEMO_CASE / "task.json").is_file():
        pytest.fail(f"{demo / DEMO_CASE}/task.json is missing (the project's demo test-case)")
    corpus = tmp_path / "corpus"
    shutil.copytree(demo / DEMO_CASE, corpus / DEMO_CASE)
    script = CASES / "shop-checkout" / "script.json"
    out = tmp_path / "out"
    before = len(internet.log())
    batch_args = [
        "batch",
        str(corpus),
        "--agent",
        "scripted",
        "--script",
        str(script),
        *closed_args(internet, sandbox_image, out),
    ]
    assert sandbox_main(batch_args) == 0
    (batch,) = out.glob("batch-*")
    (run,) = (batch / "none").iterdir()
    assert run.name.startswith(f"scripted-{DEMO_CASE}-none-")

    # The first checkout POST is the demo task's commit: blocked, recorded, never delivered,
    # and nothing after it was sent (the agent was stopped on .stop-requested).
    view = read_interception(run / "data" / "interception.json")
    assert view.intercepted and view.request["url"] == "https://shop.clawbench.test/api/checkout"
    assert view.request["body"] == {"item": "lamp", "qty": 1}
    paths = [e.get("path") for e in internet.log()[before:]]
    assert paths == ["/", "/api/cart"]
    logged = _requests(run / "data")
    # The next checkout may leave before the agent is stopped: it is blocked too (and counted).
    assert [e.matched for e in logged[:3]] == [False, False, True]
    assert all(e.blocked for e in logged[2:]) and len(logged) <= 4
    assert view.blocked_count == len(logged) - 2
    # data/traffic.har, written at record time: the same requests, the commit credited
    entries = read_har(run / "data" / HAR_FILE).log.entries
    assert [e.request.url for e in entries] == [e.url for e in logged]
    assert [e.clawbench.credited for e in entries[:3]] == [False, False, True]

    task_file = demo / DEMO_CASE / "task.json"
    task = load_task(task_file)
    assert (run / "task.json").read_bytes() == task_file.read_bytes()
    assert read_run_meta(run / "run-meta.json").model_extra == {}  # every key we write is typed
    meta = json.loads((run / "run-meta.json").read_text())
    assert task.metadata is not None
    expected = {
        "test_case": DEMO_CASE,
        "task_id": task.task_id,
        "class": task.metadata.class_,
        "platform": task.metadata.platform,
        "model": "none",
        "harness": "scripted",
        "time_limit_minutes": task.time_limit,
        "intercepted": True,
        "stop_reason": "intercepted",
        "result_category": "intercepted",
        "egress_blocked": 0,
        "task_json_sha256": hashlib.sha256(task_file.read_bytes()).hexdigest(),
        "instruction": task.instruction,
    }
    assert {k: meta.get(k) for k in expected} == expected
    assert 0 < meta["duration_seconds"] < 60 and meta["timestamp"] in run.name
    assert meta["sandbox"]["agent"] == {"kind": "scripted", "requests": 5}

    summary = json.loads((batch / "batch-summary.json").read_text())
    # not judged: intercepted, never "passed" without a verdict
    assert summary["totals"]["intercepted"] == 1 and summary["totals"]["passed"] == 0
    assert summary["max_concurrent"] == 2
    assert [(j["case"], j["status"]) for j in summary["jobs"]] == [(DEMO_CASE, "intercepted")]
    assert summary["elapsed_seconds"] >= 0 and summary["started_at"] < summary["finished_at"]

    scored = subprocess.run(
        [BIN / "clawbench-score", str(batch), "--tasks", str(demo), "--no-judge"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert scored.returncode == 0, scored.stderr
    rescore = json.loads((batch / "rescore-summary.json").read_text())
    n_demo = len(list(demo.glob("*/task.json")))
    assert (rescore["n_total"], rescore["n_intercepted"]) == (n_demo, 1)
    assert (rescore["n_infra_failure"], rescore["n_missing"]) == (0, n_demo - 1)

    # Resume with one more case (a body filter): the finished run is kept, only the new one runs.
    shutil.copytree(CASES / "shop-checkout", corpus / "shop-checkout")
    before = len(internet.log())
    assert sandbox_main([*batch_args, "--resume", str(batch)]) == 0
    runs = {p.name.split("-none-")[0]: p for p in (batch / "none").iterdir()}
    assert set(runs) == {f"scripted-{DEMO_CASE}", "scripted-shop-checkout"}
    resumed = json.loads((batch / "batch-summary.json").read_text())
    jobs = {j["case"]: j for j in resumed["jobs"]}
    assert jobs[DEMO_CASE]["resumed"] and jobs[DEMO_CASE]["run_dir"] == str(run)
    assert jobs["shop-checkout"]["status"] == "intercepted" and not jobs["shop-checkout"]["resumed"]
    assert resumed["started_at"] == summary["started_at"]
    assert resumed["elapsed_seconds"] >= summary["elapsed_seconds"]
    # The near miss (qty 1) reached the site; the match (qty 2) and what followed did not.
    body_run = runs["scripted-shop-checkout"]
    assert [e.matched for e in _requests(body_run / "data")] == [
        False,
        False,
        False,
        True,
    ]
    got = internet.log()[before:]
    assert [e.get("path") for e in got] == ["/", "/api/cart", "/api/checkout"]
    assert json.loads(got[-1]["body"]) == {"item": "lamp", "qty": 1}
    assert _site_matches(internet, "shop-checkout") == []
    body = read_interception(body_run / "data" / "interception.json").request["body"]
    assert body == {"item": "lamp", "qty": 2}


def test_agent_ignoring_proxy_variables_is_seen_and_blocked(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    curl = "curl -sS --noproxy '*' -o /dev/null -w '%{http_code}\\n'"
    command = "; ".join(
        [
            f"{curl} http://shop.clawbench.test/hello",
            f"{curl} https://shop.clawbench.test/hello-tls",
            f"{curl} -6 http://shop.clawbench.test/hello-v6",
            "curl -sS --noproxy '*' -X POST -d 'qty=1' https://shop.clawbench.test/api/order",
            "echo curl=$?; sleep 30",
        ]
    )
    before = len(internet.log())
    outcome = run_task(
        docker_client,
        closed_request(
            internet, sandbox_image, tmp_path, "direct-order", AgentChoice("cmd", command=command)
        ),
    )
    data = outcome.run_dir / "data"
    assert outcome.ending.category == "intercepted" and outcome.exit_code == 0
    assert (data / "agent.log").read_text().splitlines()[:3] == ["200", "200", "200"]
    logged = _requests(data)
    assert [(e.url, e.mode) for e in logged] == [
        ("http://shop.clawbench.test/hello", "transparent"),
        ("https://shop.clawbench.test/hello-tls", "transparent"),
        ("http://shop.clawbench.test/hello-v6", "transparent"),
        ("https://shop.clawbench.test/api/order", "transparent"),
    ]
    site = {e["path"]: e for e in internet.log()[before:] if "path" in e}
    assert set(site) == {"/hello", "/hello-tls", "/hello-v6"}
    assert ":" in site["/hello-v6"]["client"] and "." not in site["/hello-v6"]["client"]
    assert read_interception(data / "interception.json").request["body"] == {"qty": "1"}
    assert read_run_meta(outcome.run_dir / "run-meta.json").egress_blocked == 0


def test_bypass_attempts_fail_for_the_agent_and_succeed_for_the_proxy_user(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    started: list[Any] = []
    command = f"python3 /my-info/probe.py {internet.ipv4} {internet.ipv6} --wait-release"
    req = closed_request(
        internet,
        sandbox_image,
        tmp_path,
        "bypass",
        AgentChoice("cmd", command=command),
        on_container=started.append,
    )
    result: Future[RunOutcome] = Future()
    threading.Thread(target=lambda: result.set_result(run_task(docker_client, req))).start()
    deadline = time.monotonic() + 60
    agent_log = b""
    while b'"done"' not in agent_log and time.monotonic() < deadline:
        time.sleep(0.2)
        if started:  # registered at create time: exec fails until it runs
            with contextlib.suppress(docker.errors.APIError):
                agent_log = started[0].exec_run(["cat", "/clawbench/logs/agent.log"]).output
    assert b'"done"' in agent_log, agent_log
    container = started[0]
    as_proxy = container.exec_run(
        ["python3", "/my-info/probe.py", internet.ipv4, internet.ipv6, "--network-only"],
        user="proxy",
    ).output
    container.exec_run(["touch", "/tmp/clawbench-release"])
    outcome = result.result(timeout=120)

    agent = {r["name"]: r for r in map(json.loads, agent_log.decode().splitlines())}
    proxy = {r["name"]: r for r in map(json.loads, as_proxy.decode().splitlines())}
    network = [
        "tcp4_port_8080",
        "udp4_port_443",
        "udp4_port_5353",
        "tcp6_port_8080",
        "udp6_port_443",
        "raw_tcp_port_80",
    ]
    others = [
        "raw_tcp_connect_tunnel",
        "read_task_json",
        "write_interception_json",
        "read_requests_log",
        "read_ca_key",
        "read_config_json",
        "capabilities",
        "no_new_privs_unset",
        "setuid_root",
        "raw_socket",
        "iptables_flush",
        "su_root",
    ]
    assert set(agent) == {*network, *others, "done"}
    assert {n: agent[n]["ok"] for n in network + others} == dict.fromkeys(network + others, False)
    assert json.loads(agent["capabilities"]["detail"]) == dict.fromkeys(
        ("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh"), "0000000000000000"
    )
    assert {n: proxy[n]["ok"] for n in network} == dict.fromkeys(network, True)
    # Only the proxy user's probes reached the site: one each, none of the agent's.
    probes = [e.get("path") for e in internet.log() if str(e.get("path", "")).startswith("/probe")]
    assert sorted(probes) == ["/probe-tcp4_port_8080", "/probe-tcp6_port_8080"]
    meta = read_run_meta(outcome.run_dir / "run-meta.json")
    assert meta.egress_blocked is not None and meta.egress_blocked >= 5  # the UDP/TCP probes
    # Raw TCP relaying is off (the addon refuses to start with it on): the raw bytes to port
    # 80 and through a CONNECT tunnel opened no raw stream, so the proxy relayed nothing of
    # them (the site's log above has none of the agent's probes).
    assert "refused a raw" not in (outcome.run_dir / "data" / "mitmdump.log").read_text()
    assert meta.result_category == "model_not_intercepted" and meta.stop_reason == "agent_exited"


def test_submit_page_answer_is_intercepted_and_judged(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    script = tmp_path / "submit.json"
    script.write_text(
        json.dumps(
            [
                {"url": "http://127.0.0.1:7878/submit", "expect": 200},
                {
                    "method": "POST",
                    "url": "http://127.0.0.1:7878/api/task-submit",
                    "json": {"answer": "42"},
                    "proxy": False,
                    "expect": "blocked",
                },
                {"url": "http://127.0.0.1:7878/submit", "sleep": 30},
            ]
        )
    )
    judge = start_judge_server([verdict(True, "the answer is 42")])
    models = tmp_path / "models.yaml"
    models.write_text(
        f"local-judge:\n  base_url: {judge.base_url}\n"
        "  api_type: openai-completions\n  api_key: test-key\n"
    )
    try:
        code = sandbox_main(
            [
                "run",
                str(CASES / "submit-answer"),
                "--agent",
                "scripted",
                "--script",
                str(script),
                "--judge-model",
                "local-judge",
                "--models-yaml",
                str(models),
                *closed_args(internet, sandbox_image, tmp_path),
            ]
        )
    finally:
        judge.close()
    assert code == 0
    (run,) = (tmp_path / "none").iterdir()
    data = run / "data"
    logged = _requests(data)
    assert [(e.method, e.url, e.mode) for e in logged] == [
        ("GET", "http://127.0.0.1:7878/submit", "regular"),
        ("POST", "http://127.0.0.1:7878/api/task-submit", "transparent"),
    ]
    assert read_interception(data / "interception.json").request["body"] == {"answer": "42"}
    served = (data / "submit.log").read_text()
    assert "GET /submit" in served and "task-submit" not in served
    assert len(judge.calls) == 1 and "42" in judge.calls[0].user
    meta = read_run_meta(run / "run-meta.json")
    assert meta.judge_match is True and meta.final_pass is True
    assert meta.sandbox.submit_page is True


@pytest.mark.parametrize("command", ["run", "batch"])
def test_a_scoring_failure_after_the_runs_is_reported_and_exits_2(
    command, docker_client, sandbox_image, internet, tmp_path, capsys
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(TEST_CASES / "clawbench-demo" / DEMO_CASE, corpus / DEMO_CASE)
    judge = start_judge_server(lambda call: error(401, "invalid api key"))  # refuses the key
    models = tmp_path / "models.yaml"
    models.write_text(
        f"refusing:\n  base_url: {judge.base_url}\n"
        "  api_type: openai-completions\n  api_key: test-key\n"
    )
    out = tmp_path / "out"
    target = corpus / DEMO_CASE if command == "run" else corpus
    try:
        code = sandbox_main(
            [
                command,
                str(target),
                "--agent",
                "scripted",
                "--script",
                str(CASES / "shop-checkout" / "script.json"),
                "--judge-model",
                "refusing",
                "--models-yaml",
                str(models),
                *closed_args(internet, sandbox_image, out),
            ]
        )
    finally:
        judge.close()
    err = capsys.readouterr().err
    assert code == 2, err
    assert judge.count >= 1
    assert "scoring failed (exit 2" in err and "score them again with: clawbench-score" in err
    (run,) = out.glob("**/run-meta.json")
    assert read_run_meta(run).result_category == "intercepted"  # the run is kept, not judged


@pytest.mark.parametrize("allow", [False, True], ids=["incomplete", "allow-incomplete"])
def test_run_whose_verdict_is_missing_is_incomplete_not_intercepted(
    allow, docker_client, sandbox_image, internet, tmp_path, capsys
) -> None:
    # the fake answers the pre-flight, then every verdict call fails (5xx): the run intercepted,
    # its verdict missing, so `run --judge-model` cannot exit 0 as if the result were whole
    judge = start_judge_server(lambda call: error(500, "overloaded"))
    models = tmp_path / "models.yaml"
    models.write_text(
        f"flaky:\n  base_url: {judge.base_url}\n"
        "  api_type: openai-completions\n  api_key: test-key\n"
    )
    out = tmp_path / "out"
    try:
        code = sandbox_main(
            [
                "run",
                str(TEST_CASES / "clawbench-demo" / DEMO_CASE),
                "--agent",
                "scripted",
                "--script",
                str(CASES / "shop-checkout" / "script.json"),
                "--judge-model",
                "flaky",
                "--models-yaml",
                str(models),
                *(["--allow-incomplete"] if allow else []),
                *closed_args(internet, sandbox_image, out),
            ]
        )
    finally:
        judge.close()
    err = capsys.readouterr().err
    assert code == (0 if allow else 3), err
    assert "incomplete: 1 verdict(s) missing" in err and "clawbench-score " in err
    (run,) = out.glob("**/run-meta.json")
    meta = read_run_meta(run)
    assert meta.intercepted is True and meta.judge_match is None and meta.final_pass is False


@pytest.mark.parametrize(
    "failure", ["broken_task", "proxy_refuses", "proxy_timeout", "image_missing"]
)
def test_infra_failures_are_not_model_failures(
    failure, docker_client, sandbox_image, internet, tmp_path
) -> None:
    case = CASES / "quick-null"
    extra: list[str] = []
    if failure == "broken_task":
        case = tmp_path / "broken"
        case.mkdir()
        task = json.loads((CASES / "quick-null" / "task.json").read_text())
        (case / "task.json").write_text(json.dumps({**task, "eval_schma": {}}))
    elif failure == "proxy_refuses":
        extra = ["--mitm-set", "stream_large_bodies=1m"]  # the addon refuses to run with it
    elif failure == "proxy_timeout":
        extra = ["--proxy-timeout", "0.01"]  # mitmdump needs far longer to listen
    out = tmp_path / "out"
    if failure == "image_missing":  # the CLI refuses it before any run (the test below); a
        # library caller's run records it
        missing = "clawbench-sandbox:no-such-image"
        outcome = run_task(
            docker_client, closed_request(internet, missing, out, "quick-null", AgentChoice("null"))
        )
        assert outcome.exit_code == 2
    else:
        code = sandbox_main(["run", str(case), *closed_args(internet, sandbox_image, out), *extra])
        assert code == 2
    (run,) = (out / "none").iterdir()
    meta = read_run_meta(run / "run-meta.json")
    assert meta.result_category == "infra_failure" and meta.intercepted is False
    view = read_interception(run / "data" / "interception.json")
    assert not view.intercepted
    reason = meta.failure_reason
    if failure == "broken_task":
        assert "eval_schma" in reason and str(case / "task.json") in reason
        assert meta.sandbox.container_name is None
    elif failure in ("proxy_refuses", "proxy_timeout"):
        assert meta.stop_reason == "proxy_failed" and view.stop_reason == "proxy_failed"
        why = "stream_large_bodies" if failure == "proxy_refuses" else "no .proxy-ready after 0.01s"
        assert why in reason
        assert meta.sandbox.timings["agent_started"] is None
    else:
        assert "no-such-image" in reason and "clawbench-sandbox build" in reason


def test_a_setup_exception_in_the_runner_is_a_recorded_infra_failure(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    # A library caller can pass what the CLI refuses: config.json's model rejects it.
    req = closed_request(
        internet, sandbox_image, tmp_path, "quick-null", AgentChoice("null"), stop_grace_s=-1
    )
    outcome = run_task(docker_client, req)
    assert outcome.exit_code == 2 and outcome.ending.category == "infra_failure"
    meta = read_run_meta(outcome.run_dir / "run-meta.json")
    assert meta.result_category == "infra_failure" and meta.intercepted is False
    reason = meta.failure_reason
    assert reason.startswith("runner: ValidationError") and "stop_grace_s" in reason
    assert "\n" not in reason and meta.sandbox.container_name is None
    data = outcome.run_dir / "data"
    assert "Traceback" in (data / "runner-error.log").read_text()
    view = read_interception(data / "interception.json")
    assert not view.intercepted and view.stop_reason == "container_failed"
    assert (outcome.run_dir / "task.json").is_file()


def test_a_job_the_runner_cannot_record_is_an_error_and_the_batch_goes_on(
    docker_client, sandbox_image, internet, tmp_path, capsys
) -> None:
    corpus = tmp_path / "corpus"
    for case in ("quick-null", "submit-answer"):
        shutil.copytree(CASES / case, corpus / case)
    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / "none").write_text("a file where the model's run directories go")
    code = sandbox_main(
        [
            "batch",
            str(corpus),
            "--resume",
            str(batch),
            *closed_args(internet, sandbox_image, tmp_path),
        ]
    )
    assert code == 3  # incomplete: both runs are infra failures
    summary = json.loads((batch / "batch-summary.json").read_text())
    assert [(j["case"], j["status"], j["result_category"]) for j in summary["jobs"]] == [
        ("quick-null", "error", "infra_failure"),
        ("submit-answer", "error", "infra_failure"),
    ]
    assert summary["totals"]["error"] == 2 and summary["interrupted"] is False
    err = capsys.readouterr().err
    assert "ERROR quick-null: FileExistsError" in err and "Traceback" not in err


def test_a_stop_between_create_and_start_never_starts_the_container(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    stop = threading.Event()
    seen: list[tuple[Any, str]] = []

    def ctrl_c_right_after_create(container: Any) -> None:
        seen.append((container, container.status))
        stop.set()

    req = closed_request(
        internet,
        sandbox_image,
        tmp_path,
        "quick-null",
        AgentChoice("cmd", command="sleep 600"),
        on_container=ctrl_c_right_after_create,
        stop=stop,
    )
    started = time.monotonic()
    outcome = run_task(docker_client, req)
    assert time.monotonic() - started < 30
    ((container, status),) = seen
    assert status == "created"
    with pytest.raises(docker.errors.NotFound):
        container.reload()
    meta = read_run_meta(outcome.run_dir / "run-meta.json")
    assert meta.result_category == "infra_failure" and outcome.exit_code == 2
    assert meta.failure_reason == ("interrupted: stopped before the container started")
    assert meta.sandbox.timings["container_started"] is None
    assert not read_interception(outcome.run_dir / "data" / "interception.json").intercepted


def test_batch_skips_placeholders_unless_asked_and_runs_two_at_once(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(CASES / "quick-null", corpus / "quick-null")
    (corpus / "placeholder").mkdir()
    (corpus / "placeholder" / "task.json").write_text(
        json.dumps(
            {
                "instruction": "Log only.",
                "eval_schema": {"url_pattern": "__PLACEHOLDER_WILL_NOT_MATCH__", "method": "POST"},
                "time_limit": 1,
            }
        )
    )

    (corpus / "broken").mkdir()
    (corpus / "broken" / "task.json").write_text('{"instruction": "x", "eval_schema": {}}')

    def batch(out: Path, *extra: str) -> tuple[Path, dict[str, Any]]:
        code = sandbox_main(
            [
                "batch",
                str(corpus),
                *closed_args(internet, sandbox_image, out),
                "--skip-invalid",
                *extra,
            ]
        )
        assert code == 0
        (batch_dir,) = out.glob("batch-*")
        return batch_dir, json.loads((batch_dir / "batch-summary.json").read_text())

    skipping, summary = batch(tmp_path / "default")
    assert summary["placeholders_skipped"] == ["placeholder"]
    assert summary["invalid_skipped"] == ["broken"]
    assert [(j["case"], j["status"]) for j in summary["jobs"]] == [("quick-null", "failed")]
    assert [p.name.split("-none-")[0] for p in (skipping / "none").iterdir()] == ["null-quick-null"]

    both, summary = batch(
        tmp_path / "all", "--include-placeholders", "--concurrency", "2", "--agent-cmd", "sleep 3"
    )
    assert summary["placeholders_skipped"] == [] and summary["max_concurrent"] == 2
    assert len(list((both / "none").iterdir())) == 2
    assert [(j["case"], j["status"]) for j in summary["jobs"]] == [
        ("placeholder", "failed"),
        ("quick-null", "failed"),
    ]
    spans = []
    for job in summary["jobs"]:
        timings = read_run_meta(Path(job["run_dir"]) / "run-meta.json").sandbox.timings
        spans.append((timings["agent_started"], timings["agent_ended"]))
    # Both agents were running at the same moment: each started before the other ended.
    assert max(start for start, _ in spans) < min(end for _, end in spans)


def test_env_values_reach_the_agent_but_no_file_of_the_run(
    docker_client, sandbox_image, internet, tmp_path, monkeypatch
) -> None:
    given, copied = f"given-{secrets.token_hex(8)}", f"copied-{secrets.token_hex(8)}"
    monkeypatch.setenv("CB_COPIED", copied)
    # The agent proves it got the values without writing them anywhere (agent.log is kept).
    command = 'printf %s "$CB_GIVEN" | sha256sum; printf %s "$CB_COPIED" | sha256sum'
    code = sandbox_main(
        [
            "run",
            str(CASES / "quick-null"),
            "--agent-cmd",
            command,
            "--env",
            f"CB_GIVEN={given}",
            "--env",
            "CB_COPIED",
            *closed_args(internet, sandbox_image, tmp_path),
        ]
    )
    assert code == 1
    (run,) = (tmp_path / "none").iterdir()
    hashes = [line.split()[0] for line in (run / "data" / "agent.log").read_text().splitlines()]
    assert hashes == [hashlib.sha256(v.encode()).hexdigest() for v in (given, copied)]
    meta = read_run_meta(run / "run-meta.json")
    assert meta.sandbox.env_keys == ["CB_COPIED", "CB_GIVEN"]
    files = [p for p in run.rglob("*") if p.is_file()]
    assert {"run-meta.json", "agent.log", "container.log", "requests.jsonl"} <= {
        p.name for p in files
    }
    for path in files:
        content = path.read_bytes()
        assert given.encode() not in content and copied.encode() not in content, path


def test_an_agent_cmds_own_steps_are_kept_and_shown_on_its_run_page(
    docker_client, sandbox_image, internet, tmp_path, capsys
) -> None:
    """An --agent-cmd of its own writes agent/steps.jsonl to $CLAWBENCH_AGENT_OUT: the run keeps
    it in agent/ (its symlink to a file of the container's stays behind) and the run page shows
    its steps, what it wrote as text."""
    command = (
        'printf \'{"time": %s, "title": "opened <b>the</b> shop"}\\n\' "$(date +%s)" '
        '> "$CLAWBENCH_AGENT_OUT/steps.jsonl"; '
        'printf \'{"time": %s, "title": "gave up"}\\n\' "$(date +%s)" '
        '>> "$CLAWBENCH_AGENT_OUT/steps.jsonl"; '
        'ln -s /etc/passwd "$CLAWBENCH_AGENT_OUT/passwd"'
    )
    code = sandbox_main(
        ["run", str(CASES / "quick-null"), "--agent-cmd", command,
         *closed_args(internet, sandbox_image, tmp_path)]
    )  # fmt: skip
    assert code == 1  # nothing intercepted: the model's failure
    (run,) = (tmp_path / "none").iterdir()
    assert sorted(p.name for p in (run / "agent").iterdir()) == ["steps.jsonl"]
    capsys.readouterr()
    assert report_main([str(run)]) == 0
    page = capsys.readouterr().out
    assert "opened <b>the</b> shop" in page and "gave up" in page and "No agent trace" not in page
    assert page.index("opened <b>the</b> shop") < page.index("gave up") < page.index("run ended")


def test_ctrl_c_stops_the_batch_and_leaves_no_containers(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    corpus = tmp_path / "corpus"
    shutil.copytree(CASES / "quick-null", corpus / "quick-null")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        interruptible(
            [
                BIN / "clawbench-sandbox",
                "batch",
                str(corpus),
                "--agent-cmd",
                "sleep 600",
                *closed_args(internet, sandbox_image, out),
            ]
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ},
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            mine = [
                c
                for c in docker_client.containers.list(filters={"label": BATCH_LABEL})
                if c.labels.get(LABEL, "").startswith(str(out))
            ]
            if mine:
                break
            time.sleep(0.2)
        assert mine, "the batch never started its container"
        time.sleep(2)  # let the entrypoint reach the agent
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err.decode()
    left = [
        c
        for c in docker_client.containers.list(all=True, filters={"label": LABEL})
        if c.labels[LABEL].startswith(str(out))
    ]
    assert left == []
    (batch,) = out.glob("batch-*")
    summary = json.loads((batch / "batch-summary.json").read_text())
    assert summary["interrupted"] is True and summary["jobs"][0]["status"] == "error"


def test_agent_that_never_stops_hits_the_time_limit(time_limit_run) -> None:
    outcome = time_limit_run.result(timeout=240)
    meta = read_run_meta(outcome.run_dir / "run-meta.json")
    assert meta.stop_reason == "time_limit_exceeded"
    assert meta.result_category == "model_not_intercepted" and outcome.exit_code == 1
    assert read_interception(outcome.run_dir / "data" / "interception.json").stop_reason == (
        "time_limit_exceeded"
    )
    timings = meta.sandbox.timings
    ran = timings["agent_ended"] - timings["agent_started"]
    assert 60 <= ran < 60 + 1 + 10  # the limit, then SIGKILL one grace second after SIGTERM


def test_stop_grace_reaches_the_harness_behind_a_shell(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    # With `cd /tmp && python3 ...` the group leader is sh, which dies on SIGTERM at once; the
    # harness under it must still get its grace (2 s here) to flush before any SIGKILL.
    harness = "\n".join(
        [
            "import signal, subprocess, time",
            "stop = []",
            "signal.signal(signal.SIGTERM, lambda *a: stop.append(1))",
            'subprocess.run(["curl", "-s", "-o", "/dev/null", "-d", "qty=1", "https://shop.clawbench.test/api/order"])',
            "while not stop:",
            "    time.sleep(0.05)",
            "time.sleep(1)",
            'print("flushed", flush=True)',
        ]
    )
    command = f"cd /tmp && python3 -c '{harness}'"
    outcome = run_task(
        docker_client,
        closed_request(
            internet, sandbox_image, tmp_path, "direct-order", AgentChoice("cmd", command=command)
        ),
    )
    assert outcome.ending.category == "intercepted"
    assert "flushed" in (outcome.run_dir / "data" / "agent.log").read_text()


def test_the_agent_starts_once_the_network_has_settled(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    """No IPv6 address is still in duplicate address detection when the agent starts: its end
    (~1.5 s into a new container) is an address change, and Chromium aborts the page load in
    flight with ERR_NETWORK_CHANGED."""
    outcome = _quick_cmd(docker_client, internet, sandbox_image, tmp_path, "cat /proc/net/if_inet6")
    rows = [
        line.split()
        for line in (outcome.run_dir / "data" / "agent.log").read_text().splitlines()
        if len(line.split()) == 6 and len(line.split()[0]) == 32
    ]
    assert any(r[0].startswith("fe80") for r in rows), rows  # IPv6 is on: a link-local address
    assert not [r for r in rows if int(r[4], 16) & 0x40], rows  # none tentative


def test_a_log_longer_than_the_limit_is_cut_and_says_so(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    command = "printf start; head -c 300000 /dev/zero | tr '\\0' x"
    outcome = _quick_cmd(
        docker_client, internet, sandbox_image, tmp_path, command, log_limit_bytes=100_000
    )
    log = (outcome.run_dir / "data" / "agent.log").read_bytes()
    assert log.startswith(b"startxxx") and log.endswith(
        b"[clawbench: cut at 100000 of 300005 bytes]\n"
    )
    assert len(log) == 100_000 + len(b"\n[clawbench: cut at 100000 of 300005 bytes]\n")
    meta = read_run_meta(outcome.run_dir / "run-meta.json")
    assert any("agent.log: cut at 100000 of 300005 bytes" in w for w in meta.collection_warnings)
    assert meta.result_category == "model_not_intercepted"  # a long log is no failure


def test_null_agent_does_nothing(docker_client, sandbox_image, internet, tmp_path) -> None:
    before = len(internet.log())
    outcome = run_task(
        docker_client,
        closed_request(internet, sandbox_image, tmp_path, "quick-null", AgentChoice("null")),
    )
    meta = read_run_meta(outcome.run_dir / "run-meta.json")
    assert (meta.stop_reason, meta.egress_blocked) == ("agent_exited", 0)
    assert (outcome.run_dir / "data" / "requests.jsonl").read_text() == ""
    assert len(internet.log()) == before


def test_headless_chromium_agent_trusts_the_proxy_and_its_submit_is_intercepted(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    if docker_client.images.get(sandbox_image).labels.get("io.clawbench.chromium") != "1":
        pytest.skip("this image was built without Chromium (clawbench-sandbox build --chromium)")
    flags = (
        "--headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
        " --disable-component-update --disable-sync --user-data-dir=/tmp/chromium"
        " $CLAWBENCH_CHROMIUM_FLAGS"
    )
    command = (
        f"chromium {flags} --dump-dom https://shop.clawbench.test/hello-browser; "
        f"chromium {flags} --virtual-time-budget=5000 --dump-dom "
        "file:///my-info/autosubmit.html; sleep 30"
    )
    outcome = run_task(
        docker_client,
        closed_request(
            internet,
            sandbox_image,
            tmp_path,
            "chromium-submit",
            AgentChoice("cmd", command=command),
        ),
    )
    data = outcome.run_dir / "data"
    assert '{"ok": true, "path": "/hello-browser"}' in (data / "agent.log").read_text()
    assert outcome.ending.category == "intercepted"
    request = read_interception(data / "interception.json").request
    assert request["url"] == "http://127.0.0.1:7878/api/task-submit"
    assert request["body"] == {"answer": "42"} and "Chrom" in request["headers"]["User-Agent"]
