"""What every batch shares (the sandbox's corpus batch and the demo): running the jobs N at a
time with a clean Ctrl-C (`run_all`), a job's batch-summary entry from its run (`job_of`,
`finished_job` for --resume) and the summary itself (`batch_summary`).

Layout: <out>/batch-<ts>/{batch-summary.json, <safe_model>/<harness>-<case>-...}.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from proxy_addon.records import (
    RUN_META,
    BatchJob,
    BatchSummary,
    RecordError,
    is_infra_category,
    now_iso,
    read_run_meta,
    runs_of,
    status_of,
    totals,
)
from sandbox.runs.pipeline import RunOutcome


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def job_of(run_dir: Path, model: str, case: str, *, resumed: bool = False) -> BatchJob:
    """A finished run's batch-summary entry, from its run-meta.json."""
    meta = read_run_meta(run_dir / RUN_META)
    return BatchJob(
        model=model,
        case=case,
        status=status_of(meta),
        duration_seconds=round(meta.duration_seconds or 0),
        run_dir=str(run_dir),
        result_category=meta.result_category,
        resumed=resumed,
    )


def finished_job(batch_dir: Path, harness: str, case: str, model: str) -> BatchJob | None:
    """The newest finished (non-infra) run of a job already in the batch, as a resumed job."""
    for run_dir in reversed(runs_of(batch_dir, harness, case, model)):
        try:
            job = job_of(run_dir, model, case, resumed=True)
        except RecordError:
            continue
        if not is_infra_category(job.result_category):
            return job
    return None


def run_all[T, R](
    items: Sequence[T],
    work: Callable[[T], R],
    concurrency: int,
    stopping: threading.Event,
    on_interrupt: Callable[[], None] = lambda: None,
) -> tuple[list[Future[R]], bool]:
    """work(item) for every item, `concurrency` at a time: (futures in item order, interrupted).

    On Ctrl-C (or SIGTERM) stopping is set, on_interrupt runs (the sandbox kills its
    containers), no new item starts, and every item in flight ends before this returns (a
    second Ctrl-C does not cut that short)."""
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="run")
    futures = [pool.submit(work, item) for item in items]
    interrupted = False
    try:
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
    except KeyboardInterrupt:
        interrupted = True
        stopping.set()
        on_interrupt()
    finally:
        while True:
            try:
                pool.shutdown(wait=True, cancel_futures=True)
                break
            except KeyboardInterrupt:  # again: keep stopping, never leave anything behind
                interrupted = True
                stopping.set()
                on_interrupt()
    return futures, interrupted


def batch_summary(
    *,
    started_at: str,
    elapsed_s: float,
    concurrency: int,
    harness: str,
    image: str,
    corpus: Path,
    jobs: list[BatchJob],
    interrupted: bool,
    placeholders: list[str] | None = None,
    invalid: list[str] | None = None,
) -> BatchSummary:
    """The batch-summary.json of a finished (or interrupted) batch."""
    return BatchSummary(
        started_at=started_at,
        finished_at=now_iso(),
        elapsed_seconds=round(elapsed_s),
        max_concurrent=concurrency,
        harness=harness,
        image=image,
        corpus=str(corpus),
        interrupted=interrupted,
        jobs=jobs,
        totals=totals(jobs),
        placeholders_skipped=placeholders or [],
        invalid_skipped=invalid or [],
    )


def done_line(outcome: RunOutcome) -> str:
    """How a run ended, for the console's line per run: its category and why (an infra
    failure's reason in full, on one line)."""
    ending = outcome.ending
    why = str(ending.stop_reason)
    if ending.failure_reason:
        reason = " ".join(ending.failure_reason.split())
        why = reason if reason.startswith(f"{why}:") else f"{why}: {reason}"
    return f"{ending.category} ({why})"


__all__ = ["batch_summary", "done_line", "finished_job", "job_of", "run_all", "say"]
