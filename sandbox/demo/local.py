"""One demo run on this machine: mitmdump + addon for the task, an agent through it, the run
directory in the reference's layout (run-meta.json, task.json, data/...).

No container here (the demo needs no Docker): the agent is pointed at the proxy with the proxy
variables and trusts its CA through SSL_CERT_FILE / CURL_CA_BUNDLE / an SPKI pin for Chromium.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from proxy_addon.addon import ProxyProcess, ProxyStartError, start_proxy
from proxy_addon.records import Category, DemoBlock, Stopped, StopReason
from sandbox.agents import dump_script
from sandbox.container.agent import watch
from sandbox.container.launch import exec_failure
from sandbox.container.trust import client_env
from sandbox.demo.browser_use import TIME_LIMIT_S, Launch, launch
from sandbox.demo.chromium import CHROMIUM_FLAGS, spki_pin
from sandbox.demo.scenarios import MODEL, DemoRun, chromium_url, curl_script, python_script
from sandbox.harnesses import BROWSER_USE
from sandbox.harnesses.models import AgentModel
from sandbox.runs import PreparedRun, RunJob, RunOutcome, SetupFailure, run_one

STOP_GRACE = 0.3
"""Seconds an agent may go on after its commit was blocked (it usually exits on its own)."""
INTERRUPTED = "interrupted: the demo was stopped"


@dataclass(frozen=True)
class Setup:
    """What every run of one demo shares."""

    batch_dir: Path
    routes: list[str]
    confdir: Path
    ts: str
    chromium: str | None
    timeout: float = 60
    """Seconds an agent may take (a loaded machine slows Chromium down; a commit ends a run)."""
    browser_use: str | None = None
    """The python of a browser-use venv, when the demo runs browser-use."""
    agent_model: AgentModel | None = None
    """The real model browser-use calls (--agent-model); None: a scripted one."""
    stop: threading.Event = field(default_factory=threading.Event)
    """Set on Ctrl-C or SIGTERM: runs in flight end their agent and proxy, no new run starts."""


@dataclass(frozen=True)
class RunResult:
    """A demo run and how it ended (the runner's category; the scorer adds the judge's)."""

    run: DemoRun
    outcome: RunOutcome

    @property
    def run_dir(self) -> Path:
        return self.outcome.run_dir

    @property
    def intercepted(self) -> bool:
        return self.outcome.intercepted

    @property
    def stop_reason(self) -> StopReason:
        return self.outcome.ending.stop_reason

    @property
    def failure(self) -> str | None:
        return self.outcome.ending.failure_reason

    @property
    def category(self) -> Category:
        return self.outcome.ending.category

    @property
    def duration(self) -> float:
        return self.outcome.duration_s


PASSED_ON = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM")
"""What the agent gets of your environment (and LC_*): never your keys, such as the judge's,
which a crash dump of the agent's browser would otherwise carry into the run's files."""


def agent_env(proxy_url: str, ca: Path, agent_dir: Path) -> dict[str, str]:
    """The agent's environment: the locale and paths of yours (PASSED_ON), with every client's
    proxy and CA pointed at mitmdump (the sandbox's own client variables). CHROME_CONFIG_HOME
    puts Chromium's crash database (and its crashpad handlers' --database) in the run's
    profile, not ~/.config/chromium."""
    env = {k: v for k, v in os.environ.items() if k in PASSED_ON or k.startswith("LC_")}
    env |= client_env(proxy_url, str(ca), str(ca))
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


class LocalExecutor:
    """The run pipeline's executor for the demo: the task's own mitmdump and the agent as local
    processes (no container, no firewall: the agent is pointed at the proxy)."""

    def __init__(self, demo: DemoRun, setup: Setup) -> None:
        self.demo = demo
        self.setup = setup

    def execute(self, run: PreparedRun) -> None:
        setup = self.setup
        if self.demo.harness != "browser-use":
            self._with_proxy(run, {"clawbench_route": setup.routes}, None)
            return
        if setup.browser_use is None:
            raise SetupFailure("browser-use is not installed (scripts/setup.sh --with-browser-use)")
        assert run.view is not None
        instruction = run.view.instruction
        with launch(
            self.demo, setup.browser_use, instruction, setup.agent_model, setup.routes
        ) as how:
            self._with_proxy(run, how.proxy_options, how)

    def _with_proxy(
        self, run: PreparedRun, options: dict[str, str | list[str]], how: Launch | None
    ) -> None:
        data = run.data
        try:
            proxy = start_proxy(
                run.run_dir / "task.json",
                data,
                confdir=self.setup.confdir,
                options=options,
                log_path=data / "mitmdump.log",
                quiet=False,
            )
        except ProxyStartError as e:
            run.execution.stopped = Stopped(StopReason.PROXY_FAILED, str(e))
            return
        with proxy, open(data / "agent.log", "wb") as log:
            run.execution.stopped = self._run_agent(run, proxy, log, how)

    def abandon(self, run: PreparedRun) -> None:
        """Nothing to do: execute ends its agent and its proxy on the way out."""

    def describe(self, run: PreparedRun) -> dict[str, Any]:
        demo = self.demo
        if demo.harness == "browser-use":
            model = self.setup.agent_model
            name = model.name if model else "scripted (sandbox.demo.scripted_model)"
            block = DemoBlock(variant=demo.variant, why=demo.why, agent_model=name)
            return {"demo": block, "harness_version": BROWSER_USE.version}
        return {"demo": DemoBlock(variant=demo.variant, why=demo.why)}

    def _run_agent(
        self, run: PreparedRun, proxy: ProxyProcess, log: IO[bytes], how: Launch | None
    ) -> Stopped:
        """Start the agent, wait for its end (or the addon's stop, the proxy's end, the
        deadline, an interrupt), then end its whole session."""
        setup = self.setup
        proxy_url, ca = proxy.url, proxy.ca_cert
        agent_dir = run.run_dir / "agent"
        env = agent_env(proxy_url, ca, agent_dir)
        timeout = setup.timeout
        if how is None:
            argv = agent_command(self.demo, setup, agent_dir, proxy_url)
        else:
            argv, timeout = how.argv, TIME_LIMIT_S
            pin = spki_pin(ca)
            env |= how.env | {
                "CLAWBENCH_AGENT_OUT": str(agent_dir),
                "CLAWBENCH_PROXY_URL": proxy_url,
                "CLAWBENCH_CHROMIUM": setup.chromium or "chromium",
                "CLAWBENCH_CHROMIUM_EXTRA_ARGS": f"--ignore-certificate-errors-spki-list={pin}",
            }
        if setup.stop.is_set():
            return Stopped(StopReason.INTERRUPTED, INTERRUPTED)
        try:
            proc = subprocess.Popen(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as e:  # the exec failed before any of the agent's code ran (launch.py)
            return Stopped(StopReason.AGENT_EXITED, exec_error=exec_failure(e, argv[0]))
        try:
            stop_file = run.data / ".stop-requested"
            reason = watch(proc, proxy.proc, stop_file, timeout, setup.stop.is_set)
            if reason == StopReason.INTERCEPTED:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(STOP_GRACE)
        finally:
            _end(proc, agent_dir)
        detail = INTERRUPTED if reason == StopReason.INTERRUPTED else None
        return Stopped(reason, detail, proc.returncode)


def execute(demo: DemoRun, setup: Setup) -> RunResult:
    """Run one agent on one demo task through its own proxy, by the run pipeline."""
    job = RunJob(demo.task_dir, setup.batch_dir, MODEL, demo.harness, setup.stop, setup.ts)
    return RunResult(demo, run_one(job, LocalExecutor(demo, setup)))
