"""The agent's part of a session: its environment, watching it, and what is kept when it stops.

The entrypoint starts the agent as `agent` (no capabilities, first in line for the OOM killer,
1024 open files per process), copies its output into agent.log up to AGENT_LOG_LIMIT, and ends
it on the addon's stop request, when it exits, when the proxy dies, at the time limit or on an
interrupt. Afterwards it keeps a harness's own trace (its tmpfs goes with the container) and
says when the agent ran out of its own resources.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from sandbox.container import resources, trust
from sandbox.container.contract import (
    AGENT_MOUNTS,
    AGENT_OUT,
    AGENT_TRACE,
    INSTRUCTION_FILE,
    SUBMIT_PORT,
    ContainerConfig,
)
from sandbox.container.processes import keep_files

POLL_S = 0.05
AGENT_OOM_SCORE = 1000  # the OOM killer takes the agent first (the proxy keeps 0)
AGENT_LOG_LIMIT = 32 * 1024 * 1024  # below what the runner copies out of each file
AGENT_TRACE_LIMIT = 32 * 1024 * 1024  # of a harness's own trace, in all


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
) -> str:
    """Until the session must stop: why (a SandboxReport stop_reason)."""
    deadline = time.monotonic() + time_limit_s
    while time.monotonic() < deadline:
        if stop_file.exists():
            return "intercepted"
        if agent.poll() is not None:
            return "intercepted" if stop_file.exists() else "agent_exited"
        if proxy.poll() is not None:
            return "proxy_failed"
        if interrupted():
            return "interrupted"
        time.sleep(POLL_S)
    return "time_limit_exceeded"


def aftermath(reason: str, say: Callable[[str], None]) -> tuple[str, str | None]:
    """Keep the harness's trace; (stop reason, detail) with resource exhaustion said so."""
    for line in keep_files(Path(AGENT_OUT), Path(AGENT_TRACE), AGENT_TRACE_LIMIT)[:20]:
        say(f"agent trace: {line}")
    if reason in ("agent_exited", "time_limit_exceeded"):
        out_of = resources.exhausted(AGENT_MOUNTS)
        if out_of:
            return "agent_resources_exhausted", f"the agent ran out of {out_of}"
    return reason, None


__all__ = [
    "AGENT_LOG_LIMIT",
    "AGENT_OOM_SCORE",
    "aftermath",
    "agent_environment",
    "watch",
]
