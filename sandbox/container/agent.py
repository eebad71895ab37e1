"""The agent's part of a session: its environment, watching it, and what is kept when it stops.

The entrypoint starts the agent as `agent` (no capabilities, first in line for the OOM killer,
1024 open files per process) through its launcher, which says whether the agent's command could
be executed at all (`launched`), copies its output into agent.log up to AGENT_LOG_LIMIT, and ends
it on the addon's stop request, when it exits, when the proxy dies, at the time limit or on an
interrupt. Afterwards it keeps a harness's own trace (its tmpfs goes with the container) and
says when the agent ran out of its own resources.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from proxy_addon.records import StopReason
from sandbox.container import resources, trust
from sandbox.container.contract import (
    AGENT_MOUNTS,
    AGENT_OUT,
    AGENT_TRACE,
    INSTRUCTION_FILE,
    SUBMIT_PORT,
    VENV_PYTHON,
    ContainerConfig,
)
from sandbox.container.launch import FAILED, STARTED
from sandbox.container.processes import keep_files

POLL_S = 0.05
AGENT_OOM_SCORE = 1000  # the OOM killer takes the agent first (the proxy keeps 0)
AGENT_LOG_LIMIT = 32 * 1024 * 1024  # below what the runner copies out of each file
AGENT_TRACE_LIMIT = 32 * 1024 * 1024  # of a harness's own trace, in all
LAUNCH_TIMEOUT_S = 30.0  # for the launcher to run and exec (a Python start, even on a busy host)


class LaunchError(RuntimeError):
    """The agent's launcher never ran: the sandbox's failure, not the agent's."""


def launcher_argv(report_fd: int, argv: Sequence[str]) -> list[str]:
    """argv behind the launcher, which reports on report_fd whether its exec worked."""
    return [VENV_PYTHON, "-I", "-m", "sandbox.container.launch", str(report_fd), "--", *argv]


def launched(report_fd: int, timeout_s: float = LAUNCH_TIMEOUT_S) -> str | None:
    """Read the launcher's report to its end: None once the agent's command was executed, else
    why it could not be (the launcher's `program: message (errno N)`). Closes report_fd.

    Raises LaunchError when the launcher never ran (setpriv or Python failed before it)."""
    said = b""
    deadline = time.monotonic() + timeout_s
    with os.fdopen(report_fd, "rb", buffering=0) as pipe:
        while (left := deadline - time.monotonic()) > 0 and select.select([pipe], [], [], left)[0]:
            chunk = pipe.read(4096)
            if not chunk:  # closed by the exec, or by the launcher's exit
                break
            said += chunk
    if not said.startswith(STARTED):
        raise LaunchError("the agent's launcher did not run (see agent.log)")
    if said[1:2] == FAILED:
        return said[2:].decode("utf-8", "replace").strip() or "unknown error"
    return None  # started; a launcher still silent at the deadline has passed its last check


def agent_environment(config: ContainerConfig) -> dict[str, str]:
    """Everything the agent's process gets: proxy, CAs, instruction, its out dir, --env."""
    instruction = Path(INSTRUCTION_FILE).read_text(encoding="utf-8")
    env = trust.agent_env(config.env, instruction, INSTRUCTION_FILE)
    env.setdefault("CLAWBENCH_AGENT_OUT", AGENT_OUT)
    env.setdefault("CLAWBENCH_TIME_LIMIT_S", str(int(config.time_limit_s)))
    if config.submit_page:
        env.setdefault("CLAWBENCH_SUBMIT_URL", f"http://127.0.0.1:{SUBMIT_PORT}/submit")
    return env


def watch(
    agent: subprocess.Popen[bytes],
    proxy: subprocess.Popen[bytes],
    stop_file: Path,
    time_limit_s: float,
    interrupted: Callable[[], bool],
) -> StopReason:
    """Until the session must stop: why. The one rule of the container and the demo, checked
    in this order: the addon's stop request (a blocked commit ends the run, even when the agent
    exited too: its exit is seen first, so an agent that exits once blocked finds the request
    there), the agent's exit, the proxy's, an interrupt, the time limit."""
    deadline = time.monotonic() + time_limit_s
    while True:
        exited = agent.poll() is not None
        if stop_file.exists():
            return StopReason.INTERCEPTED
        if exited:
            return StopReason.AGENT_EXITED
        if proxy.poll() is not None:
            return StopReason.PROXY_FAILED
        if interrupted():
            return StopReason.INTERRUPTED
        if time.monotonic() >= deadline:
            return StopReason.TIME_LIMIT_EXCEEDED
        time.sleep(POLL_S)


def aftermath(
    reason: StopReason, say: Callable[[str], None], records: str | None = None
) -> tuple[StopReason, str | None]:
    """Keep the harness's trace; (stop reason, detail) with resource exhaustion said so
    (records: how the agent's traffic used up the proxy's records budget, if it did)."""
    for line in keep_files(Path(AGENT_OUT), Path(AGENT_TRACE), AGENT_TRACE_LIMIT)[:20]:
        say(f"agent trace: {line}")
    if reason in (StopReason.AGENT_EXITED, StopReason.TIME_LIMIT_EXCEEDED):
        out_of = resources.exhausted(AGENT_MOUNTS, records=records)
        if out_of:
            return StopReason.AGENT_RESOURCES_EXHAUSTED, f"the agent ran out of {out_of}"
    return reason, None


__all__ = [
    "AGENT_LOG_LIMIT",
    "AGENT_OOM_SCORE",
    "LaunchError",
    "aftermath",
    "agent_environment",
    "launched",
    "launcher_argv",
    "watch",
]
