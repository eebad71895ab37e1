"""run-meta.json: written by the runner, updated (own keys only) by the scorer; other keys kept.

Every key we write is a field of RunMeta (the objects among them: records.runblocks); the
reference's others (run_metrics, judge, task, ...) ride along untouched, readable through the
raw dict `read_run_meta_raw` hands back with the model."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proxy_addon.records.atomic import write_json_atomic
from proxy_addon.records.jsonfile import RecordError, first_error, read_json_object
from proxy_addon.records.outcome import AnyCategory, AnyStopReason
from proxy_addon.records.runblocks import AgentClaim, DemoBlock, Provenance, SandboxBlock
from proxy_addon.records.usage import AgentUsage
from proxy_addon.records.verdict import JudgeVerdict

RUN_META = "run-meta.json"
"""The file's name, in every run directory (ours and the reference's)."""


def safe_model(model: str) -> str:
    """The reference's path-safe model name: runs of '/' and ':' become '--'."""
    return re.sub(r"[/:]+", "--", model)


class RunMeta(BaseModel):
    """The keys we read or write; the reference's ~30 others ride along untouched."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    test_case: str | None = None
    task_id: int | str | None = None
    # the task's metadata, copied like the reference's (its other keys ride along)
    metaclass: str | None = None
    class_: str | None = Field(default=None, alias="class")
    description: str | None = None
    sites_involved: list[str] | None = None
    platform: str | None = None
    common_info: dict[str, Any] | None = None
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
    infra_failure: bool | None = None
    failure_reason: str | None = None
    """An infra failure's cause, in words (records.outcome.Ending.failure_reason)."""
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
    records_warning: str | None = None
    """data/requests-summary.json could not be read."""
    extra_info_warnings: list[str] | None = None
    """The task's /my-info/ files that could not be given to the agent or kept for the judge."""
    collection_warnings: list[str] | None = None
    """What the runner could not collect (a file of the container, traffic.har, ...)."""
    agent_claim: AgentClaim | None = None
    agent_claim_warning: str | None = None
    """agent/result.json could not be read."""
    agent_usage_warning: str | None = None
    """data/usage.json could not be read."""
    sandbox: SandboxBlock | None = None
    demo: DemoBlock | None = None
    harness_version: str | None = None
    """The harness's version, from the label of the image that ran it."""
    provenance: Provenance | None = None

    @property
    def runner_said(self) -> AnyCategory | None:
        """The category the runner wrote, before any scoring overwrote result_category."""
        if "runner_category" in self.model_fields_set:
            return self.runner_category
        return self.result_category


def read_run_meta_raw(path: str | os.PathLike[str]) -> tuple[RunMeta, dict[str, Any]]:
    """Read a run-meta.json: the model, and the object as it is on disk (for the reference's
    keys, and for rewriting it with every key kept); RecordError names the file on any problem."""
    raw = read_json_object(path)
    try:
        return RunMeta.model_validate(raw), raw
    except ValidationError as e:
        raise RecordError(f"{path}: {first_error(e)}") from e


def read_run_meta(path: str | os.PathLike[str]) -> RunMeta:
    """Read a run-meta.json; RecordError names the file on any problem."""
    return read_run_meta_raw(path)[0]


def write_run_meta(path: str | os.PathLike[str], meta: RunMeta) -> None:
    """Write run-meta.json atomically: the keys read or assigned, unknown ones included."""
    data = meta.model_dump(mode="json", exclude_unset=True, by_alias=True)
    write_json_atomic(path, data, durable=True)


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
