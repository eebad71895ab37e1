"""Build run directories and corpora (for the tests and bench/): ours and the reference's shapes.

The reference's run-meta.json carries the ~30 keys of its make_run_meta (test_case, the task's
metadata keys spread at top level, run_metrics, runtime, provenance, task, model_config,
run_flags, ...); its data/interception.json has no headers and no blocked_count; its verdict sits
in <run>/judge.json and in run-meta.json's "judge" block.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from proxy_addon.records.runmeta import safe_model

TS = "20260101-120000"


def task_json(
    slug: str,
    *,
    task_id: int = 1,
    instruction: str | None = None,
    url_pattern: str = r"shop\.example\.com/api/cart",
    method: str = "POST",
    body: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
    judge_context: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A task.json in the reference schema."""
    schema: dict[str, Any] = {"url_pattern": url_pattern, "method": method}
    if body is not None:
        schema["body"] = body
    if params is not None:
        schema["params"] = params
    task: dict[str, Any] = {
        "metadata": {
            "task_id": task_id,
            "metaclass": "daily-life",
            "class": "shopping",
            "description": f"task {slug}",
            "sites_involved": ["shop.example.com"],
            "platform": "shop",
            "common_info": {
                "email_credentials": "credentials to use the assigned disposable email account",
                "user_info": "alex_green_personal_info.json; the dummy user's personal information",
                "user_resume": "PDF resume with disposable email account injected",
            },
        },
        "instruction": instruction or f"Add one red mug to the cart ({slug})",
        "eval_schema": schema,
        "time_limit": 10,
    }
    if judge_context is not None:
        task["judge_context"] = judge_context
    return task


def write_corpus(root: Path, tasks: dict[str, dict[str, Any]]) -> Path:
    """root/<slug>/task.json for each task; returns root."""
    for slug, task in tasks.items():
        (root / slug).mkdir(parents=True, exist_ok=True)
        (root / slug / "task.json").write_text(json.dumps(task, indent=2))
    return root


def _sha(task: dict[str, Any] | None) -> str | None:
    return hashlib.sha256(json.dumps(task, indent=2).encode()).hexdigest() if task else None


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
    """run-meta.json as the reference's make_run_meta writes it (its ~30 keys). Long: one
    literal, the reference's keys in its order, is easier to check against it than pieces."""
    category = result_category or ("intercepted" if intercepted else "model_not_intercepted")
    infra = category not in ("intercepted", "model_not_intercepted")
    meta: dict[str, Any] = {
        "test_case": case,
        **task.get("metadata", {}),
        "task_json_sha256": _sha(task),
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
        "run_metrics": {
            "actions": 12,
            "requests": 80,
            "messages": 30,
            "screenshots": 12,
            "recording_bytes": 1000,
            "api_calls": 9,
            "stop_reason": None,
            "missing_files": [],
            "api_or_credit_evidence": None,
        },
        "usage": {"api_calls": 9, "input_tokens": 1000, "output_tokens": 100},
        "runtime": {"container_engine": "docker", "platform": "linux", "python_version": "3.12.3"},
        "provenance": {
            "clawbench_version": "0.11.0",
            "commit": None,
            "branch": None,
            "dirty": None,
            "corpus": {"suite": "v2", "path": None, "revision": None},
            "harness": {"name": harness},
        },
        "browser_runtime": None,
        "task": {
            "case_name": case,
            "task_json_sha256": _sha(task),
            "time_limit_minutes": task["time_limit"],
            "has_extra_info": False,
        },
        "model_config": {"model": model, "api_type": "openai-completions", "api_key_count": 1},
        "run_flags": {
            "human": False,
            "no_build": True,
            "harness": harness,
            "judge": None,
            "no_judge": True,
        },
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
    run = batch / safe_model(model) / f"{harness}-{case}-{safe_model(model)}-{ts}"
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


def our_meta(
    case: str,
    task: dict[str, Any],
    *,
    model: str,
    harness: str,
    ts: str,
    intercepted: bool,
    stop_reason: str | None = None,
    result_category: str | None = None,
) -> dict[str, Any]:
    """run-meta.json as our runner writes it (RunMeta keys and a few extras)."""
    return {
        "test_case": case,
        "task_id": task.get("metadata", {}).get("task_id"),
        "instruction": task["instruction"],
        "model": model,
        "harness": harness,
        "timestamp": ts,
        "time_limit_minutes": task["time_limit"],
        "duration_seconds": 61.5,
        "task_json_sha256": _sha(task),
        "intercepted": intercepted,
        "stop_reason": stop_reason,
        "result_category": result_category
        or ("intercepted" if intercepted else "model_not_intercepted"),
        "egress_blocked": 0,
        "sandbox": {"image": "clawbench-sandbox:test"},
    }


def our_run(
    batch: Path,
    case: str,
    task: dict[str, Any],
    data: Path | None = None,
    *,
    model: str = "qwen/qwen3-coder",
    harness: str = "curl",
    ts: str = TS,
    stop_reason: str = "agent_exited",
    interception: dict[str, Any] | None = None,
) -> Path:
    """A run dir in our layout; data/ is moved in from a real proxy run when given."""
    run = batch / safe_model(model) / f"{harness}-{case}-{safe_model(model)}-{ts}"
    run.mkdir(parents=True)
    if data is not None:
        data.rename(run / "data")
    else:
        (run / "data").mkdir()
        (run / "data" / ".proxy-ready").write_text("{}")
    path = run / "data" / "interception.json"
    if interception is not None:
        path.write_text(json.dumps(interception, indent=2))
    if not path.exists():
        path.write_text(
            json.dumps(
                {
                    "intercepted": False,
                    "stop_reason": stop_reason,
                    "stop_description": f"Session stopped: {stop_reason}.",
                    "request": None,
                    "schema": task["eval_schema"],
                }
            )
        )
    intercepted = json.loads(path.read_text()).get("intercepted", False)
    meta = our_meta(
        case,
        task,
        model=model,
        harness=harness,
        ts=ts,
        intercepted=intercepted,
        stop_reason=None if intercepted else stop_reason,
    )
    (run / "run-meta.json").write_text(json.dumps(meta, indent=2))
    (run / "task.json").write_text(json.dumps(task, indent=2))
    return run


__all__ = [
    "TS",
    "our_meta",
    "our_run",
    "reference_meta",
    "reference_run",
    "safe_model",
    "task_json",
    "write_corpus",
]
