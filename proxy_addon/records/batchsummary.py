"""batch-summary.json: the reference's write_summary_json shape, plus what a resume needs.

The scorer reads elapsed_seconds for the leaderboard's wall_hours; a resumed batch carries the
earlier sessions' elapsed time forward so wall_hours stays the batch's whole cost.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proxy_addon.records.atomic import write_json_atomic
from proxy_addon.records.outcome import BATCH_STATUSES, AnyCategory, BatchStatus, batch_status
from proxy_addon.records.runmeta import RunMeta

SUMMARY = "batch-summary.json"

_OURS = ConfigDict(extra="forbid")


class BatchJob(BaseModel):
    model_config = _OURS

    model: str
    case: str
    status: BatchStatus
    duration_seconds: int = 0
    run_dir: str | None = None
    result_category: AnyCategory | None = None
    resumed: bool = False


class BatchSummary(BaseModel):
    """One batch; jobs in corpus order."""

    model_config = _OURS

    started_at: str
    finished_at: str
    elapsed_seconds: int
    max_concurrent: int
    harness: str
    image: str
    corpus: str
    interrupted: bool = False
    jobs: list[BatchJob] = Field(default_factory=list)
    totals: dict[str, int] = Field(default_factory=dict)
    placeholders_skipped: list[str] = Field(default_factory=list)
    invalid_skipped: list[str] = Field(default_factory=list)
    """Tasks whose task.json does not load, left out by --skip-invalid."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def status_of(meta: RunMeta) -> BatchStatus:
    """A finished run's batch status (records.outcome.batch_status)."""
    return batch_status(
        category=meta.result_category,
        intercepted=meta.intercepted,
        judge_match=meta.judge_match,
        final_pass=meta.final_pass,
    )


def totals(jobs: list[BatchJob]) -> dict[str, int]:
    return {s: sum(1 for j in jobs if j.status == s) for s in BATCH_STATUSES}


def read_summary(batch_dir: Path) -> BatchSummary | None:
    """The batch's earlier summary, if it wrote a readable one."""
    try:
        return BatchSummary.model_validate_json((batch_dir / SUMMARY).read_bytes())
    except (OSError, ValidationError):
        return None


def elapsed_seconds(batch_dir: Path) -> float | None:
    """elapsed_seconds of the batch's batch-summary.json, whoever wrote it: ours, or the
    reference's (whose other keys our model does not take); None when it has none."""
    try:
        data = json.loads((batch_dir / SUMMARY).read_bytes())
    except (OSError, ValueError):
        return None
    value = data.get("elapsed_seconds") if isinstance(data, dict) else None
    return float(value) if isinstance(value, int | float) else None


def corpus_name(batch_dir: Path) -> str | None:
    """The name of the corpus the batch ran (its directory's), from our batch-summary.json;
    None without one (the reference's batches name theirs in run-meta.json)."""
    summary = read_summary(batch_dir)
    return Path(summary.corpus).name or None if summary is not None else None


def write_summary(batch_dir: Path, summary: BatchSummary | dict[str, Any]) -> None:
    summary = BatchSummary.model_validate(summary)
    summary.totals = totals(summary.jobs)
    write_json_atomic(batch_dir / SUMMARY, summary)


__all__ = [
    "SUMMARY",
    "BatchJob",
    "BatchSummary",
    "corpus_name",
    "elapsed_seconds",
    "now_iso",
    "read_summary",
    "status_of",
    "totals",
    "write_summary",
]
