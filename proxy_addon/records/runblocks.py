"""The blocks of run-meta.json that are objects of ours: the agent's claim, how the run was
contained (`sandbox`, by the Docker executor; `demo`, by the demo's local one) and which code
wrote it (`provenance`). Each is written by `sandbox.runs.record` and read through RunMeta.

The reference writes a `provenance` of its own shape (clawbench_version, commit, corpus, ...):
every key of ours is optional and the reference's ride along, so its files read unchanged.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_OURS = ConfigDict(extra="forbid")


class AgentClaim(BaseModel):
    """run-meta.json's agent_claim: what the harness's driver said (agent/result.json), shown
    beside the proxy's record, never deciding anything."""

    model_config = _OURS

    success: bool | None = None
    text: str = ""
    steps: int | None = None
    error: str | None = None
    """How the harness says it ended (e.g. Claude Code's terminal reason)."""


class SandboxBlock(BaseModel):
    """run-meta.json's `sandbox`: how the Docker executor contained the run (None where the
    container never started or left no report.json)."""

    model_config = _OURS

    image: str
    image_id: str | None = None
    container_name: str | None = None
    container_exit_code: int | None = None
    network: str | None = None
    limits: dict[str, int | float] = Field(default_factory=dict)
    """sandbox.host.limits.Limits.record(): memory, pids, cpus, disk, records, agent_nofile."""
    agent: dict[str, Any] = Field(default_factory=dict)
    """kind; command (secrets redacted) or the scripted requests' count."""
    env_keys: list[str] = Field(default_factory=list)
    """The names of --env variables; never their values."""
    submit_page: bool = False
    upstream_ca: bool = False
    mitm_options: dict[str, Any] = Field(default_factory=dict)
    """The addon's options (the model API key's option as [REDACTED])."""
    ipv6: bool | None = None
    peak_memory_bytes: int | None = None
    listen: list[str] = Field(default_factory=list)
    agent_exit_code: int | None = None
    agent_exec_error: str | None = None
    report_detail: str | None = None
    timings: dict[str, float | None] = Field(default_factory=dict)
    """container_started and report.json's phases (time.time() stamps)."""
    node: dict[str, str] | None = None
    """--backend ray: the node that ran it (sandbox.cluster.order.NodeInfo)."""


class DemoBlock(BaseModel):
    """run-meta.json's `demo`: which planned variant of the demo this run is."""

    model_config = _OURS

    variant: str
    why: str
    agent_model: str | None = None
    """browser-use runs: the model it called (scripted, or --agent-model's)."""


class Provenance(BaseModel):
    """Which code wrote the file (proxy_addon.records.provenance.provenance()); the
    reference's own keys kept as they are."""

    model_config = ConfigDict(extra="allow")

    package: str | None = None
    package_version: str | None = None
    mitmproxy_version: str | None = None
    python_version: str | None = None
    git_sha: str | None = None


__all__ = ["AgentClaim", "DemoBlock", "Provenance", "SandboxBlock"]
