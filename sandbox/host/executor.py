"""Run one task in the sandbox container: the run pipeline's Docker executor.

    <out>/<safe_model>/<harness>-<case>-<safe_model>-<ts>/
        run-meta.json  task.json
        data/{interception.json, requests.jsonl, .proxy-ready, sandbox.json,
              agent.log, mitmdump.log, container.log, ...}

The pipeline (sandbox.runs.pipeline) prepares the run directory and records the result; this
module creates the container with the run's files, starts it, waits for it within the task's
time limit plus head-room, and copies the proxy's records and the logs out.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
from pydantic import ValidationError

from proxy_addon.addon import KEY_OPTION
from proxy_addon.matching import redact_command
from proxy_addon.records import SandboxBlock, write_bytes_atomic
from sandbox.container.contract import AGENT_TRACE, SandboxReport
from sandbox.host import docker_api as engine
from sandbox.host.image import RunImage, check_image
from sandbox.host.limits import Limits
from sandbox.host.payload import AgentChoice, container_files
from sandbox.runs import PreparedRun, RunJob, RunOutcome, SetupFailure, run_one

HOST_GRACE_S = 60
"""Head-room past time_limit for the proxy to start and the agent to be stopped."""
LOGS = ("agent.log", "mitmdump.log", "submit.log")
AGENT_OUT_LIMIT = 16 * 1024 * 1024
"""Bytes of each file of a harness's own trace copied out at most."""


@dataclass
class RunRequest:
    """Everything one container run needs; the CLI and the batch build these."""

    task_dir: Path
    agent: AgentChoice
    out: Path
    image: str
    model: str = "none"
    harness: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    network: str | None = None
    upstream_ca: Path | None = None
    mitm_options: dict[str, str | list[str]] = field(default_factory=dict)
    stop_grace_s: float = 10
    proxy_ready_timeout_s: float = 60
    log_limit_bytes: int = 64 * 1024 * 1024
    """Bytes of each log (agent.log, mitmdump.log, submit.log) copied out at most."""
    limits: Limits = field(default_factory=Limits)
    labels: dict[str, str] = field(default_factory=dict)
    on_container: Callable[[Any], None] | None = None
    """Called with the container as soon as it exists, before it starts (the batch tracks
    them for Ctrl-C)."""
    stop: threading.Event | None = None
    """Set on Ctrl-C (by the batch): the run starts no container, or kills the one it just
    started, so a container created while the batch was being stopped never keeps running."""

    ts: str | None = None
    """The run directory's timestamp (one for all runs of a demo); None: the run's start."""

    def job(self) -> RunJob:
        harness = self.harness or self.agent.harness
        return RunJob(self.task_dir, self.out, self.model, harness, self.stop, self.ts)

    def check_image(self, client: docker.DockerClient) -> RunImage:
        """The image, checked before any container starts: it exists and holds the harness
        the agent is (EngineError naming the build command otherwise)."""
        harness = self.agent.harness_name if self.agent.kind == "harness" else None
        return check_image(client, self.image, harness)


class DockerExecutor:
    """Executes a prepared run in a fresh container of req.image (client None: describes a run
    that never reached an engine)."""

    def __init__(self, client: docker.DockerClient | None, req: RunRequest) -> None:
        self.client = client
        self.req = req
        self.image: RunImage | None = None
        self.container_name: str | None = None
        self.container_started: float | None = None
        self.report: SandboxReport | None = None

    def execute(self, run: PreparedRun) -> None:
        try:
            self._execute(run)
        except engine.EngineError as e:
            raise SetupFailure(f"engine: {e}") from e

    def abandon(self, run: PreparedRun) -> None:
        """Ctrl-C inside a Docker call may have left a container we never got a handle on."""
        if self.client is None:
            return
        with contextlib.suppress(docker.errors.DockerException):
            engine.remove_labelled(self.client, engine.LABEL, str(run.run_dir))

    def _execute(self, run: PreparedRun) -> None:
        """Create, start, wait for and collect the container."""
        req = self.req
        assert self.client is not None, "an executor without an engine only describes"
        self.image = req.check_image(self.client)
        files = self._files(run)
        self.container_name = f"clawbench-{run.case[:60]}-{secrets.token_hex(4)}"
        container = engine.create(
            self.client,
            req.image,
            name=self.container_name,
            labels={engine.LABEL: str(run.run_dir), **req.labels},
            files=files,
            network=req.network,
            limits=req.limits.docker_kwargs(),
        )
        try:
            # Registered before it can run: a Ctrl-C from here on finds it. The stop checks
            # around start() close the window where the batch's kill met a container not yet
            # running.
            if req.on_container is not None:
                req.on_container(container)
            if run.job.stopping:
                raise SetupFailure("interrupted: stopped before the container started")
            self.container_started = time.time()
            engine.start(container)
            if run.job.stopping:
                engine.kill(container)
            self._wait(run, container)
            self._collect(run, container)
        finally:
            engine.remove(container)
        report = self.report = _read_report(run.data / "sandbox.json")
        if report is None and run.job.stopping:  # killed by the batch's stop, not by itself
            raise SetupFailure("interrupted: the container was killed by the batch's stop")
        if report is not None:
            run.execution.stopped = report.stopped()
            run.execution.egress_blocked = report.egress_blocked

    def _files(self, run: PreparedRun) -> list[engine.FileEntry]:
        req = self.req
        assert run.task is not None and run.view is not None
        return container_files(
            task_bytes=run.task_bytes,
            task=run.task,
            view=run.view,
            agent=req.agent,
            env=req.env,
            upstream_ca=req.upstream_ca,
            mitm_options=req.mitm_options,
            stop_grace_s=req.stop_grace_s,
            proxy_ready_timeout_s=req.proxy_ready_timeout_s,
            records_budget=req.limits.records,
        )

    def _wait(self, run: PreparedRun, container: Any) -> None:
        """Until the container exits, or past its deadline: stop it (a host timeout)."""
        req, task = self.req, run.task
        assert task is not None
        deadline = task.time_limit * 60 + req.proxy_ready_timeout_s + req.stop_grace_s
        ex = run.execution
        ex.exit_code = engine.wait(container, deadline + HOST_GRACE_S)
        if ex.exit_code is None:
            ex.host_timeout = True
            engine.stop(container, req.stop_grace_s + 10)
            ex.exit_code = engine.wait(container, 30)

    def _collect(self, run: PreparedRun, container: Any) -> None:
        """Copy the proxy's records, the logs and the report out of the container."""
        data, problems = run.data, run.execution.problems
        data.mkdir(exist_ok=True)
        # requests.jsonl may hold the whole records budget (the proxy keeps it within)
        limit = max(self.req.log_limit_bytes, self.req.limits.records)
        problems += engine.fetch(container, "/clawbench/data", data, limit)
        for name in LOGS:
            skipped = engine.fetch(
                container, f"/clawbench/logs/{name}", data / name, self.req.log_limit_bytes
            )
            problems += [p for p in skipped if "not in the container" not in p]
        engine.fetch(container, "/clawbench/report.json", data / "sandbox.json")
        # what the agent left in $CLAWBENCH_AGENT_OUT (nothing for the null and scripted agents)
        agent_out = engine.fetch(container, AGENT_TRACE, run.run_dir / "agent", AGENT_OUT_LIMIT)
        problems += [p for p in agent_out if "not in the container" not in p]
        write_bytes_atomic(data / "container.log", container.logs(stdout=True, stderr=True))

    def describe(self, run: PreparedRun) -> dict[str, Any]:
        blocks: dict[str, Any] = {"sandbox": self._sandbox_block(run)}
        if self.req.agent.kind == "harness" and self.image is not None:
            # the image's label: the harness that ran, however old, not this checkout's pins
            blocks["harness_version"] = self.image.harness_version
        return blocks

    def _sandbox_block(self, run: PreparedRun) -> SandboxBlock:
        """run-meta.json's `sandbox` block: how the run was contained."""
        req = self.req
        report = self.report
        agent: dict[str, Any] = {"kind": req.agent.kind}
        if req.agent.command:
            agent["command"] = redact_command(req.agent.command)
        if req.agent.kind == "scripted":
            agent["requests"] = len(req.agent.script)
        timings: dict[str, float | None] = {"container_started": self.container_started}
        if report is not None:
            timings.update(report.timings.model_dump())
        return SandboxBlock(
            image=req.image,
            image_id=self.image.id if self.image else None,
            container_name=self.container_name,
            container_exit_code=run.execution.exit_code,
            network=req.network,
            limits=req.limits.record(),
            agent=agent,
            env_keys=sorted(req.env),
            submit_page=bool(run.view and run.view.submit_page),
            upstream_ca=req.upstream_ca is not None,
            mitm_options={
                k: "[REDACTED]" if k == KEY_OPTION else v for k, v in req.mitm_options.items()
            },
            ipv6=report.ipv6 if report else None,
            peak_memory_bytes=report.peak_memory_bytes if report else None,
            listen=report.listen if report else [],
            agent_exit_code=report.agent_exit_code if report else None,
            agent_exec_error=report.agent_exec_error if report else None,
            report_detail=report.detail if report else None,
            timings=timings,
        )


def _read_report(path: Path) -> SandboxReport | None:
    try:
        return SandboxReport.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None


def run_task(client: docker.DockerClient, req: RunRequest) -> RunOutcome:
    """Run one task in a container; always returns (infra problems become an infra_failure
    outcome)."""
    return run_one(req.job(), DockerExecutor(client, req))


__all__ = ["DockerExecutor", "RunRequest", "run_task"]
