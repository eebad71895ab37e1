"""Per-run planning: Stage 1, the re-check, the task behind the run, and what the judge must do.

For each judge and rubric a credited run either reuses a verdict (its judge file with the same
cache key and a non-null match, or, for the first judge, a reference prior) or needs a judge
call. Nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proxy_addon.records import as_match
from proxy_addon.tasks import Task
from scorer.batch.corpus import Corpus, CorpusTask
from scorer.batch.recheck import SKIPPED, recheck
from scorer.batch.rundir import RunRecord
from scorer.batch.scored_run import (
    Decide,
    RubricVerdict,
    RunKey,
    ScoredRun,
    Stage1,
    result_category,
    stage1,
)
from scorer.judge import (
    JudgeInput,
    JudgeJob,
    cache_key,
    judge_file,
    read_prior,
    read_record,
    request_view,
    run_date,
    user_files,
)
from scorer.models_yaml import JudgeConfig


@dataclass
class JudgeSpec:
    """The judge settings every plan shares: judges in order (the first one's files are the
    reference's judge.json and judge_llm.json), rubrics (the first decides), the decide rule."""

    configs: tuple[JudgeConfig, ...]
    rubrics: tuple[str, ...]
    versions: dict[str, str]
    force: bool = False
    dump_limit: int = 4096
    decide: Decide = "first"

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.configs)


@dataclass
class Pending:
    """One judge call a run still needs, with what its judge file will record.

    saved is the verdict already on disk for the same inputs (under --force, or a judge error):
    kept when the call is not made this time (beyond --limit, a superseded re-run), so a verdict
    is only ever replaced by a new one, never erased.
    """

    job: JudgeJob
    cache_key: str
    path: Path  # the judge file it will write
    saved: RubricVerdict | None = None


@dataclass
class Plan:
    rec: RunRecord
    scored: ScoredRun
    pending: dict[tuple[str, str], Pending] = field(default_factory=dict)  # (judge, rubric)


def _corpus_task(rec: RunRecord, corpus: Corpus) -> CorpusTask | None:
    meta = rec.meta
    if meta is not None:
        if rec.meta_from_path and meta.task_json_sha256 in corpus.by_sha:
            # the task.json copy is the file the run ran; the case was parsed from a name
            return corpus.by_sha[meta.task_json_sha256]
        return corpus.find(meta.test_case, meta.task_json_sha256)
    # neither run-meta.json nor the layout names the task: a corpus slug in the directory's name
    hits = [slug for slug in corpus.tasks if f"-{slug}-" in f"-{rec.dir.name}-"]
    return corpus.tasks[max(hits, key=len)] if hits else None


def run_key(rec: RunRecord, corpus: Corpus | None) -> RunKey:
    """The key of a record read by load_meta (run-meta.json only)."""
    meta = rec.meta
    found = _corpus_task(rec, corpus) if corpus is not None else None
    return RunKey(
        run_dir=rec.dir,
        model=meta.model if meta else None,
        harness=meta.harness if meta else None,
        test_case=meta.test_case if meta else None,
        timestamp=meta.timestamp if meta else None,
        corpus_slug=found.slug if found else None,
    )


def _new_scored_run(rec: RunRecord, stage: Stage1) -> ScoredRun:
    meta = rec.meta
    return ScoredRun(
        **vars(run_key(rec, None)),
        task_id=meta.task_id if meta else None,
        duration_s=meta.duration_seconds if meta else None,
        stage=stage,
        credited=stage.intercepted,
        notes=list(rec.notes),
        identified=meta is not None,
        agent_usage=meta.agent_usage if meta else None,
    )


def plan_run(rec: RunRecord, corpus: Corpus | None, judge: JudgeSpec | None, enforce: bool) -> Plan:
    """Everything about one run short of calling the judge."""
    stage = stage1(rec)
    if corpus is None and rec.task_problem and not stage.infra:
        # the run's own task.json is its task here: without it no re-check, no judge_context
        stage = Stage1(False, rec.task_problem, stage.reference_category)
    out = _new_scored_run(rec, stage)
    task: Task | None = rec.task
    task_dir: Path | None = None  # where the task's extra_info files are, besides the run's copy
    if corpus is not None:
        found = _corpus_task(rec, corpus)
        out.corpus_slug = found.slug if found else None
        if found is not None:
            task, task_dir = found.task, found.path.parent
            sha = rec.meta.task_json_sha256 if rec.meta else None
            if sha and sha != found.sha256:
                out.notes.append(f"the corpus task {found.slug} changed since this run")
    meta = rec.meta
    if meta is not None and meta.intercepted != stage.intercepted and not stage.infra:
        out.notes.append(
            f"run-meta.json said intercepted={meta.intercepted}; data/interception.json says "
            f"{stage.intercepted}"
        )
    request = rec.request
    if stage.intercepted and request is not None:
        out.recheck = recheck(request, task.eval_schema) if task is not None else SKIPPED
        if enforce and out.recheck.status == "fail":
            out.credited = False
            out.notes.append("Stage-1 credit withdrawn: the re-check failed (--enforce-recheck)")
    plan = Plan(rec, out)
    if judge is not None:
        out.deciding, out.judges, out.decide = judge.rubrics[0], judge.names, judge.decide
    if judge is not None and out.credited and request is not None:
        _plan_calls(plan, judge, judge_input(rec, request, task, task_dir, judge.dump_limit))
    return plan


def judge_input(
    rec: RunRecord,
    request: dict[str, Any],
    task: Task | None,
    task_dir: Path | None,
    dump_limit: int,
) -> JudgeInput:
    """What the judge is given about a run: the instruction (as the runner recorded it), the
    request, judge_context, the date of the commit and the user information (/my-info/)."""
    meta = rec.meta
    instruction = (meta.instruction if meta else None) or (task.instruction if task else "") or ""
    context = (
        task.judge_context.model_dump(exclude_none=True) if task and task.judge_context else None
    )
    view = rec.interception
    return JudgeInput(
        instruction=instruction,
        request=request_view(request, dump_limit),
        judge_context=context,
        run_date=run_date(
            view.intercepted_at if view is not None else None, meta.timestamp if meta else None
        ),
        user_info=user_files(task.extra_info, rec.dir, task_dir) if task else (),
    )


def _plan_calls(plan: Plan, judge: JudgeSpec, data: JudgeInput) -> None:
    """Per judge and rubric: the saved verdict when it stands, else a pending call."""
    rec, out = plan.rec, plan.scored
    for i, config in enumerate(judge.configs):
        mine = out.verdicts.setdefault(config.name, {})
        for rubric in judge.rubrics:
            key = cache_key(config, rubric, judge.versions[rubric], data)
            path = judge_file(rec.dir, rubric, None if i == 0 else config.name)
            saved = _saved_verdict(rec, rubric, key, path, config.name if i == 0 else None, out)
            if saved is not None and saved.verdict is not None and not judge.force:
                mine[rubric] = saved
                continue
            job = JudgeJob((id(plan), config.name, rubric), rubric, data, judge=config.name)
            plan.pending[config.name, rubric] = Pending(job, key, path, saved)


def _saved_verdict(
    rec: RunRecord, rubric: str, key: str, path: Path, prior_of: str | None, out: ScoredRun
) -> RubricVerdict | None:
    """The verdict on disk for these inputs: ours with a match, else the reference's (prior_of:
    the judge whose priors count, the first), else ours with an error (null match), else None."""
    record, why = read_record(path)
    if why:
        out.notes.append(why)
    ours = None
    if record is not None and record.cache_key == key:
        ours = RubricVerdict(
            record.answer,
            record.reason,
            "judge",
            record.error,
            record.usage,
            cached=True,
            missing=record.missing,
        )
        if ours.verdict is not None:
            return ours
    prior = read_prior(rec.dir, rubric, rec.meta_raw, prior_of) if prior_of else None
    if prior is not None:
        return RubricVerdict(prior.verdict, prior.reason, prior.source)
    return ours


def finish(out: ScoredRun) -> None:
    """Set result_category and final_pass from what the scored run now holds."""
    judged, verdict = out.decision()
    stage = Stage1(
        out.credited,
        out.stage.infra,
        out.stage.reference_category,
        model_api=out.stage.model_api,
    )
    out.result_category, out.final_pass = result_category(stage, judged, verdict)


def meta_updates(plan: Plan) -> dict[str, Any] | None:
    """The scorer's keys for run-meta.json, or None when it cannot be rewritten."""
    meta = plan.rec.meta
    if meta is None:
        return None
    out = plan.scored
    verdict = out.decision()[1]
    updates: dict[str, Any] = {
        "intercepted": out.credited,
        "result_category": out.result_category,
        "judge_match": as_match(verdict),
        "judge_verdict": verdict,
        "final_pass": out.final_pass,
    }
    if "runner_category" not in meta.model_fields_set:
        updates["runner_category"] = meta.result_category
    if out.stage.reference_category:
        updates["reference_category"] = out.stage.reference_category
    return updates


__all__ = [
    "JudgeSpec",
    "Pending",
    "Plan",
    "finish",
    "judge_input",
    "meta_updates",
    "plan_run",
    "run_key",
]
