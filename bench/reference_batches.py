"""Run directories in the reference's shape (for the tests and bench/).

The reference's run-meta.json carries the ~30 keys of its make_run_meta (test_case, the task's
metadata keys spread at top level, run_metrics, runtime, provenance, task, model_config,
run_flags, ...); its data/interception.json has no headers and no blocked_count; its verdict sits
in <run>/judge.json and in run-meta.json's "judge" block.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.batches import TS, task_sha
from proxy_addon.records import safe_model
from proxy_addon.records.layout import run_dir_name


def _run_metrics() -> dict[str, Any]:
    """run-meta.json's run_metrics block: the counts of a 7-minute run."""
    return {
        "actions": 12,
        "requests": 80,
        "messages": 30,
        "screenshots": 12,
        "recording_bytes": 1000,
        "api_calls": 9,
        "stop_reason": None,
        "missing_files": [],
        "api_or_credit_evidence": None,
    }


def _provenance(harness: str) -> dict[str, Any]:
    """run-meta.json's provenance block (a checkout the reference could not describe)."""
    return {
        "clawbench_version": "0.11.0",
        "commit": None,
        "branch": None,
        "dirty": None,
        "corpus": {"suite": "v2", "path": None, "revision": None},
        "harness": {"name": harness},
    }


def _task_block(case: str, task: dict[str, Any]) -> dict[str, Any]:
    """run-meta.json's task block."""
    return {
        "case_name": case,
        "task_json_sha256": task_sha(task),
        "time_limit_minutes": task["time_limit"],
        "has_extra_info": False,
    }


def _run_flags(harness: str) -> dict[str, Any]:
    """run-meta.json's run_flags block: a run without the reference's judge."""
    return {"human": False, "no_build": True, "harness": harness, "judge": None, "no_judge": True}


def reference_meta(
    case: str,
    task: dict[str, Any],
    *,
    model: str,
    harness: str,
    intercepted: bool,
    ts: str,
    result_category: str | None = None,
    judge: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """run-meta.json as the reference's make_run_meta writes it (its ~30 keys, in its order)."""
    category = result_category or ("intercepted" if intercepted else "model_not_intercepted")
    infra = category not in ("intercepted", "model_not_intercepted")
    meta: dict[str, Any] = {
        "test_case": case,
        **task.get("metadata", {}),
        "task_json_sha256": task_sha(task),
        "instruction": task["instruction"],
        "model": model,
        "harness": harness,
        "thinking_level": "medium",
        "temperature": None,
        "max_tokens": None,
        "email_used": "alex.green@example.com",
        "timestamp": ts,
        "time_limit_minutes": task["time_limit"],
        "duration_seconds": 420,
        "intercepted": intercepted,
        "result_category": category,
        "failure_category": None if intercepted else category,
        "infra_failure": category == "infra_failure",
        "adjusted_eligible": not infra,
        "infra_flags": [],
        "run_metrics": _run_metrics(),
        "usage": {"api_calls": 9, "input_tokens": 1000, "output_tokens": 100},
        "runtime": {"container_engine": "docker", "platform": "linux", "python_version": "3.12.3"},
        "provenance": _provenance(harness),
        "browser_runtime": None,
        "task": _task_block(case, task),
        "model_config": {"model": model, "api_type": "openai-completions", "api_key_count": 1},
        "run_flags": _run_flags(harness),
    }
    if judge is not None:
        meta["judge"] = judge
        meta["judge_match"] = judge.get("match")
    meta["pass"] = bool(intercepted and (judge is None or judge.get("match") is True))
    return meta


_REFERENCE_LOG_LINE = {
    "timestamp": 1.0,
    "url": "https://shop.example.com/",
    "method": "GET",
    "headers": {},
    "body": None,
    "query_params": {},
    "resource_type": "Document",
}


def _reference_interception(
    task: dict[str, Any], request: dict[str, Any] | None, stop_reason: str
) -> dict[str, Any]:
    """data/interception.json in the reference's shapes (no headers, no blocked_count)."""
    if request is None:
        return {
            "intercepted": False,
            "stop_reason": stop_reason,
            "stop_description": f"Session stopped: {stop_reason}.",
            "request": None,
            "schema": task["eval_schema"],
        }
    return {
        "intercepted": True,
        "intercepted_at": 1767268800.5,
        "request": {
            "url": request["url"],
            "method": request["method"],
            "params": request.get("params", {}),
            "body": request.get("body"),
        },
        "schema": task["eval_schema"],
    }


def reference_run(
    batch: Path,
    case: str,
    task: dict[str, Any],
    *,
    model: str = "anthropic/claude-sonnet-4-6",
    harness: str = "openclaw",
    request: dict[str, Any] | None = None,
    ts: str = TS,
    result_category: str | None = None,
    stop_reason: str = "time_limit_exceeded",
    judge: dict[str, Any] | None = None,
    judge_file: dict[str, Any] | None = None,
) -> Path:
    """A run dir in the reference's layout: <batch>/<safe_model>/<harness>-<case>-<model>-<ts>."""
    run = batch / safe_model(model) / run_dir_name(harness, case, model, ts)
    (run / "data").mkdir(parents=True)
    intercepted = request is not None
    meta = reference_meta(
        case,
        task,
        model=model,
        harness=harness,
        intercepted=intercepted,
        ts=ts,
        result_category=result_category,
        judge=judge,
    )
    (run / "run-meta.json").write_text(json.dumps(meta, indent=2))
    interception = _reference_interception(task, request, stop_reason)
    (run / "data" / "interception.json").write_text(json.dumps(interception, indent=2))
    (run / "data" / "requests.jsonl").write_text(json.dumps(_REFERENCE_LOG_LINE) + "\n")
    if judge_file is not None:
        (run / "judge.json").write_text(json.dumps(judge_file, indent=2))
    return run


__all__ = ["reference_meta", "reference_run"]
