"""Run every task of a corpus in the sandbox, N at a time, into one batch directory.

Placeholder tasks (log only, they can never intercept) are skipped unless asked for. --resume
keeps every run that finished (anything but an infra failure, which is retried) and runs the
rest. Ctrl-C or SIGTERM: no new runs start, running containers are killed, every container of
the batch is removed, the summary is written, exit 130. When --stop-after runs in a row end
model_api_failure (a broken key, quota or endpoint), no new run starts either (the ones running
finish), the batch says why and exits incomplete: --resume continues it once that is fixed.

The steps: plan (which tasks run, which are kept), execute (in containers, by the run pipeline),
score (when a judge is given), summarize and report.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from pathlib import Path

import docker

from proxy_addon.records import (
    BatchJob,
    BatchStatus,
    BatchSummary,
    Category,
    batch_status,
    case_name,
    find_task_dirs,
    now_iso,
    read_batch_summary,
    stamp,
    write_summary,
)
from proxy_addon.tasks import TaskError, load_task
from sandbox.host import docker_api as engine
from sandbox.host.executor import RunRequest, run_task
from sandbox.host.incomplete import ApiStreak, incomplete_batch
from sandbox.runs import RunOutcome, batch_summary, done_line, finished_job, job_of, run_all, say
from scorer.completeness import EXIT_INCOMPLETE
from scorer.models_yaml import JudgeConfig
from scorer.scoring import ScoreResult


@dataclass(frozen=True)
class BatchOptions:
    corpus: Path
    out: Path
    concurrency: int | None = 2
    """Runs at once; None: as many as the cluster takes (--backend ray)."""
    resume: Path | None = None
    include_placeholders: bool = False
    invalid: frozenset[Path] = frozenset()
    """Task dirs that do not load, skipped (--skip-invalid; checked before the batch)."""
    judge: JudgeConfig | None = None
    """The judge, resolved before any container started (--judge-model)."""
    models_yaml: Path | None = None
    stop_after: int = 3
    """Start no new run once this many runs in a row ended model_api_failure; 0: never stop."""
    allow_incomplete: bool = False


@dataclass
class BatchPlan:
    """Which tasks of the corpus run, which earlier runs are kept, which are skipped."""

    todo: list[tuple[int, Path]]
    kept: dict[int, BatchJob]
    placeholders: list[str]
    invalid: list[str]


@dataclass
class Executed:
    """What executing a plan gave: every job by corpus index, whether Ctrl-C stopped it, and
    how many runs went at once at most."""

    jobs: dict[int, BatchJob]
    interrupted: bool
    concurrency: int


Execute = Callable[[RunRequest, BatchOptions, Path, BatchPlan, ApiStreak], Executed]
"""Runs a plan's tasks into the batch directory, starting none once the streak halts: in local
containers (the default) or on a Ray cluster (sandbox.cluster)."""


def _plan(template: RunRequest, options: BatchOptions, batch_dir: Path) -> BatchPlan:
    harness = template.job().harness
    plan = BatchPlan([], {}, [], [])
    for i, case_dir in enumerate(find_task_dirs(options.corpus)):
        if case_dir in options.invalid:
            plan.invalid.append(case_dir.name)
            continue
        try:
            if load_task(case_dir).eval_schema.is_placeholder and not options.include_placeholders:
                plan.placeholders.append(case_dir.name)
                continue
        except TaskError:
            pass  # broken since the check: it runs, and becomes an infra failure with a run-meta
        done = None
        if options.resume is not None:
            done = finished_job(batch_dir, harness, case_name(case_dir), template.model)
        if done is not None:
            plan.kept[i] = done
        else:
            plan.todo.append((i, case_dir))
    return plan


def _open_batch_dir(options: BatchOptions) -> Path:
    if options.resume is not None:
        if not options.resume.is_dir():
            raise engine.EngineError(f"--resume {options.resume}: no such batch directory")
        return options.resume
    batch_dir = options.out / f"batch-{stamp()}"
    batch_dir.mkdir(parents=True, exist_ok=False)
    return batch_dir


def _execute(
    client: docker.DockerClient,
    template: RunRequest,
    options: BatchOptions,
    batch_dir: Path,
    plan: BatchPlan,
    streak: ApiStreak,
) -> Executed:
    """Run the plan's tasks in containers on this machine's engine."""
    batch_id = f"{batch_dir.name}-{secrets.token_hex(4)}"
    containers = engine.LiveContainers()
    stopping = threading.Event()
    template = replace(
        template,
        out=batch_dir,
        labels={**template.labels, engine.BATCH_LABEL: batch_id},
        on_container=containers.add,
        stop=stopping,
    )

    def work(item: tuple[int, Path]) -> RunOutcome | None:
        if stopping.is_set() or streak.halted.is_set():
            return None
        say(f"START {case_name(item[1])}")
        outcome = run_task(client, replace(template, task_dir=item[1]))
        say(f"DONE  {case_name(item[1])}: {done_line(outcome)}")
        streak.add(outcome.ending)
        return outcome

    def interrupted_now() -> None:
        say("interrupted: stopping running containers, starting no new runs")
        containers.kill_all()

    concurrency = options.concurrency or 2
    futures, interrupted = run_all(plan.todo, work, concurrency, stopping, interrupted_now)
    removed = engine.remove_labelled(client, engine.BATCH_LABEL, batch_id)
    if removed:
        say(f"removed {removed} leftover container(s)")
    jobs = dict(plan.kept)
    for (i, case_dir), future in zip(plan.todo, futures, strict=True):
        jobs[i] = _job(future, template.model, case_name(case_dir), stopping.is_set())
    return Executed(jobs, interrupted, concurrency)


def _job(future: Future[RunOutcome | None], model: str, case: str, stopped: bool) -> BatchJob:
    """The batch-summary entry of one planned run, however it went."""
    skipped = BatchJob(model=model, case=case, status=BatchStatus.SKIPPED)
    if not future.done() or future.cancelled():
        return skipped
    error = future.exception()
    if error is not None:
        # run_task records its own failures; this is one it could not (no run directory, an
        # unreadable run-meta.json): an infra failure of this job, not of the batch.
        say(f"ERROR {case}: {type(error).__name__}: {error}")
        return BatchJob(
            model=model, case=case, status=BatchStatus.ERROR, result_category=Category.INFRA_FAILURE
        )
    outcome = future.result()
    if outcome is None:
        return skipped
    job = job_of(outcome.run_dir, model, case)
    job.duration_seconds = round(outcome.duration_s)
    if stopped:
        job.status = BatchStatus.ERROR
    return job


def _score(
    batch_dir: Path, options: BatchOptions, jobs: dict[int, BatchJob]
) -> tuple[int, ScoreResult | None]:
    """Score the batch with the judge: (the scorer's exit code, 0 when it succeeded; its
    result). Each new job's status comes from the scorer's result for its run."""
    from sandbox.judging import score_run, scoring_failed

    assert options.judge is not None
    scored, result = score_run(batch_dir, options.judge, options.models_yaml)
    if scored:
        name = options.judge.name
        say(scoring_failed(batch_dir, scored, name, options.models_yaml))
    runs = {r.run_dir.resolve(): r for b in (result.batches if result else []) for r in b.runs}
    for job in jobs.values():
        run = runs.get(Path(job.run_dir).resolve()) if job.run_dir else None
        if run is not None and not job.resumed:
            job.status = batch_status(
                category=run.result_category,
                intercepted=run.intercepted,
                judge_match=run.judge_match,
                final_pass=run.final_pass,
            )
    return scored, result


def run_batch(
    client: docker.DockerClient,
    template: RunRequest,
    options: BatchOptions,
    *,
    json_output: bool = False,
    execute: Execute | None = None,
) -> int:
    """Run the batch (execute: where the runs go, this machine's engine by default); the exit
    code of sandbox.options.BATCH_EXIT_CODES: 0 complete, 2 when scoring failed, 3 incomplete
    (an infra failure, a missing verdict, a stop after model API failures; 0 with
    allow_incomplete), 130 on Ctrl-C."""
    template.check_image(client)  # a missing or wrong image fails once, before any run
    batch_dir = _open_batch_dir(options)
    earlier = read_batch_summary(batch_dir) if options.resume else None
    plan = _plan(template, options, batch_dir)
    invalid = f", {len(plan.invalid)} invalid skipped" if plan.invalid else ""
    say(
        f"{len(plan.todo)} run(s) to do, {len(plan.kept)} kept, {len(plan.placeholders)} "
        f"placeholder(s) skipped{invalid} -> {batch_dir}"
    )
    start = time.monotonic()
    streak = ApiStreak(options.stop_after)
    run = execute or (lambda *args: _execute(client, *args))
    executed = run(template, options, batch_dir, plan, streak)
    jobs, interrupted = executed.jobs, executed.interrupted
    scored, result = 0, None
    if options.judge is not None and not interrupted:
        scored, result = _score(batch_dir, options, jobs)
    summary = batch_summary(
        started_at=earlier.started_at if earlier else now_iso(),
        elapsed_s=time.monotonic() - start + (earlier.elapsed_seconds if earlier else 0),
        concurrency=executed.concurrency,
        harness=template.job().harness,
        image=template.image,
        corpus=options.corpus,
        jobs=[jobs[i] for i in sorted(jobs)],
        interrupted=interrupted,
        placeholders=plan.placeholders,
        invalid=plan.invalid,
    )
    write_summary(batch_dir, summary)
    _report(batch_dir, summary, json_output)
    if interrupted or scored == 130:
        return 130
    if scored:
        return 2
    judge = options.judge.name if options.judge else None
    line = incomplete_batch(
        batch_dir, options.corpus, summary, result, streak, judge, options.models_yaml
    )
    if line is None:
        return 0
    say(line)
    return 0 if options.allow_incomplete else EXIT_INCOMPLETE


def _report(batch_dir: Path, summary: BatchSummary, json_output: bool) -> None:
    if json_output:
        print(json.dumps({"batch_dir": str(batch_dir), **summary.model_dump()}))
    else:
        counts = ", ".join(f"{k} {v}" for k, v in summary.totals.items() if v)
        print(f"batch {batch_dir}: {counts or 'no jobs'}")


__all__ = ["BatchOptions", "BatchPlan", "Execute", "Executed", "run_batch"]
