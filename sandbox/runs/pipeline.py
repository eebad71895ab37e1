"""One run, whatever executes it: prepare, execute, classify, record.

    prepare   a fresh run directory, task.json copied verbatim, the task loaded, the agent's view
    execute   an Executor runs the agent with the proxy (a container, or the demo's processes)
    record    classify how it ended (records.outcome; the model API's failure from the proxy's
              data/usage.json, never from the harness's word), write interception.json when
              the addon wrote none, data/traffic.har and run-meta.json (runs.record)

Every run that got as far as a run directory ends with run-meta.json and interception.json,
infra failures included (a bug of ours too: its traceback goes to data/runner-error.log), so a
batch can always be scored and resumed.
"""

from __future__ import annotations

import hashlib
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from proxy_addon.records import (
    MY_INFO_DIR,
    USAGE_FILE,
    Category,
    Ending,
    RecordError,
    Stopped,
    case_name,
    classify,
    model_api_failure,
    new_run_dir,
    read_interception,
    read_usage,
    stamp,
    write_bytes_atomic,
)
from proxy_addon.tasks import Task, TaskError, read_task_bytes, task_from_bytes, task_path
from sandbox.runs.agentview import AgentView, agent_view
from sandbox.runs.record import record_not_intercepted, record_traffic, write_meta


@dataclass(frozen=True)
class RunJob:
    """Which task to run, for whom, and where its run directory goes."""

    task_dir: Path
    out: Path
    model: str
    harness: str
    stop: threading.Event | None = None
    """Set on Ctrl-C (by a batch): the executor starts nothing more, or ends what it started."""
    ts: str | None = None
    """The run directory's timestamp; None: when it starts (the demo gives all its runs one)."""

    @property
    def stopping(self) -> bool:
        return self.stop is not None and self.stop.is_set()


@dataclass
class Execution:
    """What the executor learned; filled in as it goes, so a failure keeps what came before."""

    stopped: Stopped | None = None
    """Why the session stopped; None when it left no report (the container died)."""
    exit_code: int | None = None
    host_timeout: bool = False
    egress_blocked: int | None = None
    problems: list[str] = field(default_factory=list)


@dataclass
class PreparedRun:
    """A run about to be executed: its directory, its task and what its agent may see."""

    job: RunJob
    run_dir: Path
    case: str
    ts: str
    started: float
    task: Task | None = None
    task_bytes: bytes = b""
    task_sha256: str | None = None
    view: AgentView | None = None
    execution: Execution = field(default_factory=Execution)

    @property
    def data(self) -> Path:
        return self.run_dir / "data"


class SetupFailure(Exception):
    """The executor could not run the agent (an engine error, an interrupt before the start):
    an infra failure with this reason. Interrupts start with "interrupted"."""


class Executor(Protocol):
    """Runs the agent of a prepared run with the proxy; fills run.execution."""

    def execute(self, run: PreparedRun) -> None: ...

    def abandon(self, run: PreparedRun) -> None:
        """Ctrl-C inside execute: remove whatever it may have left running."""

    def describe(self, run: PreparedRun) -> dict[str, Any]:
        """The executor's own blocks of run-meta.json (`sandbox`, `demo`), whether or not
        execute ran."""


@dataclass(frozen=True)
class RunOutcome:
    run_dir: Path
    ending: Ending
    duration_s: float

    @property
    def intercepted(self) -> bool:
        return self.ending.category == Category.INTERCEPTED

    @property
    def exit_code(self) -> int:
        return self.ending.exit_code


def prepare(job: RunJob) -> PreparedRun:
    """A fresh run directory for the job (the task itself is loaded by `load`)."""
    ts = job.ts or stamp()
    case = case_name(job.task_dir)
    run_dir = new_run_dir(job.out, job.harness, case, job.model, ts)
    return PreparedRun(job, run_dir, case, ts, time.time())


def load(run: PreparedRun) -> None:
    """Copy task.json verbatim (for offline re-grading) and load it; TaskError if it is bad."""
    src = task_path(run.job.task_dir)
    raw = read_task_bytes(src)
    run.task_bytes = raw
    run.task_sha256 = hashlib.sha256(raw).hexdigest()
    write_bytes_atomic(run.run_dir / "task.json", raw)
    run.task = task_from_bytes(raw, src)  # a url_pattern that does not compile is a TaskError
    run.view = agent_view(run.task, src.parent)
    keep_user_info(run.run_dir, run.view)


def keep_user_info(run_dir: Path, view: AgentView) -> None:
    """Copy the files the agent gets under /my-info/ into <run>/my-info/, so the judge is given
    the user information the agent had when the run is scored without its corpus."""
    if view.files:
        (run_dir / MY_INFO_DIR).mkdir(exist_ok=True)
    for name, src in view.files.items():
        try:
            data = src.read_bytes()
        except OSError as e:
            view.warnings.append(f"{src}: not kept for the judge ({e.strerror or e})")
            continue
        write_bytes_atomic(run_dir / MY_INFO_DIR / name, data)


def run_one(job: RunJob, executor: Executor) -> RunOutcome:
    """Run one task; always returns (infra problems become an infra_failure outcome).

    Ctrl-C is recorded (the run ends as an infra failure) and raised again."""
    run = prepare(job)
    failure = None
    try:
        load(run)
        executor.execute(run)
    except TaskError as e:
        failure = f"task_data: {e}"
    except SetupFailure as e:
        failure = str(e)
    except KeyboardInterrupt:
        executor.abandon(run)
        finish(run, "interrupted: the runner was stopped", executor.describe(run))
        raise
    except Exception as e:  # a bug of ours or an unforeseen error: still a recorded infra failure
        failure = _unexpected(run, e)
    ending = finish(run, failure, executor.describe(run))
    return RunOutcome(run.run_dir, ending, time.time() - run.started)


def finish(run: PreparedRun, setup_failure: str | None, blocks: dict[str, Any]) -> Ending:
    """Classify the run and write its records: interception.json (if the addon wrote none),
    traffic.har and run-meta.json (with the executor's blocks)."""
    run.data.mkdir(exist_ok=True)
    intercepted = _intercepted(run.data)
    ex = run.execution
    ending = classify(
        intercepted=intercepted,
        stopped=ex.stopped,
        setup_failure=setup_failure,
        exit_code=ex.exit_code,
        host_timeout=ex.host_timeout,
        model_api=_model_api_failure(run.data),
    )
    record_not_intercepted(run.data, ending, run.task)
    record_traffic(run)
    write_meta(run, ending, intercepted, blocks)
    return ending


def _intercepted(data: Path) -> bool:
    try:
        return read_interception(data / "interception.json").intercepted
    except RecordError:
        return False


def _model_api_failure(data: Path) -> str | None:
    """Why the proxy's record (data/usage.json, which the agent cannot write) says the model
    API failed the run's own calls; None when it does not, or there is no record."""
    try:
        usage = read_usage(data / USAGE_FILE)
    except RecordError:
        return None  # run-meta.json's agent_usage_warning names the file
    return model_api_failure(usage.api if usage else None)


def _unexpected(run: PreparedRun, error: Exception) -> str:
    """Keep the traceback in data/runner-error.log; return a one-line failure reason."""
    run.data.mkdir(exist_ok=True)
    text = "".join(traceback.format_exception(error))
    write_bytes_atomic(run.data / "runner-error.log", text.encode())
    line = " ".join(f"{type(error).__name__}: {error}".split())
    return f"runner: {line[:500]} (traceback in data/runner-error.log)"


__all__ = [
    "Execution",
    "Executor",
    "PreparedRun",
    "RunJob",
    "RunOutcome",
    "SetupFailure",
    "finish",
    "load",
    "prepare",
    "run_one",
]
