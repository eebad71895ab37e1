"""clawbench-demo end to end (the README's main job) and its plan's pure parts.

The end-to-end tests run the installed `clawbench-demo` command as a subprocess: a real demo
site, a real mitmdump + addon per run, real agents (urllib, curl, headless Chromium), the real
scorer against a loopback OpenAI-compatible judge.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from proxy_addon.matching import HttpRequest, Matcher, parse_body
from proxy_addon.records import (
    REQUESTS_FILE,
    Interception,
    ModelCallLine,
    NotIntercepted,
    RequestLogEntry,
    read_run_meta,
)
from proxy_addon.records.requestlog import read_request_log
from proxy_addon.tasks import load_task
from sandbox.agents.scripted import _encode
from sandbox.demo.browser_use import find_browser_use
from sandbox.demo.chromium import find_chromium
from sandbox.demo.local import agent_env
from sandbox.demo.sandboxed import Images, SandboxSetup, chromium_command, model_ports, request_for
from sandbox.demo.scenarios import (
    HARNESSES,
    MODEL,
    PLAN,
    PlanError,
    autopilot,
    chromium_url,
    curl_script,
    load_plan,
    python_script,
)
from sandbox.demo.show import commits_reaching_site
from sandbox.demo.site import HOSTS, Received
from sandbox.demo.world import DemoWorld
from tests.conftest import TEST_CASES, require
from tests.demo.run_pages import check_demo_runs
from tests.support.demo_judge import KEY, judge_models_yaml, start_demo_judge
from tests.support.fake_api import FakeModelAPI, Reply, start_model_api
from tests.support.interrupt import interruptible

CORPUS = TEST_CASES / "clawbench-demo"
DEMO = Path(sys.executable).with_name("clawbench-demo")


@pytest.fixture
def judge() -> Iterator[FakeModelAPI]:
    server = start_demo_judge()
    yield server
    server.close()


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DEEPSEEK_API_KEY"}
    env["COLUMNS"] = "120"
    return env


def _left_behind(marker: str) -> list[str]:
    """Processes whose command line mentions marker (the batch directory)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmdline:
            found.append(f"{proc.name}: {cmdline[:200]}")
    return found


def _files_line(stdout: str) -> str:
    """The closing "Files in …" sentence, unwrapped."""
    text = " ".join(stdout.split())
    return text[text.index("Files in ") :]


def _run_demo(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / "out"
    proc = subprocess.run(
        [str(DEMO), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=240,
        env=_env(tmp_path),
        cwd=tmp_path,
        check=False,
    )
    batches = sorted(out.glob("batch-*"))
    assert len(batches) == 1, proc.stdout + proc.stderr
    return proc, batches[0]


def test_demo_with_a_judge_blocks_records_and_scores_every_agent(
    tmp_path: Path, judge: FakeModelAPI
) -> None:
    require(find_chromium() is not None, "headless Chromium")
    require(shutil.which("curl") is not None, "curl")
    require(find_browser_use() is not None, "browser-use (scripts/setup.sh --with-browser-use)")
    models = judge_models_yaml(tmp_path / "models.yaml", judge)
    os.environ["DEMO_JUDGE_KEY"] = KEY
    try:
        proc, batch = _run_demo(tmp_path, "--models-yaml", str(models), "--judge-model", "loop")
    finally:
        del os.environ["DEMO_JUDGE_KEY"]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "commit requests among them: 0" in proc.stdout
    assert "judge.json" in _files_line(proc.stdout)

    variants = Counter(v for _, _, v in PLAN)
    runs = sorted(p.parent for p in batch.glob("scripted-demo/*/run-meta.json"))
    assert len(runs) == len(PLAN)
    assert {p.name.split("-")[0] for p in runs} == {"chromium", "python", "curl", "browser"}
    by_verdict: Counter[str] = Counter()
    for run in runs:
        meta = read_run_meta(run / "run-meta.json")
        assert meta.model_extra == {}, run.name  # every key the runner writes is typed
        raw = (run / "data" / "interception.json").read_bytes()
        assert meta.demo is not None and meta.provenance is not None
        variant = meta.demo.variant
        if variant == "gives-up":
            assert NotIntercepted.model_validate_json(raw).stop_reason == "agent_exited"
            assert meta.result_category == "model_not_intercepted"
            assert not (run / "data" / "judge.json").exists()
            continue
        got = Interception.model_validate_json(raw)
        task = load_task(run / "task.json")
        assert got.request.method == task.eval_schema.method
        assert re.search(task.eval_schema.url_pattern, got.request.url)
        assert (run / "data" / ".stop-requested").exists()
        verdict_file = json.loads((run / "data" / "judge.json").read_text())
        assert verdict_file["match"] is (variant == "correct"), (run.name, verdict_file)
        assert meta.final_pass is (variant == "correct")
        by_verdict[meta.result_category] += 1
        log = read_request_log(run / "data" / REQUESTS_FILE)
        # the demo site's requests: not browser-use's model calls, not Chromium's own traffic
        site = [e for e in log if isinstance(e, RequestLogEntry) and ".clawbench.test" in e.url]
        assert sum(e.blocked for e in site) == 1 and site[0].method == "GET"
        if run.name.startswith("browser-use-"):  # a real agent: its model calls were counted
            usage = json.loads((run / "run-meta.json").read_text())["agent_usage"]
            assert usage["calls"] == sum(isinstance(e, ModelCallLine) for e in log) >= 2
    assert by_verdict == {"passed": variants["correct"], "judge_mismatch": variants["wrong"]}

    # the résumé Chromium attached is recorded as a file part: name, type, size and digest
    (apply_run,) = batch.glob("scripted-demo/chromium-003-jobs-apply-backend-*")
    recorded = Interception.model_validate_json(
        (apply_run / "data" / "interception.json").read_bytes()
    ).request.body["resume"]
    plan = {(r.slug, r.harness): r for r in load_plan(CORPUS)}
    sent = autopilot(plan["003-jobs-apply-backend", "chromium"])["files"]["resume"]
    pdf = base64.b64decode(sent["b64"])
    assert recorded == {
        "filename": sent["filename"],
        "content_type": sent["type"],
        "size": len(pdf),
        "sha256": hashlib.sha256(pdf).hexdigest(),
    }

    summary = json.loads((batch / "rescore-summary.json").read_text())
    assert summary["n_total"] == len(PLAN)
    assert summary["n_intercepted"] == variants["correct"] + variants["wrong"]
    assert summary["n_judge_match"] == variants["correct"]
    assert summary["n_judge_mismatch"] == variants["wrong"]
    assert summary["n_model_not_intercepted"] == variants["gives-up"]
    assert summary["n_judge_error"] == summary["n_infra_failure"] == 0
    assert summary["pass_rate_with_judge"] == variants["correct"] / len(PLAN)
    assert judge.count == variants["correct"] + variants["wrong"]
    batch_summary = json.loads((batch / "batch-summary.json").read_text())
    assert len(batch_summary["jobs"]) == len(PLAN)
    # the demo ends with the HTML report: every run in it, and its path printed
    report = (batch / "report.html").read_text()
    assert "Report:" in proc.stdout and "report.html" in _files_line(proc.stdout)
    assert all(f'id="{run.name}"' in report or run.name in report for run in runs)
    check_demo_runs(batch, runs, find_chromium(), tmp_path)

    assert _left_behind(str(batch)) == []
    for path in [*batch.rglob("*"), tmp_path / "score-cache"]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in proc.stdout + proc.stderr


def test_demo_without_a_key_scores_stage_1_and_says_how_to_add_a_judge(tmp_path: Path) -> None:
    require(shutil.which("curl") is not None, "curl")
    proc, batch = _run_demo(tmp_path, "--no-browser")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No judge key: scoring Stage 1 only" in proc.stdout
    assert "DEEPSEEK_API_KEY" in proc.stdout
    files = _files_line(proc.stdout)  # only what was written: no judge, no judge.json
    assert "batch-summary.json, rescore-summary.json" in files and "judge.json" not in files
    assert "data/{interception.json, requests.jsonl, mitmdump.log, agent.log}" in files
    summary = json.loads((batch / "rescore-summary.json").read_text())
    planned = [p for p in PLAN if p[1] not in ("chromium", "browser-use")]  # --no-browser
    assert summary["n_total"] == len(planned)
    assert summary["n_intercepted"] == sum(v != "gives-up" for _, _, v in planned)
    assert summary["judge_model"] is None and summary["n_judge_match"] == 0
    assert not list(batch.rglob("judge.json"))
    assert not list(batch.glob("scripted-demo/chromium-*"))
    assert not list(batch.glob("scripted-demo/browser-use-*"))
    assert _left_behind(str(batch)) == []


AGENT_KEY = "sk-demo-agent-0123456789"


def test_an_agent_model_failing_every_call_ends_the_runs_model_api_failure(
    tmp_path: Path,
) -> None:
    """--agent-model's API answering 401 to every call: the proxy, told what the run's own calls
    look like as `clawbench-sandbox run` tells it, ends each browser-use run model_api_failure
    (an infra failure: exit 3 and the line saying so), never the model's 0%."""
    require(find_chromium() is not None, "headless Chromium")
    require(find_browser_use() is not None, "browser-use (scripts/setup.sh --with-browser-use)")
    api = start_model_api(default=Reply(status=401))
    models = tmp_path / "models.yaml"
    models.write_text(
        f"broken:\n  base_url: {api.url}/v1\n  api_type: openai-completions\n"
        f"  api_key: {AGENT_KEY}\n"
    )
    try:
        proc, batch = _run_demo(
            tmp_path,
            *("--agent", "browser-use", "--agent-model", "broken", "--models-yaml", str(models)),
            *("--no-judge", "--no-preflight"),
        )
    finally:
        api.close()
    assert proc.returncode == 3, proc.stdout + proc.stderr
    runs = sorted(p.parent for p in batch.glob("scripted-demo/*/run-meta.json"))
    assert len(runs) == sum(h == "browser-use" for _, h, _ in PLAN) > 0
    for run in runs:
        meta = json.loads((run / "run-meta.json").read_text())
        why = meta.get("failure_reason") or ""
        assert meta["result_category"] == "model_api_failure", (run.name, why)
        assert why.startswith("model API failed: no reply") and "HTTP 401" in why, why
    assert api.calls and all(c.headers["authorization"] == f"Bearer {AGENT_KEY}" for c in api.calls)
    err = " ".join(proc.stderr.split())
    assert f"{len(runs)} run(s) an infra failure, {len(runs)} of them model_api_failure" in err
    assert "--agent-model broken" in err.split("`")[1]  # the demo's own command re-runs them
    assert "unexpected" not in proc.stdout
    summary = json.loads((batch / "rescore-summary.json").read_text())
    assert summary["n_infra_failure"] == len(runs) and summary["n_intercepted"] == 0
    for path in batch.rglob("*"):
        if path.is_file():
            assert AGENT_KEY.encode() not in path.read_bytes(), path
    assert _left_behind(str(batch)) == []


def _corrupt_task(tmp_path: Path) -> list[str]:
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    task = corpus / "002-reviews-backpack-form" / "task.json"
    doc = json.loads(task.read_text())
    doc["eval_schema"]["method"] = "SEND"
    task.write_text(json.dumps(doc))
    return ["--tasks", str(corpus)]


BAD_INPUTS = {
    "missing corpus": (lambda t: ["--tasks", str(t / "nowhere")], "nowhere/requests.json"),
    "corrupt task.json": (_corrupt_task, "002-reviews-backpack-form/task.json: eval_schema.method"),
    "missing models.yaml": (
        lambda t: ["--models-yaml", str(t / "none.yaml"), "--judge-model", "nosuch"],
        "none.yaml: not found",
    ),
    "unknown judge": (lambda t: ["--judge-model", "nosuch"], "judge model 'nosuch' not found"),
    "image without sandbox": (lambda t: ["--image", "x"], "--image goes with --sandbox"),
    "real model in the sandbox": (
        lambda t: ["--sandbox", "--agent-model", "x"],
        "--agent-model goes without --sandbox: the sandbox demo's network is internal",
    ),
    "default judge, no key": (
        lambda t: ["--judge-model", "deepseek-v4-pro", "--models-yaml", str(t / "empty.yaml")],
        "DEEPSEEK_API_KEY is not set",
    ),
}


def demo_error(tmp_path: Path, *args: str) -> str:
    """Run the demo expecting bad input: exit 2 and one line on stderr, which is returned."""
    proc = subprocess.run(
        [str(DEMO), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(tmp_path),
        check=False,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip()
    assert err.startswith("clawbench-demo: ") and "\n" not in err, err
    return err


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_is_one_clear_error_before_any_run(tmp_path: Path, case: str) -> None:
    make_args, message = BAD_INPUTS[case]
    (tmp_path / "empty.yaml").write_text("{}\n")
    err = demo_error(tmp_path, "--out", str(tmp_path / "out"), *make_args(tmp_path))
    assert message in err, err
    assert not (tmp_path / "out").exists()


def test_an_out_that_is_a_file_is_one_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.write_text("a file\n")
    err = demo_error(tmp_path, "--out", str(out), "--no-judge")
    assert err.startswith(f"clawbench-demo: --out {out}: cannot create {out}/batch-"), err
    assert err.endswith(": Not a directory")
    assert out.read_text() == "a file\n"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_an_interrupted_demo_stops_every_process_and_says_so(tmp_path: Path, sig: int) -> None:
    require(find_chromium() is not None, "headless Chromium")
    out = tmp_path / "out"
    home = tmp_path / "home"  # where Chromium would put its crash database by default
    home.mkdir()
    env = {**_env(tmp_path), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    demo = subprocess.Popen(
        interruptible([DEMO, "--out", out, "--no-judge"]),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 60
        # Interrupt with Chromium in flight (its crashpad handlers leave the agent's session).
        while not any("--user-data-dir=" in p for p in _left_behind(str(out))):
            assert demo.poll() is None and time.monotonic() < deadline, "no Chromium run seen"
            time.sleep(0.05)
        demo.send_signal(sig)
        stdout, stderr = demo.communicate(timeout=60)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.communicate()
    assert demo.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("clawbench-demo: interrupted; "), stderr
    assert _left_behind(str(out)) == []
    (batch,) = out.glob("batch-*")
    assert json.loads((batch / "batch-summary.json").read_text())["interrupted"] is True
    stopped = [
        read_run_meta(m).stop_reason for m in batch.glob("scripted-demo/chromium-*/run-meta.json")
    ]
    assert "interrupted" in stopped
    assert list(batch.glob("scripted-demo/chromium-*/agent/profile/chromium/Crash Reports"))
    assert not (home / ".config").exists()


# -- the plan's pure parts -------------------------------------------------------------------


@pytest.mark.parametrize("run", load_plan(CORPUS), ids=lambda r: f"{r.harness}-{r.slug}")
def test_each_planned_request_decides_as_its_variant_says(run) -> None:  # type: ignore[no-untyped-def]
    matcher = Matcher(load_task(run.task_dir).eval_schema)
    script = python_script(run)
    assert script[0].url == run.start_url and script[0].expect == 200
    decisions = []
    for req in script:
        body, headers = _encode(req)
        ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), None)
        parsed = parse_body(body, ctype)
        decisions.append(matcher.match(HttpRequest(req.method, req.url, parsed.value, None)).match)
    commits = 0 if run.variant == "gives-up" else 1
    assert decisions.count(True) == commits and decisions[-1] is bool(commits)
    assert [r.expect for r in script].count("blocked") == commits


def test_the_browser_agent_fills_in_what_the_documented_request_sends() -> None:
    runs = {(r.slug, r.harness): r for r in load_plan(CORPUS)}
    shop = autopilot(runs["001-shop-checkout-mug", "chromium"])["fields"]
    assert shop["size"] == "large" and shop["quantity"] == "2" and shop["postal_code"] == "M5S 2H7"
    review = autopilot(runs["002-reviews-backpack-form", "chromium"])["fields"]
    assert review["rating"] == "5" and review["display_name"] == "Alex G."
    application = autopilot(runs["003-jobs-apply-backend", "chromium"])
    assert application["files"]["resume"]["filename"] == "resume.pdf"
    assert len(application["files"]["resume"]["b64"]) > 100
    news = autopilot(runs["004-news-subscribe-weekly", "chromium"])["fields"]
    assert news == {
        "email": "alex.green.uoft@clawbench.cc",
        "list": "weekly-digest",
        "confirm": "yes",
    }


def test_the_curl_agent_sends_the_body_verbatim_and_shell_safe() -> None:
    run = next(r for r in load_plan(CORPUS) if r.harness == "curl" and r.variant == "wrong")
    script = curl_script(run)
    assert "--data-raw 'email=alex.green.uoft%40clawbench.cc&list=weekly-digest'" in script
    assert script.startswith("set -u\n") and "curl exit code $?" in script


def test_a_plan_naming_a_missing_task_is_a_plan_error(tmp_path: Path) -> None:
    (tmp_path / "requests.json").write_text('{"tasks": {}}')
    with pytest.raises(PlanError, match="001-shop-checkout-mug"):
        load_plan(tmp_path)


def test_a_commit_reaching_the_site_is_reported() -> None:
    runs = load_plan(CORPUS, ("curl",))
    body = b"email=alex.green.uoft%40clawbench.cc&list=daily-briefing"
    ctype = "application/x-www-form-urlencoded"
    leaked = Received("POST", "news.clawbench.test", "/newsletter/unsubscribe", ctype, body)
    page = Received("GET", "news.clawbench.test", "/newsletter/manage", None, b"")
    assert commits_reaching_site([page], runs) == []
    assert commits_reaching_site([page, leaked], runs) == [
        "010-news-unsubscribe-quick: POST https://news.clawbench.test/newsletter/unsubscribe"
    ]


@pytest.mark.parametrize(
    ("program", "category"),
    [
        ("not a program\n", "infra_failure"),  # executable, but no #! and no ELF: ENOEXEC
        ("#!/bin/sh\nsleep 1; exit 127\n", "model_not_intercepted"),  # it ran, then chose 127
    ],
    ids=["exec-fails", "exits-127"],
)
def test_the_demo_decides_could_not_be_executed_as_the_sandbox_does(
    tmp_path: Path, program: str, category: str
) -> None:
    from mitmproxy.certs import CertStore

    from sandbox.demo.local import Setup, execute

    chromium = tmp_path / "bin" / "chromium"
    chromium.parent.mkdir()
    chromium.write_text(program)
    chromium.chmod(0o755)
    run = next(r for r in load_plan(CORPUS, ("chromium",)))
    CertStore.from_store(tmp_path / "conf", "mitmproxy", 2048)
    setup = Setup(tmp_path / "batch", [], tmp_path / "conf", "20260101_000000", str(chromium))
    ending = execute(run, setup).outcome.ending
    assert (ending.stop_reason, ending.category) == ("agent_exited", category)
    if category == "infra_failure":
        assert ending.failure_reason == (
            f"agent command could not be executed: {chromium}: Exec format error (errno 8)"
        )


def _sandbox_setup(tmp_path: Path, runs: list) -> Any:
    """The sandbox demo's setup around a world at a made-up address (no Docker here)."""
    world = DemoWorld(
        client=None, network=SimpleNamespace(name="net-x"), site=None, address="10.9.8.7"
    )  # type: ignore[arg-type]
    images = Images("img:t", "img:t-browser-use", HARNESSES, ())
    return SandboxSetup(
        None,  # type: ignore[arg-type]
        images,
        tmp_path,
        "20260101-000000",
        threading.Event(),
        batch_id="b-1",
        world=world,
        model_ports=model_ports(runs),
    )


def test_each_sandbox_run_is_wired_to_the_site_and_its_own_model(tmp_path: Path) -> None:
    runs = load_plan(CORPUS)
    setup = _sandbox_setup(tmp_path, runs)
    site = "http://10.9.8.7:8080"
    ports = iter((9001, 9002))
    for i, run in enumerate(runs):
        req = request_for(i, run, setup)
        routes = req.mitm_options["clawbench_route"]
        assert [f"{h}={site}" for h in (*HOSTS, "*")] == routes[-len(HOSTS) - 1 :]
        assert req.mitm_options["clawbench_allow_private"] == ["10.9.8.7/32"]
        assert (req.network, req.out, req.ts, req.model) == ("net-x", tmp_path, setup.ts, MODEL)
        assert req.labels == {"io.clawbench.batch": "b-1"} and req.harness == run.harness
        if run.harness == "browser-use":
            port = next(ports)
            assert req.image == "img:t-browser-use" and req.agent.kind == "harness"
            assert routes[0] == f"model.clawbench.test=http://10.9.8.7:{port}"
            assert req.mitm_options["clawbench_model_hosts"] == [f"model.clawbench.test:{port}"]
            # what the run's own calls look like, as run/batch tell the proxy (model_api_failure)
            own = f"http://model.clawbench.test:{port}/v1/chat/completions"
            assert req.mitm_options["clawbench_model_endpoint"] == [own]
            assert req.mitm_options["clawbench_model_name"] == "scripted-browser-use"
            assert str(req.mitm_options["clawbench_model_key"]).startswith("hmac-sha256:")
            assert req.env["CLAWBENCH_AGENT_BASE_URL"] == f"http://model.clawbench.test:{port}/v1"
            assert req.env["CLAWBENCH_AGENT_MAX_STEPS"] == "8"
            continue
        assert req.image == "img:t" and len(routes) == len(HOSTS) + 1
        assert "clawbench_model_hosts" not in req.mitm_options
        if run.harness == "chromium":
            assert req.agent.command == chromium_command(run)
            assert shlex.split(req.agent.command)[-1] == chromium_url(run)
        elif run.harness == "curl":
            assert req.agent.command == curl_script(run)
        else:
            assert (
                req.agent.kind == "scripted" and req.agent.script[-1].url == run.request["url"]
                if run.request
                else True
            )


def test_the_python_agent_in_the_sandbox_attaches_files_from_my_info() -> None:
    run = next(
        r
        for r in load_plan(CORPUS)
        if r.slug == "003-jobs-apply-backend" and r.harness == "chromium"
    )
    sent = python_script(replace(run, harness="python"), info_dir="/my-info")[-1]
    assert sent.files is not None and sent.files["resume"].path == "/my-info/resume.pdf"
    assert python_script(run)[-1].files["resume"].path == str(
        run.task_dir / "extra_info" / "resume.pdf"
    )


def test_the_runs_table_keeps_task_and_agent_names_whole_in_80_columns(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    from proxy_addon.records import Category, Ending, StopReason
    from sandbox.demo.local import RunResult
    from sandbox.demo.show import show_runs
    from sandbox.runs import RunOutcome

    ended = Ending(Category.INFRA_FAILURE, StopReason.PROXY_FAILED, "[Errno 98] address in use")
    results = [RunResult(r, RunOutcome(tmp_path, ended, 1.0)) for r in load_plan(CORPUS)]
    out = io.StringIO()
    show_runs(Console(file=out, width=80), results, tmp_path)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    for r in results:
        assert r.run.slug in text and r.run.harness in text, r.run.slug
    assert "[Errno 98]" in text  # agent-facing text is shown as text, never as markup


def test_the_agent_gets_no_key_of_the_operators_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Chromium crash dump holds its environment: a judge key there would land in the run.
    monkeypatch.setenv("DEMO_JUDGE_KEY", KEY)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = agent_env("http://127.0.0.1:1", tmp_path / "ca.pem", tmp_path / "agent")
    assert KEY not in "".join(env.values()) and "DEMO_JUDGE_KEY" not in env
    assert env["PATH"] == os.environ["PATH"] and env["LC_ALL"] == "C.UTF-8"
    assert env["HTTPS_PROXY"] == "http://127.0.0.1:1"
