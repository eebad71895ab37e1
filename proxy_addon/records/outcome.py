"""How a run ended: the stop reasons, the result categories and the one `classify` (docs/formats.md,
"run-meta.json").

Every part speaks this vocabulary: the container's entrypoint and the demo's local executor say
why a session stopped (`StopReason`), the run pipeline turns that into the runner's category
with `classify`, the scorer adds the judge's with `scored_category`, and the batch summary's
status comes from `batch_status`.

Infra failures are counted apart: a task that does not load, a proxy that never became ready, a
container that died or had to be killed, an agent command that cannot execute, and the model API
failing the run's own calls as the proxy recorded them (`model_api_failure`, its own category;
records.modelapi has the rule). Everything else that did not intercept is the model's (agent's)
failure.

"Cannot execute" is the launcher's word, never the agent's exit status: the exec of the agent's
command failed (ENOENT, EACCES, ENOEXEC) before any of its code ran, as the container's launcher
(`sandbox.container.launch`) or the demo's Popen reports it (`Stopped.exec_error`). An agent
that started and then exits 126 or 127, whatever it did or did not send, chose that status: the
model's failure, and `batch --resume` gives it no second try.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import Field

from proxy_addon.records.verdict import JudgeVerdict


class StopReason(StrEnum):
    """Why a session stopped (run-meta.json's stop_reason)."""

    INTERCEPTED = "intercepted"
    AGENT_EXITED = "agent_exited"
    AGENT_IDLE = "agent_idle"
    TIME_LIMIT_EXCEEDED = "time_limit_exceeded"
    AGENT_RESOURCES_EXHAUSTED = "agent_resources_exhausted"
    """The agent ran out of its own memory, processes or writable space: the model's failure."""
    PROXY_FAILED = "proxy_failed"
    CONTAINER_FAILED = "container_failed"
    INTERRUPTED = "interrupted"
    HOST_TIMEOUT = "host_timeout"
    NODE_LOST = "node_lost"
    """--backend ray: the run's node (or its Ray worker) went away before the run came back."""
    TASK_DATA = "task_data"
    UNKNOWN = "unknown"


AnyStopReason = Annotated[StopReason | str, Field(union_mode="left_to_right")]
"""A stop_reason as a file may hold it: ours as a StopReason, the reference's others
(`chrome_cdp_timeout`, `missing_harness`, ...) kept as their text."""


INTERCEPTION_STOP_REASONS = (
    StopReason.TIME_LIMIT_EXCEEDED,
    StopReason.AGENT_EXITED,
    StopReason.AGENT_IDLE,
    StopReason.PROXY_FAILED,
    StopReason.CONTAINER_FAILED,
    StopReason.UNKNOWN,
)
"""The reference's stop reasons: the ones a not-intercepted interception.json may carry."""

INFRA_STOPS = frozenset(
    {
        StopReason.PROXY_FAILED,
        StopReason.CONTAINER_FAILED,
        StopReason.INTERRUPTED,
        StopReason.HOST_TIMEOUT,
        StopReason.NODE_LOST,
        StopReason.TASK_DATA,
        "chrome_cdp_timeout",  # the reference's: its browser never came up
        "missing_harness",  # the reference's: the agent's harness is not installed
    }
)
"""Stop reasons that are the sandbox's fault, never the model's."""


class Category(StrEnum):
    """run-meta.json's result_category (docs/formats.md, "run-meta.json")."""

    PASSED = "passed"
    JUDGE_MISMATCH = "judge_mismatch"
    JUDGE_CANNOT_TELL = "judge_cannot_tell"
    """The judge answered cannot_tell: not a pass, not a mismatch, counted apart."""
    JUDGE_ERROR = "judge_error"
    INTERCEPTED = "intercepted"
    MODEL_NOT_INTERCEPTED = "model_not_intercepted"
    INFRA_FAILURE = "infra_failure"
    MODEL_API_FAILURE = "model_api_failure"
    """An infra failure of its own kind: the agent's model API failed the run's own calls."""


AnyCategory = Annotated[Category | str, Field(union_mode="left_to_right")]
"""A result_category as a file may hold it: ours as a Category, the reference's others
(`api_or_credit`, `browser_runtime_*`, ...) kept as their text."""


INFRA_CATEGORIES = frozenset({Category.INFRA_FAILURE, Category.MODEL_API_FAILURE})
"""Our categories that are infra failures (re-run by batch --resume, never the model's)."""


REFERENCE_INFRA_CATEGORIES = frozenset({"api_or_credit", "task_data", "build_instruction"})
"""The reference's categories that are infra failures (so is every browser_runtime_*)."""

EXIT_CODES = {
    Category.INTERCEPTED: 0,
    Category.MODEL_NOT_INTERCEPTED: 1,
    Category.INFRA_FAILURE: 2,
    Category.MODEL_API_FAILURE: 2,
}
"""`clawbench-sandbox run`'s exit status by the runner's category."""


def is_infra_stop(reason: str | None) -> bool:
    """Whether a stop reason (ours or the reference's) is the sandbox's fault."""
    return reason in INFRA_STOPS


def is_infra_category(category: str | None) -> bool:
    """Whether a result_category (ours or the reference's) is an infra failure."""
    if not category:
        return False
    return (
        category in INFRA_CATEGORIES
        or category in REFERENCE_INFRA_CATEGORIES
        or category.startswith("browser_runtime")
    )


@dataclass(frozen=True)
class Stopped:
    """What the executor saw when the session stopped (the container's report.json, or the
    demo's local equivalent)."""

    reason: StopReason
    detail: str | None = None
    agent_exit_code: int | None = None
    exec_error: str | None = None
    """Why the agent's command could not be executed, as its launcher saw the exec fail."""


@dataclass(frozen=True)
class Ending:
    """The runner's verdict on a run: its category, its stop reason and, for an infra
    failure, why."""

    category: Category
    stop_reason: StopReason
    failure_reason: str | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.category]

    @property
    def interception_reason(self) -> StopReason:
        """The stop_reason of a not-intercepted interception.json (the reference's list)."""
        if self.stop_reason in INTERCEPTION_STOP_REASONS:
            return self.stop_reason
        if self.stop_reason in (
            StopReason.INTERRUPTED,
            StopReason.HOST_TIMEOUT,
            StopReason.NODE_LOST,
        ):
            return StopReason.CONTAINER_FAILED
        if self.stop_reason == StopReason.AGENT_RESOURCES_EXHAUSTED:
            return StopReason.AGENT_EXITED
        return StopReason.UNKNOWN


def classify(
    *,
    intercepted: bool,
    stopped: Stopped | None,
    setup_failure: str | None = None,
    exit_code: int | None = None,
    host_timeout: bool = False,
    model_api: str | None = None,
) -> Ending:
    """Decide a run's category from what its session left behind.

    stopped: None when the session left no report (the container died); model_api: why the
    proxy's record says the model API failed the run (records.modelapi.model_api_failure).
    """
    if intercepted:
        return Ending(Category.INTERCEPTED, StopReason.INTERCEPTED)
    infra = Category.INFRA_FAILURE
    if setup_failure is not None:
        if setup_failure.startswith("task_data"):
            return Ending(infra, StopReason.TASK_DATA, setup_failure)
        if setup_failure.startswith("interrupted"):
            return Ending(infra, StopReason.INTERRUPTED, setup_failure)
        if setup_failure.startswith("node_lost"):
            return Ending(infra, StopReason.NODE_LOST, setup_failure)
        return Ending(infra, StopReason.CONTAINER_FAILED, setup_failure)
    if stopped is None:
        why = f"no report.json from the container (exit code {exit_code})"
        if host_timeout:
            why = "host_timeout: the container outlived its deadline and left no report"
        return Ending(infra, StopReason.CONTAINER_FAILED, why)
    if host_timeout:
        return Ending(
            infra, StopReason.HOST_TIMEOUT, "host_timeout: the container outlived its deadline"
        )
    if is_infra_stop(stopped.reason):
        return Ending(infra, stopped.reason, stopped.detail or str(stopped.reason))
    if stopped.exec_error is not None:
        why = f"agent command could not be executed: {stopped.exec_error}"
        return Ending(infra, StopReason.AGENT_EXITED, why)
    if model_api is not None:
        return Ending(Category.MODEL_API_FAILURE, stopped.reason, model_api)
    if stopped.reason == StopReason.INTERCEPTED:
        # .stop-requested without interception.json: the addon's record is missing.
        return Ending(infra, StopReason.UNKNOWN, "stop requested but no interception.json")
    return Ending(Category.MODEL_NOT_INTERCEPTED, stopped.reason)


def scored_category(
    *,
    infra: bool,
    intercepted: bool,
    judged: bool,
    verdict: JudgeVerdict | None,
    model_api: bool = False,
) -> tuple[Category, bool]:
    """(result_category, final_pass) once scored: final_pass = intercepted AND the verdict is
    match; cannot_tell and a judge error (None) are categories of their own; model_api: the
    runner found the model API failing (kept as its own kind of infra failure)."""
    if infra:
        return (Category.MODEL_API_FAILURE if model_api else Category.INFRA_FAILURE), False
    if not intercepted:
        return Category.MODEL_NOT_INTERCEPTED, False
    if not judged:
        return Category.INTERCEPTED, False
    if verdict is JudgeVerdict.MATCH:
        return Category.PASSED, True
    if verdict is JudgeVerdict.NO_MATCH:
        return Category.JUDGE_MISMATCH, False
    if verdict is JudgeVerdict.CANNOT_TELL:
        return Category.JUDGE_CANNOT_TELL, False
    return Category.JUDGE_ERROR, False


class BatchStatus(StrEnum):
    """A run's status in batch-summary.json (the reference's words, plus judge_inconclusive)."""

    PASSED = "passed"
    INTERCEPTED = "intercepted"
    FAILED = "failed"
    ERROR = "error"
    """An infra failure (model_api_failure included): `batch --resume` runs it again."""
    JUDGE_INCONCLUSIVE = "judge_inconclusive"
    SKIPPED = "skipped"
    """Not run: the batch was interrupted (or its cluster gave up) before it started."""


BATCH_STATUSES = tuple(BatchStatus)


def batch_status(
    *,
    category: str | None,
    intercepted: bool,
    judge_match: bool | None,
    final_pass: bool | None,
) -> BatchStatus:
    """A finished run's status in batch-summary.json: passed / intercepted / failed / error /
    judge_inconclusive (no verdict, or cannot_tell). A run intercepted but not judged is
    `intercepted`: without a verdict nothing is passed (the reference's Stage-1 batches call it
    passed)."""
    if is_infra_category(category):
        return BatchStatus.ERROR
    if category == Category.JUDGE_CANNOT_TELL:
        return BatchStatus.JUDGE_INCONCLUSIVE
    if not intercepted:
        return BatchStatus.FAILED
    if final_pass is not None or judge_match is not None:
        if judge_match is None:
            return BatchStatus.JUDGE_INCONCLUSIVE
        return BatchStatus.PASSED if final_pass or judge_match else BatchStatus.FAILED
    return BatchStatus.INTERCEPTED


__all__ = [
    "BATCH_STATUSES",
    "EXIT_CODES",
    "INFRA_CATEGORIES",
    "INFRA_STOPS",
    "INTERCEPTION_STOP_REASONS",
    "REFERENCE_INFRA_CATEGORIES",
    "AnyCategory",
    "AnyStopReason",
    "BatchStatus",
    "Category",
    "Ending",
    "StopReason",
    "Stopped",
    "batch_status",
    "classify",
    "is_infra_category",
    "is_infra_stop",
    "scored_category",
]
