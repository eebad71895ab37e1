"""task.json: the reference schema as pydantic models (`model`), corpus checks (`validation`),
the curator's linter (`lint`, `patterns`) and the `clawbench-tasks` command (`cli`)."""

from __future__ import annotations

from proxy_addon.tasks.model import (
    EvalSchema,
    ExtraInfo,
    JudgeContext,
    Task,
    TaskError,
    decode_task_json,
    load_task,
    parse_task,
    read_task_bytes,
    read_task_json,
    task_from_bytes,
    task_path,
)
from proxy_addon.tasks.validation import load_checked, validate_task

__all__ = [
    "EvalSchema",
    "ExtraInfo",
    "JudgeContext",
    "Task",
    "TaskError",
    "decode_task_json",
    "load_checked",
    "load_task",
    "parse_task",
    "read_task_bytes",
    "read_task_json",
    "task_from_bytes",
    "task_path",
    "validate_task",
]
