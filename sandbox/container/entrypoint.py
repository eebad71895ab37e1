"""The agent container's entrypoint (runs as root with NET_ADMIN; the agent never does).

Usage (the image's ENTRYPOINT): python -m sandbox.container.entrypoint

In order: lock down the files (task.json readable by `proxy` only, the data dir writable by
`proxy` only); start mitmdump + addon as `proxy` (regular mode on 127.0.0.1:8080, transparent on
8081); install the egress firewall while it boots; wait for .proxy-ready (else proxy_failed);
trust its CA everywhere; start the submit page if the task has one; run the agent as `agent` with
no capabilities; stop it on .stop-requested, when it exits or at time_limit; write report.json
(stop reason, packets dropped, timings). The runner reads the files after the container exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import IO

from pydantic import ValidationError

from proxy_addon.records import (
    RESERVE_FILE,
    StopReason,
    release,
    reserve_space,
    write_json_atomic,
    write_with_reserve,
)
from sandbox.container import firewall, resources, trust
from sandbox.container.agent import (
    AGENT_LOG_LIMIT,
    AGENT_OOM_SCORE,
    LaunchError,
    aftermath,
    agent_environment,
    launched,
    launcher_argv,
    watch,
)
from sandbox.container.contract import (
    AGENT_HOME,
    AGENT_NOFILE,
    AGENT_OUT,
    AGENT_USER,
    CONF_DIR,
    CONFIG,
    DATA_DIR,
    LOG_DIR,
    MY_INFO,
    PROXY_USER,
    REPORT,
    REPORT_RESERVE,
    REPORT_RESERVE_FILE,
    SUBMIT_PORT,
    SUBMIT_USER,
    TASK_DIR,
    TASK_FILE,
    TRANSPARENT_PORT,
    VENV,
    VENV_PYTHON,
    ContainerConfig,
    SandboxReport,
    Timings,
    mitmdump_log_cap,
)
from sandbox.container.processes import Account, capped_copy, spawn, stop
from sandbox.container.proxy import SetupError, mitmdump_argv, tail, wait_ready

POLL_S = 0.05
IPV6_SETTLE_S = 3.0


def say(message: str) -> None:
    print(f"clawbench-sandbox: {message}", flush=True)


def _own(path: Path, account: Account, mode: int) -> None:
    os.chown(path, account.uid, account.gid)
    path.chmod(mode)


class Session:
    """One run: proxy, firewall, trust, agent, stop, report."""

    def __init__(self, config: ContainerConfig, started: float) -> None:
        self.config = config
        self.timings = Timings(entrypoint_started=started)
        self.proxy_account = Account.lookup(PROXY_USER)
        self.agent_account = Account.lookup(AGENT_USER)
        self.ipv6 = firewall.ipv6_enabled()
        self.families = (4, 6)
        self.interrupted = False
        self.listen: list[str] = []
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.detail: str | None = None
        self.exec_error: str | None = None
        self.logs: list[IO[bytes]] = []
        self.copies: list[threading.Thread] = []

    def _log(self, name: str) -> IO[bytes]:
        log = open(Path(LOG_DIR) / name, "ab")  # noqa: SIM115 (closed in close())
        self.logs.append(log)
        return log

    # -- setup -----------------------------------------------------------------------------------

    def lock_down(self) -> None:
        root = Account("root", 0, 0, "/root")
        for path, owner, mode in (
            (Path(LOG_DIR), root, 0o700),
            (Path(DATA_DIR), self.proxy_account, 0o750),
            (Path(CONF_DIR), self.proxy_account, 0o700),
            (Path(TASK_DIR), self.proxy_account, 0o700),
        ):
            path.mkdir(parents=True, exist_ok=True)
            _own(path, owner, mode)
        Path(AGENT_OUT).mkdir(exist_ok=True)
        _own(Path(AGENT_OUT), self.agent_account, 0o700)
        try:
            reserve_space(Path(REPORT_RESERVE_FILE), REPORT_RESERVE)
        except OSError as e:  # a disk the host filled: no run can be recorded on it
            raise SetupError(StopReason.CONTAINER_FAILED, f"the disk is full: {e}") from e
        _own(Path(TASK_FILE), self.proxy_account, 0o400)
        for path in [Path(MY_INFO), *Path(MY_INFO).rglob("*")]:
            _own(path, root, 0o755 if path.is_dir() else 0o444)

    def start_proxy(self) -> None:
        argv = mitmdump_argv(
            ipv6=self.ipv6,
            upstream_ca=self.config.upstream_ca,
            options=self.config.mitm_options,
            submit_page=self.config.submit_page,
            records_budget=self.config.records_budget,
        )
        env = {"PATH": f"{VENV}/bin:/usr/bin:/bin", "HOME": CONF_DIR, "LANG": "C.UTF-8"}
        read_end, write_end = os.pipe()  # mitmdump.log keeps its share of the records budget
        self.procs["proxy"] = spawn(self.proxy_account, argv, env=env, cwd=CONF_DIR, log=write_end)
        os.close(write_end)
        cap = mitmdump_log_cap(self.config.records_budget)
        self.copies.append(capped_copy(read_end, self._log("mitmdump.log"), cap, "proxy"))

    def install_firewall(self) -> None:
        policy = firewall.Policy(
            agent_uid=self.agent_account.uid,
            proxy_uid=self.proxy_account.uid,
            transparent_port=TRANSPARENT_PORT,
            nameservers=firewall.nameservers_from(Path("/etc/resolv.conf").read_text()),
            submit_port=SUBMIT_PORT if self.config.submit_page else None,
        )
        try:
            warnings = firewall.apply(policy, (4,))
            try:
                warnings += firewall.apply(policy, (6,))
            except firewall.FirewallError:
                if self.ipv6:
                    raise
                self.families = (4,)  # no IPv6 in this namespace at all: nothing to filter
                warnings.append("IPv6 is disabled here; ip6tables not used")
        except firewall.FirewallError as e:
            raise SetupError(StopReason.CONTAINER_FAILED, f"firewall: {e}") from e
        for warning in warnings:
            say(warning)

    def wait_ready(self) -> None:
        ready = wait_ready(
            self.procs["proxy"],
            Path(DATA_DIR) / ".proxy-ready",
            Path(LOG_DIR) / "mitmdump.log",
            self.config.proxy_ready_timeout_s,
            lambda: self.interrupted,
        )
        self.listen = ready.listen
        self.timings.proxy_ready = time.time()

    def install_trust(self) -> None:
        ca_file = Path(CONF_DIR) / "mitmproxy-ca-cert.pem"
        pem = ca_file.read_bytes()
        trust.install_system(pem)
        acct = self.agent_account
        trust.install_nss(trust.LOCAL_CRT, Path(AGENT_HOME), acct.uid, acct.gid)

    def start_submit_page(self) -> None:
        nobody = Account.lookup(SUBMIT_USER)
        argv = [VENV_PYTHON, "-m", "sandbox.container.submit", "--port", str(SUBMIT_PORT)]
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
        self.procs["submit"] = proc = spawn(
            nobody, argv, env=env, cwd="/", log=self._log("submit.log")
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", SUBMIT_PORT), 1),
            ):
                return
            if proc.poll() is not None:
                break
            time.sleep(POLL_S)
        raise SetupError(
            StopReason.CONTAINER_FAILED, "submit page: " + tail(Path(LOG_DIR) / "submit.log")
        )

    def settle_network(self) -> None:
        """Start the agent once no address is tentative (tentative_ipv6), IPV6_SETTLE_S at most."""
        deadline = time.monotonic() + IPV6_SETTLE_S
        while self.ipv6 and firewall.tentative_ipv6() and time.monotonic() < deadline:
            if self.interrupted:
                return
            time.sleep(POLL_S)

    # -- the agent -------------------------------------------------------------------------------

    def run_agent(self) -> tuple[StopReason, int | None]:
        read_end, write_end = os.pipe()  # the agent's output, kept up to AGENT_LOG_LIMIT
        report_end, launcher_end = os.pipe()  # the launcher's word on the exec (launch.py)
        agent = spawn(
            self.agent_account,
            launcher_argv(launcher_end, self.config.agent.argv),
            env=agent_environment(self.config),
            cwd=AGENT_HOME,
            log=write_end,
            oom_score_adj=AGENT_OOM_SCORE,
            nofile=AGENT_NOFILE,
            pass_fds=(launcher_end,),
        )
        os.close(write_end)
        os.close(launcher_end)
        agent_log = capped_copy(read_end, self._log("agent.log"), AGENT_LOG_LIMIT)
        self.timings.agent_started = time.time()
        try:
            self.exec_error = launched(report_end)
        except LaunchError as e:
            stop(agent, self.agent_account.uid, 0)
            agent_log.join(5)
            raise SetupError(StopReason.CONTAINER_FAILED, str(e)) from e
        if self.exec_error is None:
            limit = self.config.time_limit_s
            say(f"agent started ({self.config.agent.kind}), time limit {limit:.0f}s")
            reason = watch(
                agent,
                self.procs["proxy"],
                Path(DATA_DIR) / ".stop-requested",
                self.config.time_limit_s,
                lambda: self.interrupted,
            )
        else:
            say(f"agent command could not be executed: {self.exec_error}")
            reason = StopReason.AGENT_EXITED
        code = stop(agent, self.agent_account.uid, self.config.stop_grace_s)
        self.timings.agent_ended = time.time()
        agent_log.join(5)
        cap = mitmdump_log_cap(self.config.records_budget)
        records = resources.records_filled(Path(DATA_DIR), Path(LOG_DIR) / "mitmdump.log", cap)
        reason, self.detail = aftermath(reason, say, records)
        say(f"agent stopped: {reason} (exit code {code})")
        return reason, code

    # -- teardown --------------------------------------------------------------------------------

    def close(self) -> int | None:
        """Stop helpers (the proxy last, so the agent never outlives it) and count the drops."""
        blocked = None
        with contextlib.suppress(firewall.FirewallError, OSError):
            blocked = firewall.dropped(self.families)
        for name in ("submit", "proxy"):
            proc = self.procs.get(name)
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=3)  # its files are already on disk (atomic, appended)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        release(Path(DATA_DIR) / RESERVE_FILE)  # a proxy killed before it gave its reserve back
        for copy in self.copies:
            copy.join(5)
        for log in self.logs:
            log.close()
        return blocked

    def run(self) -> SandboxReport:
        reason, detail, code = StopReason.CONTAINER_FAILED, None, None
        try:
            self.lock_down()
            self.start_proxy()
            self.install_firewall()
            self.wait_ready()
            self.install_trust()
            if self.config.submit_page:
                self.start_submit_page()
            self.settle_network()
            reason, code = self.run_agent()
            detail = self.detail
        except SetupError as e:
            reason, detail = e.reason, str(e)
        except Exception as e:  # report it: the runner must tell infra from model failures
            reason, detail = StopReason.CONTAINER_FAILED, f"{type(e).__name__}: {e}"
        finally:
            blocked = self.close()
            self.timings.stopped = time.time()
        if detail:
            say(f"{reason}: {detail}")
        return SandboxReport(
            stop_reason=reason,
            detail=detail,
            agent_exit_code=code,
            agent_exec_error=self.exec_error,
            egress_blocked=blocked,
            peak_memory_bytes=resources.peak_memory(),
            ipv6=self.ipv6,
            submit_page=self.config.submit_page,
            listen=self.listen,
            timings=self.timings,
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run one session from /clawbench/config.json; exit 0 unless setup failed."""
    started = time.time()
    try:
        config = ContainerConfig.model_validate_json(Path(CONFIG).read_bytes())
    except (OSError, ValidationError) as e:
        report = SandboxReport(
            stop_reason=StopReason.CONTAINER_FAILED,
            detail=f"{CONFIG}: {e}",
            timings=Timings(entrypoint_started=started, stopped=time.time()),
        )
        write_json_atomic(REPORT, report)
        say(f"container_failed: {CONFIG} unusable")
        return 1
    session = Session(config, started)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        session.interrupted = True

    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    report = session.run()
    write_with_reserve(lambda: write_json_atomic(REPORT, report), Path(REPORT_RESERVE_FILE))
    release(Path(REPORT_RESERVE_FILE))
    say(f"done: {report.stop_reason}, egress_blocked={report.egress_blocked}")
    failed = (StopReason.PROXY_FAILED, StopReason.CONTAINER_FAILED)
    return 0 if report.stop_reason not in failed else 1


if __name__ == "__main__":
    sys.exit(main())
