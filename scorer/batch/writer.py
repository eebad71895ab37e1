"""What the scorer writes, and how: atomically, only when something changed, off the event loop.

The JSON is serialised on the caller's thread (the event loop, between judge calls); a writer
thread only writes the bytes and renames, which hold the GIL for microseconds, so the loop is
never kept waiting for a response's turn. A judge file is written as soon as its verdict
arrives, the run's run-meta.json in the same job right after; a failed write is remembered and
reported, never lost. Before writing into a directory, temp files a killed write of ours left
there are swept.
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from proxy_addon.records.atomic import dump_json, write_bytes_atomic
from proxy_addon.records.runmeta import merged_run_meta
from scorer import index
from scorer.batch.discovery import sweep_temp_files
from scorer.batch.runplan import JudgeSpec, Pending, Plan, meta_updates
from scorer.judge.cache import our_judge_path
from scorer.judge.scheduler import JudgeResult
from scorer.judge.verdict import JudgeRecord, Usage

Files = list[tuple[Path, bytes]]


class Writer:
    """A small pool of writer threads; errors are collected, writes finish on close()."""

    def __init__(self, *, stat_runs: bool = False) -> None:
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="clawbench-write")
        self.errors: list[str] = []
        self.swept = 0
        # stat_runs: the score index's stats of each run are taken by the writer thread that
        # does its last write, while the judge calls are out, not all at the end of the batch.
        self.stat_runs = stat_runs
        self.run_stats: dict[str, list[int] | None] = {}
        self._lock = threading.Lock()
        self._open: dict[Path, int] = {}  # a run's writes submitted and not yet done
        self._last_given: set[Path] = set()

    def write(self, files: Files, run: Path | None = None, *, last: bool = False) -> None:
        """Write these files, in order, in a writer thread. run: the run they belong to; last:
        no other write for it will follow (once all of its writes are done, it is stat'ed)."""
        if not files:
            return  # a run with nothing to write is stat'ed with the batch's other paths
        tracked = run if self.stat_runs else None
        if tracked is not None:
            with self._lock:
                self._open[tracked] = self._open.get(tracked, 0) + 1
                if last:
                    self._last_given.add(tracked)
        self.pool.submit(self._write, files, tracked)

    def _write(self, files: Files, run: Path | None) -> None:
        self._write_files(files)
        if run is None:
            return
        with self._lock:
            self._open[run] -= 1
            final = not self._open[run] and run in self._last_given
            if final:
                del self._open[run]
                self._last_given.discard(run)
        if final:
            self.run_stats.update(index.stat_run(run))

    def _write_files(self, files: Files) -> None:
        swept: set[Path] = set()
        for path, data in files:
            try:
                if path.parent not in swept:
                    swept.add(path.parent)
                    self.swept += sweep_temp_files(path.parent)
                # Atomic, not fsynced: a killed process leaves the old file or the new one; only
                # a power cut could leave an empty judge file, which read_record re-judges.
                # (2000 fdatasyncs cost more than the judge's own latency on a fast judge.)
                write_bytes_atomic(path, data, durable=False)
            except OSError as e:
                self.errors.append(f"{path}: {e}")
                return  # the run-meta.json after a failed judge file would describe a lie

    def sweep(self, directory: Path) -> None:
        self.swept += sweep_temp_files(directory)

    def close(self) -> None:
        self.pool.shutdown(wait=True)


def meta_file(plan: Plan) -> Files:
    """run-meta.json's new bytes, or nothing when it would not change (or cannot be rewritten)."""
    updates = meta_updates(plan)
    raw = plan.rec.meta_raw
    if updates is None or raw is None:
        return []
    merged = merged_run_meta(raw, updates)
    return [] if merged is None else [(plan.rec.dir / "run-meta.json", dump_json(merged))]


def verdict_file(record: JudgeRecord, plan: Plan) -> Files:
    return [
        (our_judge_path(plan.rec.dir, record.rubric), dump_json(record.model_dump(mode="json")))
    ]


def judge_record(spec: JudgeSpec, plan: Plan, pending: Pending, res: JudgeResult) -> JudgeRecord:
    """data/judge.json for one verdict just received (pending: the call it answers)."""
    rubric = res.job.rubric
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


__all__ = ["Files", "Writer", "judge_record", "meta_file", "verdict_file", "write_if_changed"]
