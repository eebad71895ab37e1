"""run-meta.json as the runner writes it: the reference's keys, ours, and the sandbox's details.

The keys the scorer reads (SPEC section 5) come first; the task's metadata rides along like the
reference's (task_id, class, platform, ...); `sandbox` says how the run was contained. Secrets
stay out: --env values are listed by name only and the agent command has secret-looking
assignments redacted.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proxy_addon.records.atomic import write_json_atomic
from proxy_addon.records.interception import NotIntercepted
from proxy_addon.records.outcome import Ending
from proxy_addon.records.runmeta import RunMeta, write_run_meta
from sandbox.host.image import REPO

if TYPE_CHECKING:
    from proxy_addon.tasks.model import Task
    from sandbox.host.executor import _Run

_SECRET_ASSIGNMENT = re.compile(
    r"(?i)\b([\w-]*(?:token|secret|password|passwd|api[-_]?key|auth)[\w-]*)=(\S+)"
)
_SECRET_FLAG = re.compile(r"(?i)(--[\w-]*(?:token|secret|password|api[-_]?key)[\w-]*[ =])(\S+)")


def redact_command(command: str) -> str:
    """A shell command with NAME=value and --flag value secrets replaced by [REDACTED]."""
    command = _SECRET_ASSIGNMENT.sub(r"\1=[REDACTED]", command)
    return _SECRET_FLAG.sub(r"\1[REDACTED]", command)


@cache
def provenance() -> dict[str, Any]:
    """Versions and the git commit of the runner that produced a run."""
    out: dict[str, Any] = {"python": sys.version.split()[0]}
    for dist in ("clawbench-intercept", "mitmproxy", "docker"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    try:
        sha = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        sha = ""
    out["git_sha"] = sha or None
    return out


def _sandbox_block(run: _Run) -> dict[str, Any]:
    req, report = run.req, run.report
    agent: dict[str, Any] = {"kind": req.agent.kind}
    if req.agent.command:
        agent["command"] = redact_command(req.agent.command)
    if req.agent.kind == "scripted":
        agent["requests"] = len(req.agent.script)
    timings: dict[str, Any] = {"container_started": run.container_started}
    if report is not None:
        timings.update(report.timings.model_dump())
    return {
        "image": req.image,
        "image_id": run.image_id,
        "container_name": run.container_name,
        "container_exit_code": run.container_exit,
        "network": req.network,
        "agent": agent,
        "env_keys": sorted(req.env),
        "submit_page": bool(run.view and run.view.submit_page),
        "upstream_ca": req.upstream_ca is not None,
        "mitm_options": dict(req.mitm_options),
        "ipv6": report.ipv6 if report else None,
        "listen": report.listen if report else [],
        "agent_exit_code": report.agent_exit_code if report else None,
        "report_detail": report.detail if report else None,
        "timings": timings,
    }


def meta_core(
    *,
    case: str,
    task: Task | None,
    task_sha256: str | None,
    model: str,
    harness: str,
    ts: str,
    started: float,
    verdict: Ending,
    intercepted: bool,
    egress_blocked: int | None,
) -> dict[str, Any]:
    """The keys every run-meta.json carries (SPEC section 5), the task's metadata first like
    the reference's; the sandbox and the demo add their own blocks after these."""
    meta: dict[str, Any] = {"test_case": case}
    if task is not None and task.metadata is not None:
        meta.update(task.metadata.model_dump(mode="json", by_alias=True))
    meta.update(
        task_id=task.task_id if task else None,
        task_json_sha256=task_sha256,
        instruction=task.instruction if task else None,
        model=model,
        harness=harness,
        timestamp=ts,
        time_limit_minutes=task.time_limit if task else None,
        duration_seconds=round(time.time() - started, 1),
        intercepted=intercepted,
        stop_reason=verdict.stop_reason,
        result_category=verdict.category,
        infra_failure=verdict.category == "infra_failure",
        egress_blocked=egress_blocked,
    )
    if verdict.failure_reason:
        meta["failure_reason"] = verdict.failure_reason
    return meta


def record_not_intercepted(data: Path, verdict: Ending, task: Task | None) -> None:
    """data/interception.json in the not-intercepted shape, when the addon wrote none."""
    if (data / "interception.json").exists():
        return
    schema = task.eval_schema.model_dump(mode="json", exclude_none=True) if task else None
    write_json_atomic(
        data / "interception.json", NotIntercepted.for_reason(verdict.interception_reason, schema)
    )


def write_meta(run: _Run, verdict: Ending, intercepted: bool) -> None:
    """Write <run>/run-meta.json for a finished (or failed) run."""
    meta = meta_core(
        case=run.case,
        task=run.task,
        task_sha256=run.task_sha256,
        model=run.req.model,
        harness=run.harness,
        ts=run.ts,
        started=run.started,
        verdict=verdict,
        intercepted=intercepted,
        egress_blocked=run.report.egress_blocked if run.report else None,
    )
    if run.view is not None and run.view.warnings:
        meta["extra_info_warnings"] = run.view.warnings
    if run.problems:
        meta["collection_warnings"] = run.problems
    meta["sandbox"] = _sandbox_block(run)
    meta["provenance"] = provenance()
    write_run_meta(run.run_dir / "run-meta.json", RunMeta.model_validate(meta))
