"""Run one task in the sandbox and leave a run directory that clawbench-score reads.

    <out>/<safe_model>/<harness>-<case>-<safe_model>-<ts>/
        run-meta.json  task.json
        data/{interception.json, requests.jsonl, .proxy-ready, sandbox.json,
              agent.log, mitmdump.log, container.log, ...}

Every run that got as far as a run directory ends with run-meta.json and interception.json,
infra failures included (a bug of ours too: its traceback goes to data/runner-error.log), so a
batch can always be scored and resumed.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import docker.errors
from pydantic import ValidationError

from proxy_addon.matching.matcher import Matcher
from proxy_addon.records.atomic import write_bytes_atomic
from proxy_addon.records.interception import RecordError, read_interception
from proxy_addon.records.layout import case_name, new_run_dir, stamp
from proxy_addon.records.outcome import Category, Ending, classify
from proxy_addon.tasks.model import REGEX_FIX, Task, TaskError, load_task, task_path
from sandbox.container.contract import SandboxReport
from sandbox.host import docker_api as engine
from sandbox.host.payload import AgentChoice, container_files
from sandbox.runs.agentview import AgentView, agent_view
from sandbox.runs.record import record_not_intercepted, write_meta

HOST_GRACE_S = 60
"""Head-room past time_limit for the proxy to start and the agent to be stopped."""


@dataclass
class RunRequest:
    """Everything one run needs; the CLI and the batch build these."""

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
    labels: dict[str, str] = field(default_factory=dict)
    on_container: Callable[[Any], None] | None = None
    """Called with the container as soon as it exists, before it starts (the batch tracks
    them for Ctrl-C)."""
    stop: threading.Event | None = None
    """Set on Ctrl-C (by the batch): the run starts no container, or kills the one it just
    started, so a container created while the batch was being stopped never keeps running."""


class _Stopped(Exception):
    """The stop event was set before the container started."""


@dataclass
class RunOutcome:
    run_dir: Path
    verdict: Ending
    intercepted: bool
    duration_s: float

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code


@dataclass
class _Run:
    """What one run has learned so far (filled in step by step, read by the meta writer)."""

    req: RunRequest
    run_dir: Path
    started: float
    ts: str
    case: str
    harness: str
    task: Task | None = None
    task_sha256: str | None = None
    view: AgentView | None = None
    report: SandboxReport | None = None
    image_id: str | None = None
    container_name: str | None = None
    container_exit: int | None = None
    container_started: float | None = None
    problems: list[str] = field(default_factory=list)


def _load(run: _Run) -> None:
    src = task_path(run.req.task_dir)
    try:
        raw = src.read_bytes()
    except OSError as e:
        raise TaskError(src, "", f"cannot read: {e}") from e
    run.task_sha256 = hashlib.sha256(raw).hexdigest()
    write_bytes_atomic(run.run_dir / "task.json", raw)  # verbatim, for offline re-grading
    task = run.task = load_task(src)
    try:
        Matcher(task.eval_schema)
    except Exception as e:  # re.error: the addon would refuse this task at startup
        raise TaskError(
            src, "eval_schema.url_pattern", f"does not compile: {e} ({REGEX_FIX})"
        ) from e
    run.view = agent_view(task, src.parent)


def _read_report(path: Path) -> SandboxReport | None:
    try:
        return SandboxReport.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None


def _stop_requested(req: RunRequest) -> bool:
    return req.stop is not None and req.stop.is_set()


def _contain(client: docker.DockerClient, run: _Run) -> bool:
    """Create, start, wait for and collect the container; return True on a host timeout."""
    req, task, view = run.req, run.task, run.view
    assert task is not None and view is not None
    run.image_id = engine.image_id(client, req.image)
    files = container_files(
        task_bytes=(run.run_dir / "task.json").read_bytes(),
        task=task,
        view=view,
        agent=req.agent,
        env=req.env,
        upstream_ca=req.upstream_ca,
        mitm_options=req.mitm_options,
        stop_grace_s=req.stop_grace_s,
        proxy_ready_timeout_s=req.proxy_ready_timeout_s,
    )
    run.container_name = f"clawbench-{run.case[:60]}-{secrets.token_hex(4)}"
    labels = {engine.LABEL: str(run.run_dir), **req.labels}
    data = run.run_dir / "data"
    timed_out = False
    container = engine.create(
        client,
        req.image,
        name=run.container_name,
        labels=labels,
        files=files,
        network=req.network,
    )
    try:
        # Registered before it can run: a Ctrl-C from here on finds it. The stop checks around
        # start() close the window where the batch's kill met a container not yet running.
        if req.on_container is not None:
            req.on_container(container)
        if _stop_requested(req):
            raise _Stopped
        run.container_started = time.time()
        engine.start(container)
        if _stop_requested(req):
            engine.kill(container)
        deadline = (
            task.time_limit * 60 + req.proxy_ready_timeout_s + req.stop_grace_s + HOST_GRACE_S
        )
        run.container_exit = engine.wait(container, deadline)
        if run.container_exit is None:
            timed_out = True
            engine.stop(container, req.stop_grace_s + 10)
            run.container_exit = engine.wait(container, 30)
        data.mkdir(exist_ok=True)
        run.problems += engine.fetch(container, "/clawbench/data", data)
        for name in ("agent.log", "mitmdump.log", "submit.log"):
            skipped = engine.fetch(
                container, f"/clawbench/logs/{name}", data / name, req.log_limit_bytes
            )
            run.problems += [p for p in skipped if "not in the container" not in p]
        engine.fetch(container, "/clawbench/report.json", data / "sandbox.json")
        logs = container.logs(stdout=True, stderr=True)
        write_bytes_atomic(data / "container.log", logs)
    finally:
        engine.remove(container)
    run.report = _read_report(data / "sandbox.json")
    return timed_out


def _intercepted(data: Path) -> bool:
    try:
        return read_interception(data / "interception.json").intercepted
    except RecordError:
        return False


def run_task(client: docker.DockerClient, req: RunRequest) -> RunOutcome:
    """Run one task; always returns (infra problems become an infra_failure outcome)."""
    ts = stamp()
    case = case_name(req.task_dir)
    harness = req.harness or req.agent.harness
    run = _Run(
        req, new_run_dir(req.out, harness, case, req.model, ts), time.time(), ts, case, harness
    )
    setup_failure = None
    timed_out = False
    try:
        _load(run)
        timed_out = _contain(client, run)
    except TaskError as e:
        setup_failure = f"task_data: {e}"
    except engine.EngineError as e:
        setup_failure = f"engine: {e}"
    except _Stopped:
        setup_failure = "interrupted: stopped before the container started"
    except KeyboardInterrupt:
        setup_failure = "interrupted: the runner was stopped"
        # Ctrl-C inside a Docker call may have left a container we never got a handle on.
        with contextlib.suppress(docker.errors.DockerException):
            engine.remove_labelled(client, engine.LABEL, str(run.run_dir))
        _finish(run, setup_failure, timed_out)
        raise
    except Exception as e:  # a bug of ours or an unforeseen error: still a recorded infra failure
        setup_failure = _unexpected(run, e)
    verdict = _finish(run, setup_failure, timed_out)
    return RunOutcome(
        run.run_dir, verdict, verdict.category == Category.INTERCEPTED, time.time() - run.started
    )


def _unexpected(run: _Run, error: Exception) -> str:
    """Keep the traceback in data/runner-error.log; return a one-line failure reason."""
    data = run.run_dir / "data"
    data.mkdir(exist_ok=True)
    text = "".join(traceback.format_exception(error))
    write_bytes_atomic(data / "runner-error.log", text.encode())
    line = " ".join(f"{type(error).__name__}: {error}".split())
    return f"runner: {line[:500]} (traceback in data/runner-error.log)"


def _requests_seen(data: Path) -> int:
    """Lines in requests.jsonl: one per request of the agent's that the proxy saw."""
    try:
        with (data / "requests.jsonl").open("rb") as log:
            return sum(1 for line in log if line.strip())
    except OSError:  # none: the proxy never started, or saw nothing and never created it
        return 0


def _finish(run: _Run, setup_failure: str | None, timed_out: bool) -> Ending:
    data = run.run_dir / "data"
    data.mkdir(exist_ok=True)
    intercepted = _intercepted(data)
    verdict = classify(
        intercepted=intercepted,
        stopped=run.report.stopped() if run.report else None,
        setup_failure=setup_failure,
        exit_code=run.container_exit,
        host_timeout=timed_out,
        agent_requests=_requests_seen(data),
    )
    record_not_intercepted(data, verdict, run.task)
    write_meta(run, verdict, intercepted)
    return verdict
