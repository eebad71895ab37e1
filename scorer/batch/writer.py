"""What the scorer writes, and how: atomically, only when something changed.

A judge file is written as soon as its verdict arrives, the run's run-meta.json right after it,
so an interrupted batch resumes from what it already received. A failed write is remembered and
reported, never lost. Before writing into a directory, temp files a killed write of ours left
there are swept.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from proxy_addon.records import RUN_META, as_match, dump_json, merged_run_meta, write_bytes_atomic
from scorer.batch.discovery import sweep_temp_files
from scorer.batch.runplan import JudgeSpec, Pending, Plan, meta_updates
from scorer.judge import JudgeRecord, JudgeResult

Files = list[tuple[Path, bytes]]


class Writer:
    """Writes files in order; errors are collected for the caller to report."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.swept = 0
        self._swept_dirs: set[Path] = set()

    def write(self, files: Files) -> None:
        """Write these files in order; after a failure, not the rest (they would describe a lie:
        a run-meta.json saying judged when its judge file is missing)."""
        for path, data in files:
            try:
                if path.parent not in self._swept_dirs:
                    self.sweep(path.parent)
                # Atomic, not fsynced: a killed process leaves the old file or the new one; only
                # a power cut could leave an empty judge file, which read_record re-judges.
                write_bytes_atomic(path, data, durable=False)
            except OSError as e:
                self.errors.append(f"{path}: {e}")
                return

    def sweep(self, directory: Path) -> None:
        """Remove the temp files a killed write left in directory (once per directory)."""
        self._swept_dirs.add(directory)
        self.swept += sweep_temp_files(directory)


def meta_file(plan: Plan) -> Files:
    """run-meta.json's new bytes, or nothing when it would not change (or cannot be rewritten)."""
    updates = meta_updates(plan)
    raw = plan.rec.meta_raw
    if updates is None or raw is None:
        return []
    merged = merged_run_meta(raw, updates)
    return [] if merged is None else [(plan.rec.dir / RUN_META, dump_json(merged))]


def verdict_file(record: JudgeRecord, pending: Pending) -> Files:
    """The judge file of the call pending answered, with this record."""
    return [(pending.path, dump_json(record.model_dump(mode="json")))]


def judge_record(spec: JudgeSpec, plan: Plan, pending: Pending, res: JudgeResult) -> JudgeRecord:
    """A judge file's record for one verdict just received (pending: the call it answers)."""
    rubric, reply = res.job.rubric, res.reply
    config = next(c for c in spec.configs if c.name == res.job.judge)
    view = res.job.input.request
    return JudgeRecord(
        match=as_match(reply.verdict),
        verdict=reply.verdict,
        reason=reply.reason,
        missing=reply.missing,
        requirements=list(reply.checks),
        judge_model=res.job.judge,
        judge_settings=config.cache_params(),
        raw=res.raw,
        error=reply.error,
        rubric=rubric,  # type: ignore[arg-type]
        prompt_version=spec.versions[rubric],
        cache_key=pending.cache_key,
        truncated=view.truncated,
        body_unreadable=view.unreadable,
        usage=res.tokens,
        latency_s=res.latency_s,
        attempts=res.attempts,
        task_id=plan.scored.task_id,
        test_case=plan.scored.test_case,
    )


def write_if_changed(path: Path, data: Any) -> bool:
    """Write JSON atomically unless the file already holds exactly this; return whether written."""
    payload = dump_json(data)
    with contextlib.suppress(OSError):
        if path.read_bytes() == payload:
            return False
    sweep_temp_files(path.parent)
    write_bytes_atomic(path, payload)
    return True


__all__ = ["Files", "Writer", "judge_record", "meta_file", "verdict_file", "write_if_changed"]
