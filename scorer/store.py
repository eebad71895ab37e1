"""What the scorer writes, and how: atomically, in worker threads, only when something changed.

A judge file is written as soon as its verdict arrives, the run's run-meta.json right after; a
failed write is remembered and reported, never lost. Before writing into a directory, temp files
a killed write of ours left there are swept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from proxy_addon.atomic import dump_json, write_bytes_atomic, write_json_atomic
from scorer.cache import our_judge_path
from scorer.discover import sweep_temp_files
from scorer.engine import JudgeResult
from scorer.plan import JudgeSpec, Plan, meta_updates
from scorer.runmeta import update_run_meta
from scorer.verdict import JudgeRecord, Usage


class Writer:
    """A small pool of writer threads; errors are collected, writes finish on close()."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="clawbench-write")
        self.errors: list[str] = []
        self.swept = 0
        self._futures: list[Future[None]] = []

    def submit(self, fn: Callable[..., None], *args: Any) -> None:
        self._futures.append(self.pool.submit(self._guard, fn, *args))

    def _guard(self, fn: Callable[..., None], *args: Any) -> None:
        try:
            fn(*args)
        except (OSError, ValueError) as e:
            self.errors.append(str(e))

    def sweep(self, directory: Path) -> None:
        self.swept += sweep_temp_files(directory)

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def meta_changed(plan: Plan) -> bool:
    """Would run-meta.json change? Most re-runs change nothing, and then nothing is queued."""
    updates = meta_updates(plan)
    raw = plan.rec.meta_raw
    return updates is not None and raw is not None and {**raw, **updates} != raw


def save_meta(writer: Writer, plan: Plan) -> None:
    updates = meta_updates(plan)
    if updates is None or plan.rec.meta_raw is None:
        return
    writer.sweep(plan.rec.dir)
    update_run_meta(plan.rec.dir / "run-meta.json", plan.rec.meta_raw, updates)


def save_verdict(writer: Writer, plan: Plan, record: JudgeRecord, then_meta: bool) -> None:
    path = our_judge_path(plan.rec.dir, record.rubric)
    writer.sweep(path.parent)
    write_json_atomic(path, record.model_dump(mode="json"), durable=True)
    if then_meta and meta_changed(plan):
        save_meta(writer, plan)


def judge_record(spec: JudgeSpec, plan: Plan, res: JudgeResult) -> JudgeRecord:
    """data/judge.json for one verdict just received."""
    rubric = res.job.rubric
    pending = plan.pending[rubric]
    return JudgeRecord(
        match=res.verdict.match,
        reason=res.verdict.reason,
        judge_model=spec.config.name,
        raw=res.raw,
        error=res.verdict.error,
        rubric=rubric,  # type: ignore[arg-type]
        prompt_version=spec.versions[rubric],
        cache_key=pending.cache_key,
        truncated=pending.truncated,
        usage=Usage(input_tokens=res.input_tokens, output_tokens=res.output_tokens),
        latency_s=res.latency_s,
        attempts=res.attempts,
        task_id=plan.outcome.task_id,
        test_case=plan.outcome.test_case,
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


__all__ = [
    "Writer",
    "judge_record",
    "meta_changed",
    "save_meta",
    "save_verdict",
    "write_if_changed",
]
