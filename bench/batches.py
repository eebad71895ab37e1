"""Build run directories and corpora (for the tests and bench/): tasks, corpora and runs in our
shape (the reference's shape: bench/reference_batches.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from proxy_addon.records import safe_model
from proxy_addon.records.layout import run_dir_name

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


def task_sha(task: dict[str, Any] | None) -> str | None:
    return hashlib.sha256(json.dumps(task, indent=2).encode()).hexdigest() if task else None


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
        "task_json_sha256": task_sha(task),
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
    run = batch / safe_model(model) / run_dir_name(harness, case, model, ts)
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
    "safe_model",
    "task_json",
    "task_sha",
    "write_corpus",
]
