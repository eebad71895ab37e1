"""The claude-code harness on this machine, no container: Claude Code + Playwright MCP driven by
the scripted Anthropic server, through a real mitmdump + addon, against the demo site.

Everything is real and on loopback: the demo site (sandbox.demo.site), mitmdump with the task
(its routes send the demo hosts and the model's host to loopback servers, and a guard addon
refuses anything else), the scripted Messages API server, the driver run by path with a plain
python3 (stdlib only, as in the image), Claude Code's native binary, Playwright MCP and the
system Chromium trusting the proxy's CA through an NSS db. The model's calls go through the
proxy too (https://model.clawbench.test), as they do in the sandbox.

Needs the npm prefix of scripts/install-claude-code.sh ($CLAWBENCH_CLAUDE_CODE_PREFIX, default
.venv/claude-code), node, certutil and Chromium; skips without them.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from subprocess import PIPE
from typing import Any

import pytest

from proxy_addon.addon import start_proxy
from proxy_addon.records import REQUESTS_FILE, Interception, LogLine, ResponseLine
from proxy_addon.records.requestlog import is_request, read_request_log
from proxy_addon.tasks import load_task
from sandbox.container.trust import client_env
from sandbox.demo.site import DemoSite, Received
from sandbox.runs.agentview import instruction_text
from scorer.html_report.runpage import image_type
from scorer.html_report.runtext import single_run_view
from tests.conftest import ROOT, TEST_CASES, require
from tests.support.claude_script import Script, load_script, script_from_json
from tests.support.fake_api import start_model_api

pytestmark = pytest.mark.chromium

TASK_DIR = TEST_CASES / "clawbench-demo" / "002-reviews-backpack-form"
SCRIPTS = Path(__file__).with_name("scripts")
DRIVER = ROOT / "sandbox" / "harnesses" / "claude_code" / "driver.py"
GUARD = ROOT / "tests" / "proxy" / "loopback_only.py"
MODEL_HOST = "model.clawbench.test"
MODEL = "claude-sonnet-4-5"
COMMIT_PATH = "/products/trailhead-30l/reviews"


@pytest.fixture(scope="module")
def prefix() -> Path:
    """The npm prefix with Claude Code and Playwright MCP."""
    path = Path(os.environ.get("CLAWBENCH_CLAUDE_CODE_PREFIX") or ROOT / ".venv" / "claude-code")
    installed = (path / "node_modules" / ".bin" / "claude").exists()
    require(installed, f"Claude Code under {path} (scripts/install-claude-code.sh [PREFIX])")
    require(shutil.which("node") is not None, "node (Playwright MCP runs on it)")
    return path


@pytest.fixture(scope="module")
def confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mitmproxy CA for this module's proxies."""
    from mitmproxy.certs import CertStore

    conf = tmp_path_factory.mktemp("mitmproxy-conf")
    CertStore.from_store(conf, "mitmproxy", 2048)
    return conf


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, confdir: Path) -> Path:
    """The agent's HOME: an NSS db trusting the proxy's CA, as the sandbox gives Chromium."""
    certutil = shutil.which("certutil")
    require(certutil is not None, "certutil (libnss3-tools)")
    assert certutil is not None
    home = tmp_path_factory.mktemp("agent-home")
    db = home / ".pki" / "nssdb"
    db.mkdir(parents=True)
    ca = confdir / "mitmproxy-ca-cert.pem"
    for args in (["-N", "--empty-password"], ["-A", "-t", "C,,", "-n", "mitm", "-i", str(ca)]):
        subprocess.run([certutil, "-d", f"sql:{db}", *args], check=True, capture_output=True)
    return home


@dataclass
class Outcome:
    """What one harness run left: the driver's files, the proxy's, what the servers saw."""

    out: Path
    data: Path
    driver: subprocess.CompletedProcess[str]
    received: list[Received]
    model: dict[str, Any]
    key: str

    def result(self) -> dict[str, Any]:
        return json.loads((self.out / "result.json").read_text())

    def interception(self) -> Interception:
        return Interception.model_validate_json((self.data / "interception.json").read_bytes())

    def log(self) -> list[LogLine]:
        """The request lines of requests.jsonl (model calls too), through its reader."""
        return [line for line in read_request_log(self.data / REQUESTS_FILE) if is_request(line)]

    def answers(self) -> list[ResponseLine]:
        lines = read_request_log(self.data / REQUESTS_FILE)
        return [line for line in lines if isinstance(line, ResponseLine)]

    def commits_received(self) -> list[Received]:
        return [r for r in self.received if r.method == "POST" and COMMIT_PATH in r.target]

    def files_with_key(self) -> list[Path]:
        files = [p for d in (self.out, self.data) for p in d.rglob("*") if p.is_file()]
        return [p for p in files if self.key.encode() in p.read_bytes()]


def run_harness(
    script: Script,
    tmp_path: Path,
    prefix: Path,
    home: Path,
    confdir: Path,
    chromium: str,
    time_limit: float = 150,
    sigterm_after_step: int | None = None,
) -> Outcome:
    """Site, model server and proxy up; the driver run once (SIGTERM'd, as the sandbox stops an
    agent, a second after the model served step sigterm_after_step); everything stopped again."""
    key = f"sk-ant-clawbench-test-{secrets.token_hex(12)}"
    instruction = instruction_text(load_task(TASK_DIR / "task.json"))
    out, data = tmp_path / "agent", tmp_path / "data"
    python3 = "/usr/bin/python3" if Path("/usr/bin/python3").exists() else sys.executable
    with DemoSite() as site, start_model_api(script, api_key=key) as model:
        routes = [f"{MODEL_HOST}=http://127.0.0.1:{model.port}", *site.routes]
        proxy = start_proxy(
            TASK_DIR / "task.json", data, confdir=confdir,
            options={"clawbench_route": routes}, extra_args=["-s", str(GUARD)],
        )  # fmt: skip
        ca = str(proxy.ca_cert)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "LANG": "C.UTF-8",
            **client_env(proxy.url, ca, ca),
            "CLAWBENCH_PROXY_URL": proxy.url,
            "CLAWBENCH_CA_CERT": ca,
            "CLAWBENCH_INSTRUCTION": instruction,
            "CLAWBENCH_AGENT_MODEL": MODEL,
            "CLAWBENCH_AGENT_BASE_URL": f"https://{MODEL_HOST}/v1",
            "CLAWBENCH_AGENT_API_TYPE": "anthropic-messages",
            "CLAWBENCH_AGENT_API_KEY": key,
        }
        argv = [python3, str(DRIVER), "--out", str(out), "--max-turns", "12"]
        argv += ["--time-limit", str(time_limit), "--prefix", str(prefix), "--chromium", chromium]
        try:
            proc = subprocess.Popen(argv, env=env, stdout=PIPE, stderr=PIPE, text=True)
            if sigterm_after_step is not None:
                deadline = time.monotonic() + 100
                while script.steps_taken <= sigterm_after_step and time.monotonic() < deadline:
                    time.sleep(0.05)
                time.sleep(1)
                proc.send_signal(signal.SIGTERM)
            stdout, stderr = proc.communicate(timeout=200)
            done = subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)
        finally:
            proxy.stop()
        return Outcome(out, data, done, site.received, model.snapshot(), key)


def declared_usage(path: Path) -> list[dict[str, int]]:
    """Each step's usage as the script declares it (Anthropic's own counts)."""
    return [step.get("usage", {}) for step in json.loads(path.read_text())["steps"]]


def expected_usage(path: Path) -> dict[str, int]:
    """The totals a script declares (Anthropic's counts, as every API's: the cache reads and
    writes within the input): every step taken once, no other call."""
    usages = declared_usage(path)
    read = sum(u.get("cache_read_input_tokens", 0) for u in usages)
    written = sum(u.get("cache_creation_input_tokens", 0) for u in usages)
    return {
        "calls": len(usages),
        "input_tokens": sum(u.get("input_tokens", 0) for u in usages) + read + written,
        "output_tokens": sum(u.get("output_tokens", 0) for u in usages),
        "cached_tokens": read,
    }


def check_common(outcome: Outcome, script: Path) -> dict[str, Any]:
    """What every run must show: the driver ran to its end, the script was followed to its last
    step with no error, the commit was blocked and credited, the key is in no file."""
    assert outcome.driver.returncode == 0, outcome.driver.stderr[-2000:]
    result = outcome.result()
    assert outcome.model["errors"] == [], outcome.model["errors"]
    assert outcome.model["usage_totals"] == expected_usage(script)
    # Claude Code's own total: Anthropic's input_tokens, without the cache
    anthropic_input = sum(u.get("input_tokens", 0) for u in declared_usage(script))
    assert result["usage_reported"]["input_tokens"] == anthropic_input
    assert result["success"] is True and result["error"] is None
    assert result["claude_code_version"] == "2.1.332"
    assert result["steps"] == outcome.model["steps_total"]
    interception = outcome.interception()
    assert interception.request.method == "POST"
    assert interception.request.url == f"https://reviews.clawbench.test{COMMIT_PATH}"
    assert interception.request.body["rating"] == "4"
    assert interception.request.body["title"] == "Comfortable on long hikes"
    assert outcome.commits_received() == [], "the site received the commit"
    calls = [e for e in outcome.log() if MODEL_HOST in e.url]
    assert len(calls) == len(outcome.model["calls"]) and not any(c.matched for c in calls)
    assert outcome.files_with_key() == []
    return result


def test_browser_commit_via_playwright_mcp_is_blocked_and_credited(
    tmp_path: Path, prefix: Path, home: Path, confdir: Path, chromium: str
) -> None:
    script = SCRIPTS / "claude_code_browser.json"
    outcome = run_harness(load_script(script), tmp_path, prefix, home, confdir, chromium)
    result = check_common(outcome, script)
    assert [(s["name"], s["status"]) for s in result["mcp_servers"]] == [
        ("playwright", "connected")
    ]
    assert result["tool_calls"] == {
        "mcp__playwright__browser_navigate": 1,
        "mcp__playwright__browser_snapshot": 1,
        "mcp__playwright__browser_fill_form": 1,
        "mcp__playwright__browser_take_screenshot": 1,
        "mcp__playwright__browser_click": 1,
    }
    body = outcome.interception().request.body
    assert body["display_name"] == "Alex G." and "1-litre bottle" in body["body"]
    assert "Chrome/" in outcome.interception().request.headers.get("user-agent", "")
    pages = [
        r for r in outcome.received if r.method == "GET" and r.target.startswith(COMMIT_PATH[:-8])
    ]
    assert pages, "the browser never loaded the product page"
    # the run page: the screenshot Playwright MCP returned is shown at its step, the tool calls
    # fall among the requests by their arrival times, the click that committed before the block
    timeline = single_run_view(tmp_path).timeline
    assert timeline is not None
    (shot,) = [e for e in timeline.events if e.screenshot is not None]
    assert shot.title.startswith("browser_take_screenshot returned")
    assert shot.screenshot is not None and image_type(shot.screenshot.data or b"") is not None
    order = [(e.kind.value, e.title.split(":")[0]) for e in timeline.events]
    click = order.index(("tool_call", "browser_click"))
    assert click < order.index(("block", "the commit, blocked")) < len(order) - 1, order


def test_curl_commit_from_the_bash_tool_is_blocked_and_credited(
    tmp_path: Path, prefix: Path, home: Path, confdir: Path, chromium: str
) -> None:
    script = SCRIPTS / "claude_code_curl.json"
    outcome = run_harness(load_script(script), tmp_path, prefix, home, confdir, chromium)
    result = check_common(outcome, script)
    assert result["tool_calls"] == {"Bash": 1}
    assert outcome.interception().request.headers.get("user-agent", "").startswith("curl/")


LONG_COMMAND = "python3 -c 'import time; time.sleep(90)'"  # Claude Code refuses a bare sleep
SLEEPER = {"steps": [{"tool_use": [{"name": "Bash", "input": {"command": LONG_COMMAND}}]},
                     {"text": "Done.\nTASK_STATUS: success"}]}  # fmt: skip


@pytest.mark.parametrize("how", ["time_limit", "sigterm"])
def test_a_stopped_run_still_writes_its_result(
    how: str, tmp_path: Path, prefix: Path, home: Path, confdir: Path, chromium: str
) -> None:
    """Past the time limit, or on SIGTERM (the sandbox's stop), the driver ends Claude Code and
    what it started and still writes result.json, with no claim of success."""
    limit, term = (12.0, None) if how == "time_limit" else (150.0, 0)
    outcome = run_harness(
        script_from_json(SLEEPER), tmp_path, prefix, home, confdir, chromium, limit, term
    )
    result = outcome.result()
    assert result["stopped"] == how
    assert result["success"] is None and result["error"]
    assert result["duration_s"] < (limit if how == "time_limit" else 30)
    assert outcome.model["steps_taken"] == result["steps"] <= 1
    assert not (outcome.data / "interception.json").exists()
    left = subprocess.run(["pgrep", "-f", "time.sleep.90"], capture_output=True, text=True).stdout
    assert left == "", f"processes left behind: {left}"
