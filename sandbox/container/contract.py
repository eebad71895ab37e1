"""What the runner hands the container (config.json) and what it hands back (report.json).

Both sides import this module: the runner on the host writes ContainerConfig into the container
before it starts; the entrypoint inside writes SandboxReport when it stops. The paths below are the
container's layout (docs/security.md, "What the agent is given": its instruction and /my-info/
only).
"""

from __future__ import annotations

import hashlib
import json
from importlib import metadata
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from proxy_addon.records import (
    REQUESTS_FILE,
    REQUESTS_SUMMARY_FILE,
    USAGE_FILE,
    AgentUsage,
    Interception,
    LogLine,
    ProxyReady,
    RequestLogSummary,
    Stopped,
    StopReason,
)
from proxy_addon.tasks import Task
from sandbox.agents import ScriptedRequest

VENV = "/opt/clawbench/venv"
VENV_PYTHON = f"{VENV}/bin/python"
ROOT = "/clawbench"
CONFIG = f"{ROOT}/config.json"  # root 0600: holds the agent's --env values
TASK_DIR = f"{ROOT}/task"  # proxy 0700
TASK_FILE = f"{TASK_DIR}/task.json"  # proxy 0400: eval_schema and judge_context live here
DATA_DIR = f"{ROOT}/data"  # proxy 0750: the addon's files (its log names the schema)
CONF_DIR = f"{ROOT}/mitmproxy"  # proxy 0700: the CA key
LOG_DIR = f"{ROOT}/logs"  # root 0700: agent.log, mitmdump.log, submit.log
REPORT = f"{ROOT}/report.json"
AGENT_DIR = f"{ROOT}/agent"  # root 0755: what the agent may read
AGENT_OUT = f"{ROOT}/agent-out"  # agent 0700, tmpfs: a harness's own trace ...
AGENT_TRACE = f"{ROOT}/agent-trace"  # root 0700: ... kept from it when the agent stops (a tmpfs
# is gone with the container), then copied to the run's agent/
INSTRUCTION_FILE = f"{AGENT_DIR}/instruction.txt"
SCRIPT_FILE = f"{AGENT_DIR}/script.json"
UPSTREAM_CA = f"{ROOT}/upstream-ca.pem"
MY_INFO = "/my-info"
AGENT_USER = "agent"
AGENT_UID = AGENT_GID = 1_500_000_000
AGENT_NOFILE = 1024
"""Open files per agent process (the proxy keeps the container's own limit)."""
"""The Dockerfile's agent account: an id no host user or group has."""
AGENT_HOME = "/home/agent"
PROXY_USER = "proxy"
SUBMIT_USER = "nobody"

REGULAR_PORT = 8080
TRANSPARENT_PORT = 8081
SUBMIT_PORT = 7878
PROXY_URL = f"http://127.0.0.1:{REGULAR_PORT}"

RECORDS_BUDGET = 256 * 1024 * 1024
"""The default byte budget of the proxy's records, requests.jsonl and mitmdump.log together."""
MIN_RECORDS_BUDGET = 4 * 1024 * 1024
"""The least records budget: mitmdump.log's share still holds a run's own startup lines."""
REPORT_RESERVE = 1 << 20
"""Bytes kept back at start for report.json (docs/security.md: the end of a run is recorded)."""
REPORT_RESERVE_FILE = f"{ROOT}/.reserve"  # root's, never copied out


def mitmdump_log_cap(records_budget: int) -> int:
    """mitmdump.log's share of the records budget: a sixteenth (requests.jsonl has the rest)."""
    return records_budget // 16


AGENT_MOUNTS = ("/tmp", "/var/tmp", "/run/lock", "/dev/shm", AGENT_HOME, AGENT_OUT)
"""Everywhere the agent can write: each a tmpfs of bounded size (host.limits), none shared
with the proxy's records, the logs or report.json."""

_OURS = ConfigDict(extra="forbid")


class AgentSpec(BaseModel):
    """How the entrypoint starts the agent: an argv run as the unprivileged `agent` user."""

    model_config = _OURS

    kind: Literal["null", "scripted", "cmd", "harness"]
    argv: list[str] = Field(min_length=1)


class ContainerConfig(BaseModel):
    """config.json: everything the entrypoint needs besides the task itself."""

    model_config = _OURS

    version: Literal[1] = 1
    agent: AgentSpec
    time_limit_s: float = Field(gt=0)
    stop_grace_s: float = Field(default=10, ge=0)
    proxy_ready_timeout_s: float = Field(default=60, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    submit_page: bool = False
    upstream_ca: bool = False
    mitm_options: dict[str, str | list[str]] = Field(default_factory=dict)
    """Extra `--set KEY=VALUE` for mitmdump; a list repeats the option (clawbench_route)."""
    records_budget: int = Field(default=RECORDS_BUDGET, ge=MIN_RECORDS_BUDGET)
    """Bytes of requests.jsonl and mitmdump.log together (mitmdump_log_cap splits it)."""


class Timings(BaseModel):
    """Wall-clock stamps (time.time()) of the container's phases."""

    model_config = _OURS

    entrypoint_started: float
    proxy_ready: float | None = None
    agent_started: float | None = None
    agent_ended: float | None = None
    stopped: float | None = None


class SandboxReport(BaseModel):
    """report.json: why the session stopped, what the firewall dropped, when each phase ran."""

    model_config = _OURS

    stop_reason: StopReason
    detail: str | None = None
    agent_exit_code: int | None = None
    agent_exec_error: str | None = None
    """Why the agent's command could not be executed (its launcher's report), else None."""
    egress_blocked: int | None = None
    peak_memory_bytes: int | None = None
    """The container's highest memory use (agent, browser and proxy together)."""
    ipv6: bool = False
    submit_page: bool = False
    listen: list[str] = Field(default_factory=list)
    timings: Timings

    def stopped(self) -> Stopped:
        """Why the session stopped, as `classify` takes it."""
        return Stopped(self.stop_reason, self.detail, self.agent_exit_code, self.agent_exec_error)


CONTRACT_LABEL = "io.clawbench.contract"
"""On the sandbox image: the contract_id of the code it was built from."""


CONTRACT_FILES: dict[str, Any] = {
    "config.json": ContainerConfig,
    "task.json": Task,
    "script.json": ScriptedRequest,
    "report.json": SandboxReport,
}
"""What the runner writes into the container and reads back: file name -> its shape."""
PROXY_RECORDS: dict[str, Any] = {
    "interception.json": Interception,
    ".proxy-ready": ProxyReady,
    USAGE_FILE: AgentUsage,
    REQUESTS_SUMMARY_FILE: RequestLogSummary,
    REQUESTS_FILE: LogLine,  # one per line
}
"""The records the proxy in the container writes to its data/ dir for the host to read."""


def contract_id() -> str:
    """A short hash naming this code's host<->container contract: the JSON schemas of the files
    the runner writes into the container (config.json, task.json, script.json) and reads back
    (report.json and the proxy's records in data/), and the package's version. The build labels
    the image with it; the check before any container starts refuses an image whose label
    differs (docs/security.md)."""
    try:
        version = metadata.version("clawbench-intercept")
    except metadata.PackageNotFoundError:
        version = None
    files = {**CONTRACT_FILES, **{f"data/{name}": shape for name, shape in PROXY_RECORDS.items()}}
    schemas = {name: TypeAdapter(shape).json_schema() for name, shape in files.items()}
    text = json.dumps({"version": version, "schemas": schemas}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
