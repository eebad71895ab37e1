"""One demo run on this machine: mitmdump + addon for the task, an agent through it, the run
directory in the reference's layout (run-meta.json, task.json, data/...).

No container here (the demo needs no Docker): the agent is pointed at the proxy with the proxy
variables and trusts its CA through SSL_CERT_FILE / CURL_CA_BUNDLE / an SPKI pin for Chromium.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from proxy_addon.addon.launcher import ProxyStartError, start_proxy
from proxy_addon.records.layout import new_run_dir
from proxy_addon.records.outcome import Category, Ending, Stopped, StopReason, classify
from proxy_addon.records.runmeta import RunMeta, write_run_meta
from proxy_addon.tasks.model import load_task
from sandbox.agents.request_script import dump_script
from sandbox.container.trust import client_env
from sandbox.demo.scenarios import MODEL, DemoRun, chromium_url, curl_script, python_script
from sandbox.runs.record import meta_core, provenance, record_not_intercepted

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable",
    "--enable-logging=stderr",
)
STOP_GRACE = 0.3
"""Seconds an agent may go on after its commit was blocked (it usually exits on its own)."""


@dataclass(frozen=True)
class Setup:
    """What every run of one demo shares."""

    batch_dir: Path
    routes: list[str]
    confdir: Path
    ts: str
    chromium: str | None
    timeout: float = 30
    stop: threading.Event = field(default_factory=threading.Event)
    """Set on Ctrl-C or SIGTERM: runs in flight end their agent and proxy, no new run starts."""


@dataclass(frozen=True)
class RunResult:
    """How a run ended; result_category is the runner's (the scorer adds the judge's)."""

    run: DemoRun
    run_dir: Path
    verdict: Ending
    duration: float

    @property
    def intercepted(self) -> bool:
        return self.verdict.category == Category.INTERCEPTED

    @property
    def stop_reason(self) -> str:
        return self.verdict.stop_reason

    @property
    def failure(self) -> str | None:
        return self.verdict.failure_reason


def spki_pin(ca_pem: Path) -> str:
    """base64(sha256(SubjectPublicKeyInfo)) of the CA; mitmproxy signs leaves with its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    cert = x509.load_pem_x509_certificate(ca_pem.read_bytes())
    der = cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def agent_env(proxy_url: str, ca: Path, agent_dir: Path) -> dict[str, str]:
    """The agent's environment: yours, with every client's proxy and CA pointed at mitmdump
    (the sandbox's own client variables). CHROME_CONFIG_HOME puts Chromium's crash database
    (and its crashpad handlers' --database) in the run's profile, not ~/.config/chromium."""
    env = {**os.environ, **client_env(proxy_url, str(ca), str(ca))}
    env["CHROME_CONFIG_HOME"] = str(agent_dir / "profile")
    return env


def agent_command(run: DemoRun, setup: Setup, agent_dir: Path, proxy_url: str) -> list[str]:
    """The agent's argv; its inputs (script, shell file, profile) are kept in agent_dir."""
    agent_dir.mkdir()
    if run.harness == "python":
        script = agent_dir / "script.json"
        script.write_bytes(dump_script(python_script(run)))
        return [sys.executable, "-m", "sandbox.agents.scripted", str(script)]
    if run.harness == "curl":
        script = agent_dir / "agent.sh"
        script.write_text(curl_script(run))
        return ["sh", str(script)]
    if run.harness == "chromium" and setup.chromium:
        pin = spki_pin(setup.confdir / "mitmproxy-ca-cert.pem")
        return [
            setup.chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={agent_dir / 'profile'}",
            f"--proxy-server={proxy_url}",
            "--proxy-bypass-list=<-loopback>",
            f"--ignore-certificate-errors-spki-list={pin}",
            chromium_url(run),
        ]
    raise ValueError(f"no agent for harness {run.harness!r}")


def _wait(
    proc: subprocess.Popen[bytes], stop_file: Path, deadline: float, stop: threading.Event
) -> str:
    """Until the agent exits, the addon asks to stop, the deadline or an interrupt: why."""
    while True:
        if proc.poll() is not None:
            return "agent_exited"
        if stop_file.exists():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(STOP_GRACE)
            return "intercepted"
        if stop.is_set():
            return "interrupted"
        if time.monotonic() > deadline:
            return "time_limit_exceeded"
        time.sleep(0.05)


def _processes_mentioning(marker: str) -> list[int]:
    """Live processes whose command line mentions marker (a path of this run)."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def _end(proc: subprocess.Popen[bytes], agent_dir: Path) -> None:
    """Stop the agent's whole session, even after its leader exited, and what escaped it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)  # the agent's session: a browser's children too
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # whatever of the session outlived its leader
    proc.wait()
    # Chromium's crashpad handlers leave the process group (they double-fork into their own
    # session); they watch the browser and exit after it, but not always before we return.
    marker = f"--database={agent_dir / 'profile'}"
    for attempt in range(40):
        strays = _processes_mentioning(marker)
        if not strays:
            break
        for pid in strays:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL if attempt else signal.SIGTERM)
        time.sleep(0.05)


def execute(run: DemoRun, setup: Setup) -> RunResult:
    """Run one agent on one task through its own proxy; write the run directory."""
    started = time.time()
    run_dir = new_run_dir(setup.batch_dir, run.harness, run.slug, MODEL, setup.ts)
    data = run_dir / "data"
    task_bytes = (run.task_dir / "task.json").read_bytes()
    (run_dir / "task.json").write_bytes(task_bytes)
    task = load_task(run.task_dir)
    stop_reason, failure = "unknown", None
    try:
        proxy = start_proxy(
            run_dir / "task.json",
            data,
            confdir=setup.confdir,
            options={"clawbench_route": setup.routes},
            log_path=data / "mitmdump.log",
            quiet=False,
        )
    except ProxyStartError as e:
        stop_reason, failure = "proxy_failed", str(e)
    else:
        with proxy, open(data / "agent.log", "wb") as log:
            agent_dir = run_dir / "agent"
            argv = agent_command(run, setup, agent_dir, proxy.url)
            if setup.stop.is_set():
                stop_reason = "interrupted"
            else:
                proc = subprocess.Popen(
                    argv,
                    env=agent_env(proxy.url, proxy.ca_cert, agent_dir),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                try:
                    deadline = time.monotonic() + setup.timeout
                    stop_reason = _wait(proc, data / ".stop-requested", deadline, setup.stop)
                finally:
                    _end(proc, agent_dir)
    intercepted = (data / "interception.json").is_file()
    verdict = classify(
        intercepted=intercepted,
        stopped=Stopped(StopReason(stop_reason), failure),
        setup_failure="interrupted: the demo was stopped" if stop_reason == "interrupted" else None,
    )
    record_not_intercepted(data, verdict, task)
    meta = meta_core(
        case=run.slug,
        task=task,
        task_sha256=hashlib.sha256(task_bytes).hexdigest(),
        model=MODEL,
        harness=run.harness,
        ts=setup.ts,
        started=started,
        verdict=verdict,
        intercepted=intercepted,
        egress_blocked=None,  # no firewall outside the sandbox
    )
    meta["demo"] = {"variant": run.variant, "why": run.why}
    meta["provenance"] = provenance()
    write_run_meta(run_dir / "run-meta.json", RunMeta.model_validate(meta))
    return RunResult(run, run_dir, verdict, meta["duration_seconds"])


def find_chromium() -> str | None:
    """A Chromium or Chrome binary on PATH, if any."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None
