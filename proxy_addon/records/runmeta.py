"""run-meta.json: written by the runner, updated (own keys only) by the scorer; other keys kept."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from proxy_addon.records.atomic import write_json_atomic
from proxy_addon.records.jsonfile import RecordError, first_error, read_json_object
from proxy_addon.records.outcome import AnyCategory, AnyStopReason
from proxy_addon.records.usage import AgentUsage
from proxy_addon.records.verdict import JudgeVerdict


def safe_model(model: str) -> str:
    """The reference's path-safe model name: runs of '/' and ':' become '--'."""
    return re.sub(r"[/:]+", "--", model)


class RunMeta(BaseModel):
    """The keys we read or write; the reference's ~30 others ride along untouched."""

    model_config = ConfigDict(extra="allow")

    test_case: str | None = None
    task_id: int | str | None = None
    instruction: str | None = None
    model: str | None = None
    harness: str | None = None
    timestamp: str | None = None
    time_limit_minutes: float | None = None
    duration_seconds: float | None = None
    task_json_sha256: str | None = None
    intercepted: bool = False
    stop_reason: AnyStopReason | None = None
    result_category: AnyCategory | None = None
    egress_blocked: int | None = None
    judge_match: bool | None = None  # the reference's: true only for a match verdict
    judge_verdict: JudgeVerdict | None = None  # match | no_match | cannot_tell; null: no verdict
    final_pass: bool | None = None
    reference_category: str | None = None
    runner_category: AnyCategory | None = None
    agent_usage: AgentUsage | None = None  # a harness run: the proxy's count (data/usage.json)
    requests_shortened: int | None = None
    """Requests logged as their essentials only: the records budget's full lines were used up."""
    requests_not_logged: int | None = None
    """Requests past the records budget: counted, in no line of requests.jsonl."""


def read_run_meta(path: str | os.PathLike[str]) -> RunMeta:
    """Read a run-meta.json; RecordError names the file on any problem."""
    try:
        return RunMeta.model_validate(read_json_object(path))
    except ValidationError as e:
        raise RecordError(f"{path}: {first_error(e)}") from e


def write_run_meta(path: str | os.PathLike[str], meta: RunMeta) -> None:
    """Write run-meta.json atomically: the keys read or assigned, unknown ones included."""
    write_json_atomic(path, meta.model_dump(mode="json", exclude_unset=True), durable=True)


SCORER_KEYS = (
    "intercepted",
    "result_category",
    "judge_match",
    "judge_verdict",
    "final_pass",
    "reference_category",
    "runner_category",
)
"""The run-meta.json keys clawbench-score writes; every other key is the runner's."""


def merged_run_meta(raw: dict[str, Any], updates: Mapping[str, Any]) -> dict[str, Any] | None:
    """run-meta.json as read with the scorer's keys merged in (other keys kept verbatim, in
    order), validated; None when nothing would change."""
    unknown = set(updates) - set(SCORER_KEYS)
    if unknown:
        raise ValueError(f"not scorer keys of run-meta.json: {sorted(unknown)}")
    merged = {**raw, **updates}
    if merged == raw:
        return None
    RunMeta.model_validate(merged)  # what we write must still read back
    return merged
