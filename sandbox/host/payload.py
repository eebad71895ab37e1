"""What the runner puts into the container before it starts: config, task, the agent's files.

Modes and owners are set in the tar: config.json (it holds the --env values) and task.json are
root 0600/0400 (the entrypoint hands task.json to `proxy`), the agent's instruction and script
and the /my-info/ files are world-readable and nobody's to write.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from proxy_addon.tasks import Task
from sandbox.agents import ScriptedRequest, dump_script
from sandbox.container.contract import (
    AGENT_DIR,
    CONFIG,
    INSTRUCTION_FILE,
    MY_INFO,
    SCRIPT_FILE,
    TASK_DIR,
    TASK_FILE,
    UPSTREAM_CA,
    VENV_PYTHON,
    AgentSpec,
    ContainerConfig,
)
from sandbox.host.docker_api import FileEntry
from sandbox.runs import AgentView

HARNESS_NAMES = {"null": "null", "scripted": "scripted", "cmd": "custom"}

_NEEDS_SHELL = re.compile(r"[|&;<>()$`\\*?\[\]{}#~!\n]|^\s*[A-Za-z_][A-Za-z0-9_]*=")
"""Shell syntax: operators, expansions, globs, comments, a leading VAR=value."""


def command_argv(command: str) -> list[str]:
    """--agent-cmd's argv: a simple command (words, quoted or not) is executed as it is, so its
    launcher sees a missing or unexecutable program; one that needs a shell runs under
    /bin/sh -c, and then the shell is the agent: what it fails to run is its own doing."""
    if _NEEDS_SHELL.search(command) is None:
        words = shlex.split(command)
        if words:
            return words
    return ["/bin/sh", "-c", command]


@dataclass(frozen=True)
class AgentChoice:
    """A built-in agent (null, scripted + its requests) or any command (--agent-cmd)."""

    kind: Literal["null", "scripted", "cmd", "harness"]
    script: tuple[ScriptedRequest, ...] = ()
    command: str | None = None
    harness_name: str | None = None
    """kind harness: which one (sandbox.harnesses)."""

    @property
    def harness(self) -> str:
        """The default harness name for run directories."""
        if self.kind == "harness" and self.harness_name:
            return self.harness_name
        return HARNESS_NAMES[self.kind]

    def spec(self) -> AgentSpec:
        if self.kind == "null":
            argv = [VENV_PYTHON, "-m", "sandbox.agents.null"]
        elif self.kind == "scripted":
            argv = [VENV_PYTHON, "-m", "sandbox.agents.scripted", SCRIPT_FILE]
        elif self.kind == "harness":
            from sandbox.harnesses import get_harness

            argv = list(get_harness(self.harness_name or "").argv)
        else:
            if not self.command:
                raise ValueError("--agent-cmd needs a command")
            argv = command_argv(self.command)
        return AgentSpec(kind=self.kind, argv=argv)


def upstream_bundle(extra_ca: Path) -> bytes:
    """mitmproxy's default upstream trust (certifi) plus a private CA (a test or demo site)."""
    import certifi  # a mitmproxy dependency

    return Path(certifi.where()).read_bytes().rstrip(b"\n") + b"\n" + extra_ca.read_bytes()


def container_files(
    *,
    task_bytes: bytes,
    task: Task,
    view: AgentView,
    agent: AgentChoice,
    env: dict[str, str],
    upstream_ca: Path | None,
    mitm_options: dict[str, str | list[str]],
    stop_grace_s: float,
    proxy_ready_timeout_s: float,
    records_budget: int,
) -> list[FileEntry]:
    """Every file the container needs, as tar entries rooted at /."""
    config = ContainerConfig(
        agent=agent.spec(),
        time_limit_s=task.time_limit * 60,
        stop_grace_s=stop_grace_s,
        proxy_ready_timeout_s=proxy_ready_timeout_s,
        env=env,
        submit_page=view.submit_page,
        upstream_ca=upstream_ca is not None,
        mitm_options=mitm_options,
        records_budget=records_budget,
    )
    entries = [
        FileEntry(CONFIG, config.model_dump_json(indent=2).encode(), 0o600),
        FileEntry(TASK_DIR, None, 0o700),
        FileEntry(TASK_FILE, task_bytes, 0o400),
        FileEntry(AGENT_DIR, None, 0o755),
        FileEntry(INSTRUCTION_FILE, view.instruction.encode(), 0o444),
    ]
    if agent.kind == "scripted":
        entries.append(FileEntry(SCRIPT_FILE, dump_script(list(agent.script)), 0o444))
    if upstream_ca is not None:
        entries.append(FileEntry(UPSTREAM_CA, upstream_bundle(upstream_ca), 0o444))
    for name, src in sorted(view.files.items()):
        entries.append(FileEntry(f"{MY_INFO}/{name}", src.read_bytes(), 0o444))
    return entries
