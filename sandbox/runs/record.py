"""run-meta.json as every run writes it: the reference's keys, ours, and the executor's blocks.

The keys the scorer reads (docs/formats.md, "run-meta.json") come first; the task's metadata rides
along like the reference's (task_id, class, platform, ...); the executor adds how it ran the agent
(`sandbox` for a container, `demo` for the demo's local processes). Secrets stay out: --env values
are listed by name only and the agent command has secret-looking assignments redacted.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proxy_addon.records import (
    REQUESTS_SUMMARY_FILE,
    RUN_META,
    USAGE_FILE,
    Ending,
    NotIntercepted,
    RecordError,
    RunMeta,
    is_infra_category,
    read_agent_result,
    read_requests_summary,
    read_usage,
    write_json_atomic,
    write_run_meta,
    write_traffic_har,
)
from proxy_addon.records.provenance import provenance

if TYPE_CHECKING:
    from proxy_addon.tasks import Task
    from sandbox.runs.pipeline import PreparedRun


def meta_core(run: PreparedRun, ending: Ending, intercepted: bool) -> dict[str, Any]:
    """The keys every run-meta.json carries (docs/formats.md, "run-meta.json"), the task's metadata
    first like the reference's."""
    task = run.task
    meta: dict[str, Any] = {"test_case": run.case}
    if task is not None and task.metadata is not None:
        meta.update(task.metadata.model_dump(mode="json", by_alias=True))
    meta.update(
        task_id=task.task_id if task else None,
        task_json_sha256=run.task_sha256,
        instruction=task.instruction if task else None,
        model=run.job.model,
        harness=run.job.harness,
        timestamp=run.ts,
        time_limit_minutes=task.time_limit if task else None,
        duration_seconds=round(time.time() - run.started, 1),
        intercepted=intercepted,
        stop_reason=str(ending.stop_reason),
        result_category=str(ending.category),
        infra_failure=is_infra_category(ending.category),
        egress_blocked=run.execution.egress_blocked,
    )
    if ending.failure_reason:
        meta["failure_reason"] = ending.failure_reason
    return meta


def record_not_intercepted(data: Path, ending: Ending, task: Task | None) -> None:
    """data/interception.json in the not-intercepted shape, when the addon wrote none."""
    if (data / "interception.json").exists():
        return
    schema = task.eval_schema.model_dump(mode="json", exclude_none=True) if task else None
    write_json_atomic(
        data / "interception.json", NotIntercepted.for_reason(ending.interception_reason, schema)
    )


def record_traffic(run: PreparedRun) -> None:
    """data/traffic.har (HAR 1.2) from what the proxy recorded; one that cannot be written is a
    collection warning of the run, never a lost run."""
    try:
        write_traffic_har(run.run_dir)
    except OSError as e:
        run.execution.problems.append(f"data/traffic.har: not written: {e.strerror or e}")


def agent_fields(run_dir: Path) -> dict[str, Any]:
    """What the harness's driver claimed (agent/result.json) and what its model calls cost
    (data/usage.json, counted by the proxy, not by the agent)."""
    fields: dict[str, Any] = {}
    result, problem = read_agent_result(run_dir / "agent" / "result.json")
    if result is not None:
        fields["agent_claim"] = result.claim()
    elif problem is not None:
        fields["agent_claim"] = None
        fields["agent_claim_warning"] = problem
    try:
        usage = read_usage(run_dir / "data" / USAGE_FILE)
    except RecordError as e:
        fields["agent_usage_warning"] = str(e)
    else:
        if usage is not None:
            fields["agent_usage"] = usage.model_dump(mode="json")
    return fields


def records_fields(data: Path) -> dict[str, Any]:
    """What the proxy's records budget left out (data/requests-summary.json): the requests
    shortened and those only counted; nothing when no proxy wrote the summary."""
    try:
        summary = read_requests_summary(data / REQUESTS_SUMMARY_FILE)
    except RecordError as e:
        return {"records_warning": str(e)}
    if summary is None:
        return {}
    return {
        "requests_shortened": summary.lines_shortened,
        "requests_not_logged": summary.requests_not_logged,
    }


def write_meta(run: PreparedRun, ending: Ending, intercepted: bool, blocks: dict[str, Any]) -> None:
    """Write <run>/run-meta.json for a finished (or failed) run, the executor's blocks after
    the common keys."""
    meta = meta_core(run, ending, intercepted)
    if run.view is not None and run.view.warnings:
        meta["extra_info_warnings"] = run.view.warnings
    if run.execution.problems:
        meta["collection_warnings"] = run.execution.problems
    meta.update(agent_fields(run.run_dir))
    meta.update(records_fields(run.data))
    meta.update(blocks)
    meta["provenance"] = provenance()
    write_run_meta(run.run_dir / RUN_META, RunMeta.model_validate(meta))


__all__ = ["meta_core", "record_not_intercepted", "record_traffic", "write_meta"]
