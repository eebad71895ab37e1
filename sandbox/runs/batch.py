"""Run every task of a corpus in the sandbox, N at a time, into one batch directory.

Layout: <out>/batch-<ts>/{batch-summary.json, <safe_model>/<harness>-<case>-...}. Placeholder
tasks (log only, they can never intercept) are skipped unless asked for. --resume keeps every
run that finished (anything but an infra failure, which is retried) and runs the rest. Ctrl-C or
SIGTERM: no new runs start, running containers are killed, every container of the batch is
removed, the summary is written, exit 130.
"""

from __future__ import annotations

import json
import secrets
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import docker

from proxy_addon.records.batchsummary import (
    BatchJob,
    BatchSummary,
    now_iso,
    read_summary,
    status_of,
    totals,
    write_summary,
)
from proxy_addon.records.interception import RecordError
from proxy_addon.records.layout import case_name, find_task_dirs, runs_of, stamp
from proxy_addon.records.runmeta import read_run_meta
from proxy_addon.tasks.model import TaskError, load_task
from sandbox.host import docker_api as engine
from sandbox.host.executor import RunRequest, run_task


@dataclass(frozen=True)
class BatchOptions:
    corpus: Path
    out: Path
    concurrency: int = 2
    resume: Path | None = None
    include_placeholders: bool = False
    judge_model: str | None = None
    models_yaml: Path | None = None


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def finished_job(batch_dir: Path, harness: str, case: str, model: str) -> BatchJob | None:
    """The newest finished (non-infra) run of a job already in the batch, as a resumed job."""
    for run_dir in reversed(runs_of(batch_dir, harness, case, model)):
        try:
            meta = read_run_meta(run_dir / "run-meta.json")
        except RecordError:
            continue
        if meta.result_category == "infra_failure":
            continue
        return BatchJob(
            model=model,
            case=case,
            status=status_of(meta),
            duration_seconds=round(meta.duration_seconds or 0),
            run_dir=str(run_dir),
            result_category=meta.result_category,
            resumed=True,
        )
    return None


class _Containers:
    """The batch's running containers, so an interrupt can kill them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[str, Any] = {}

    def add(self, container: Any) -> None:
        with self._lock:
            self._live[container.id] = container

    def kill_all(self) -> None:
        with self._lock:
            live = list(self._live.values())
        for container in live:
            # Not started yet or already gone is fine: its worker sees the stop event, or
            # removes what is left.
            engine.kill(container)


def _plan(template: RunRequest, options: BatchOptions, batch_dir: Path) -> tuple[list, list]:
    harness = template.harness or template.agent.harness
    jobs: list[BatchJob | Path] = []
    placeholders = []
    for case_dir in find_task_dirs(options.corpus):
        try:
            if load_task(case_dir).eval_schema.is_placeholder and not options.include_placeholders:
                placeholders.append(case_dir.name)
                continue
        except TaskError:
            pass  # a broken task still runs: it becomes an infra failure with a run-meta.json
        done = None
        if options.resume is not None:
            done = finished_job(batch_dir, harness, case_name(case_dir), template.model)
        jobs.append(done or case_dir)
    return jobs, placeholders


def run_batch(
    client: docker.DockerClient,
    template: RunRequest,
    options: BatchOptions,
    *,
    json_output: bool = False,
) -> int:
    """Run the batch; 0 when every job ran without an infra failure and scoring (if asked)
    succeeded, 2 otherwise, 130 on Ctrl-C."""
    engine.image_id(client, template.image)  # a missing image fails once, before any run
    if options.resume is not None:
        batch_dir = options.resume
        if not batch_dir.is_dir():
            raise engine.EngineError(f"--resume {batch_dir}: no such batch directory")
    else:
        batch_dir = options.out / f"batch-{stamp()}"
        batch_dir.mkdir(parents=True, exist_ok=False)
    earlier = read_summary(batch_dir) if options.resume else None
    plan, placeholders = _plan(template, options, batch_dir)
    harness = template.harness or template.agent.harness
    batch_id = f"{batch_dir.name}-{secrets.token_hex(4)}"
    containers = _Containers()
    stopping = threading.Event()
    results: dict[int, BatchJob] = {
        i: item for i, item in enumerate(plan) if isinstance(item, BatchJob)
    }
    todo = [(i, item) for i, item in enumerate(plan) if isinstance(item, Path)]
    say(
        f"{len(todo)} run(s) to do, {len(results)} kept, {len(placeholders)} placeholder(s) "
        f"skipped -> {batch_dir}"
    )

    def work(index: int, case_dir: Path) -> None:
        case = case_name(case_dir)
        if stopping.is_set():
            results[index] = BatchJob(model=template.model, case=case, status="skipped")
            return
        req = replace(
            template,
            task_dir=case_dir,
            out=batch_dir,
            labels={**template.labels, engine.BATCH_LABEL: batch_id},
            on_container=containers.add,
            stop=stopping,
        )
        say(f"START {case}")
        outcome = run_task(client, req)
        meta = read_run_meta(outcome.run_dir / "run-meta.json")
        job = BatchJob(
            model=template.model,
            case=case,
            status="error" if stopping.is_set() else status_of(meta),
            duration_seconds=round(outcome.duration_s),
            run_dir=str(outcome.run_dir),
            result_category=outcome.verdict.category,
        )
        results[index] = job
        say(
            f"DONE  {case}: {job.status} ({outcome.verdict.stop_reason}) in {job.duration_seconds}s"
        )

    start = time.monotonic()
    started_at = earlier.started_at if earlier else now_iso()
    interrupted = False
    pool = ThreadPoolExecutor(max_workers=options.concurrency, thread_name_prefix="run")
    futures: list[Future[None]] = [pool.submit(work, i, case_dir) for i, case_dir in todo]
    try:
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
    except KeyboardInterrupt:
        interrupted = True
        stopping.set()
        say("interrupted: stopping running containers, starting no new runs")
        containers.kill_all()
    finally:
        while True:
            try:
                pool.shutdown(wait=True, cancel_futures=True)
                break
            except KeyboardInterrupt:  # again: keep killing, never leave containers behind
                interrupted = True
                stopping.set()
                containers.kill_all()
        removed = engine.remove_labelled(client, engine.BATCH_LABEL, batch_id)
        if removed:
            say(f"removed {removed} leftover container(s)")
    for (i, case_dir), future in zip(todo, futures, strict=True):
        error = future.exception() if future.done() and not future.cancelled() else None
        if error is not None:
            # run_task records its own failures; this is one it could not (no run directory,
            # an unreadable run-meta.json): an infra failure of this job, not of the batch.
            say(f"ERROR {case_name(case_dir)}: {type(error).__name__}: {error}")
            results[i] = BatchJob(
                model=template.model,
                case=case_name(case_dir),
                status="error",
                result_category="infra_failure",
            )
        results.setdefault(
            i, BatchJob(model=template.model, case=case_name(case_dir), status="skipped")
        )
    scored = 0
    if options.judge_model and not interrupted:
        from sandbox.judging import score_run, scoring_failed

        scored = score_run(batch_dir, options.judge_model, options.models_yaml)
        if scored:
            say(scoring_failed(batch_dir, scored, options.judge_model, options.models_yaml))
        for job in results.values():
            if job.run_dir and not job.resumed:
                job.status = status_of(read_run_meta(Path(job.run_dir) / "run-meta.json"))
    jobs = [results[i] for i in sorted(results)]
    elapsed = time.monotonic() - start + (earlier.elapsed_seconds if earlier else 0)
    summary = BatchSummary(
        started_at=started_at,
        finished_at=now_iso(),
        elapsed_seconds=round(elapsed),
        max_concurrent=options.concurrency,
        harness=harness,
        image=template.image,
        corpus=str(options.corpus),
        interrupted=interrupted,
        jobs=jobs,
        totals=totals(jobs),
        placeholders_skipped=placeholders,
    )
    write_summary(batch_dir, summary)
    if json_output:
        print(json.dumps({"batch_dir": str(batch_dir), **summary.model_dump()}))
    else:
        counts = ", ".join(f"{k} {v}" for k, v in summary.totals.items() if v)
        print(f"batch {batch_dir}: {counts or 'no jobs'}")
    if interrupted or scored == 130:
        return 130
    return 2 if summary.totals.get("error") or scored else 0
