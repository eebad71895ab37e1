"""clawbench-score's work: read the runs, judge what needs it, write the results.

First every run-meta.json is read, which says which runs count (re-runs count once, the
newest; tasks outside the corpus not at all). Then, inside the event loop, each run is read in
full and planned, and its judge calls start at once, so reading the batch overlaps the calls.
Judge files and run-meta.json are written as verdicts arrive (store.Writer); the batch summary
last. An interrupted batch resumes from its judge files.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proxy_addon.records.provenance import provenance
from proxy_addon.records.runpath import identify_from_paths
from scorer import index, preload
from scorer.batch.corpus import Corpus, load_corpus
from scorer.batch.discovery import Batch, find_batches
from scorer.batch.rescore_summary import Options, Summary, build_models, counted_runs, summarize
from scorer.batch.rundir import RunRecord, load_data, load_meta
from scorer.batch.runplan import JudgeSpec, Plan, finish, plan_run, run_key
from scorer.batch.scored_run import RubricVerdict
from scorer.batch.writer import (
    Files,
    Writer,
    judge_record,
    meta_file,
    verdict_file,
    write_if_changed,
)
from scorer.judge.prompts import DUMP_LIMIT, prompt_version
from scorer.judge.scheduler import Engine, EngineStats, JudgeJob, JudgeResult
from scorer.models_yaml import DEFAULT_JUDGE, resolve_judge

RUBRIC_SETS = {"strict": ("strict",), "lenient": ("lenient",), "both": ("strict", "lenient")}
_YIELD_EVERY = 4  # runs planned between two turns of the event loop (a few ms)


@dataclass
class ScoreOptions:
    path: Path
    tasks: Path | None = None
    n_total: int | None = None
    models_yaml: Path | None = None
    judge_model: str = DEFAULT_JUDGE
    rubric: str = "strict"
    no_judge: bool = False
    concurrency: int = 16
    force: bool = False
    limit: int | None = None
    enforce_recheck: bool = False
    dataset: str | None = None
    timeout: float = 60.0
    dump_limit: int = DUMP_LIMIT
    backoff: float = 0.5
    rate_deadline: float = 600.0
    env: Mapping[str, str] | None = None
    index_key: dict[str, Any] | None = None  # set: keep the score index (scorer.index) up to date
    warm: Callable[[], None] | None = None  # the caller's work for the end, done while judging


class Reporter:
    """Progress callbacks; the default reports nothing."""

    def queued(self, n: int) -> None: ...

    def judged(self, result: JudgeResult) -> None: ...

    def done(self) -> None: ...


@dataclass
class BatchResult:
    batch: Batch
    summary: Summary
    written: bool
    summary_json: dict[str, Any]  # summary.to_json(), made once


@dataclass
class ScoreResult:
    batches: list[BatchResult] = field(default_factory=list)
    stats: EngineStats | None = None
    runs: int = 0
    cached: int = 0
    reused_priors: int = 0
    to_judge: int = 0
    pending_left: int = 0  # verdicts a re-run would still ask for (errors, --limit)
    kept_on_error: int = 0  # --force calls that failed: the saved verdict stands
    write_errors: list[str] = field(default_factory=list)
    swept: int = 0


def _dataset(opts: ScoreOptions, corpus: Corpus | None, recs: list[RunRecord]) -> str | None:
    if opts.dataset:
        return opts.dataset
    if corpus is not None:
        return corpus.name
    for rec in recs:
        raw = rec.meta_raw or {}
        suite = ((raw.get("provenance") or {}).get("corpus") or {}).get("suite")
        if isinstance(suite, str) and suite:
            return suite
        if isinstance(raw.get("dataset"), str):
            return raw["dataset"]
    return None


def _batch_elapsed(batch: Batch) -> float | None:
    try:
        data = json.loads((batch.path / "batch-summary.json").read_bytes())
        value = data.get("elapsed_seconds") if isinstance(data, dict) else None
        return float(value) if isinstance(value, int | float) else None
    except (OSError, ValueError):
        return None


class _Session:
    """One invocation's state between reading, judging and summarising."""

    def __init__(self, opts: ScoreOptions, reporter: Reporter) -> None:
        self.opts = opts
        self.reporter = reporter
        self.corpus = load_corpus(opts.tasks) if opts.tasks else None
        self.spec: JudgeSpec | None = None
        if not opts.no_judge:
            rubrics = RUBRIC_SETS[opts.rubric]
            config = resolve_judge(opts.judge_model, opts.models_yaml, opts.env)
            versions = {r: prompt_version(r) for r in rubrics}
            self.spec = JudgeSpec(config, rubrics, versions, opts.force, opts.dump_limit)
        self.result = ScoreResult()
        self.writer = Writer(stat_runs=opts.index_key is not None)
        self.plans: dict[int, Plan] = {}
        self.engine: Engine | None = None
        self.backlog: list[JudgeJob] = []
        self.judged_runs = 0
        self.imported: threading.Event | None = None
        self.warming: threading.Thread | None = None  # preload.later: what the end needs

    def plan(self, rec: RunRecord, counted: bool) -> Plan:
        plan = plan_run(load_data(rec), self.corpus, self.spec, self.opts.enforce_recheck)
        limit = self.opts.limit
        if plan.pending and counted and (limit is None or self.judged_runs < limit):
            if self.imported is None:
                self.imported = preload.start()
            self.judged_runs += 1
            self.plans[id(plan)] = plan
            jobs = [p.job for p in plan.pending.values()]
            self.result.to_judge += len(jobs)
            self.reporter.queued(len(jobs))
            if self.engine is not None:
                for job in jobs:
                    self.engine.submit(job)
            else:
                self.backlog.extend(jobs)
        else:
            if plan.pending and counted:
                self.result.pending_left += len(plan.pending)  # left by --limit
            for rubric, pending in plan.pending.items():
                if pending.saved is not None:  # not judged this time: the verdict on disk stands
                    plan.outcome.verdicts[rubric] = pending.saved
            plan.pending.clear()  # or a superseded re-run, or a task outside the corpus
            finish(plan.outcome)
            self.writer.write(meta_file(plan), plan.rec.dir, last=True)
        verdicts = plan.outcome.verdicts.values()
        self.result.cached += sum(v.cached for v in verdicts)
        self.result.reused_priors += sum(v.source.startswith("reference") for v in verdicts)
        return plan

    def on_result(self, res: JudgeResult) -> None:
        plan = self.plans[res.job.key[0]]
        rubric, v = res.job.rubric, res.verdict
        pending = plan.pending.pop(rubric)
        saved = pending.saved
        files: Files = []
        if v.match is None and saved is not None and saved.match is not None:
            # --force and the judge failed: the verdict on disk stands (an error never erases)
            plan.outcome.verdicts[rubric] = saved
            plan.outcome.notes.append(
                f"{rubric}: judge error ({v.error}); the saved verdict stands"
            )
            self.result.kept_on_error += 1
        else:
            record = judge_record(self.spec, plan, pending, res)  # type: ignore[arg-type]
            plan.outcome.verdicts[rubric] = RubricVerdict(
                v.match, v.reason, "judge", v.error, res.input_tokens, res.output_tokens
            )
            if v.match is None:
                self.result.pending_left += 1  # a re-run asks again
            files = verdict_file(record, plan)
        if not plan.pending:
            finish(plan.outcome)
            files += meta_file(plan)
        self.writer.write(files, plan.rec.dir, last=not plan.pending)
        self.reporter.judged(res)

    def start_engine(self) -> None:
        from scorer.judge.client import JudgeClient

        assert self.spec is not None
        client = JudgeClient(self.spec.config, self.opts.timeout)
        # Everything imported so far (openai's thousand classes) lives as long as the process:
        # out of the collector's sight, collections during the batch and at exit stay short.
        gc.freeze()
        gc.enable()  # clawbench-score starts with it off: imports leave no garbage worth scans
        self.engine = Engine(
            client,
            self.opts.concurrency,
            backoff=self.opts.backoff,
            rate_deadline=self.opts.rate_deadline,
        )
        self.engine.start(self.on_result)
        for job in self.backlog:
            self.engine.submit(job)
        self.backlog.clear()

    async def run(
        self,
        work: list[tuple[Batch, list[RunRecord]]],
        counted: set[Path],
    ) -> list[list[Plan]]:
        out: list[list[Plan]] = []
        try:
            for _batch, recs in work:
                plans = []
                for i, rec in enumerate(recs):
                    plans.append(self.plan(rec, rec.dir in counted))
                    if self.engine is None and self.backlog:
                        # The first call waits for the openai import only: reading the rest of
                        # the batch now would just delay it; it runs while the calls are out.
                        assert self.imported is not None
                        await asyncio.to_thread(self.imported.wait)
                        self.start_engine()
                    if i % _YIELD_EVERY == _YIELD_EVERY - 1:
                        await asyncio.sleep(0)
                out.append(plans)
            if self.engine is None and self.backlog:
                self.start_engine()
            if self.engine is not None:
                warm = (build_models, self.opts.warm) if self.opts.warm else (build_models,)
                self.warming = preload.later(*warm)
                self.result.stats = await self.engine.join()
        finally:
            gc.enable()
            self.reporter.done()
            if self.engine is not None:
                await self.engine.client.close()
        return out


def score(opts: ScoreOptions, reporter: Reporter | None = None) -> ScoreResult:
    """Score every batch under opts.path; ConfigError/CorpusError/DiscoveryError before any work."""
    batches = find_batches(opts.path)
    session = _Session(opts, reporter or Reporter())
    indexed = opts.index_key is not None and not batches[0].single_run
    if indexed:
        index.forget(opts.path)
    result, corpus = session.result, session.corpus
    work: list[tuple[Batch, list[RunRecord]]] = []
    counted: set[Path] = set()
    try:
        for batch in batches:
            if not batch.single_run:
                session.writer.sweep(batch.path)
            recs = [load_meta(d) for d in batch.runs]
            identify_from_paths(recs, corpus.tasks if corpus is not None else ())
            keys = [run_key(r, corpus) for r in recs]
            counted |= {k.run_dir for k in counted_runs(keys, corpus is not None)}
            work.append((batch, recs))
        result.runs = sum(len(recs) for _, recs in work)
        all_plans = asyncio.run(session.run(work, counted))
    finally:
        session.writer.close()
        result.write_errors = session.writer.errors
        result.swept += session.writer.swept
    if session.warming is not None:
        session.warming.join()  # the models it builds are used below
    for (batch, recs), plans in zip(work, all_plans, strict=True):
        summary = summarize(batch.path, [p.outcome for p in plans], _options(session, batch, recs))
        as_json = summary.to_json()
        written = False
        if not batch.single_run:
            written = write_if_changed(batch.path / "rescore-summary.json", as_json)
        result.batches.append(BatchResult(batch, summary, written, as_json))
    if indexed and not result.pending_left and not result.write_errors:
        _write_index(session, [d for _, recs in work for d in (r.dir for r in recs)])
    return result


def _write_index(session: _Session, run_dirs: list[Path]) -> None:
    opts, corpus, spec = session.opts, session.corpus, session.spec
    extra: list[Path | None] = [opts.models_yaml]
    if corpus is not None:
        extra += index.corpus_paths(corpus.root)
    batches = [b.batch.path for b in session.result.batches]
    known = session.writer.run_stats
    paths = index.snapshot_paths(opts.path, run_dirs, batches, extra, known)
    summaries = [str(b / "rescore-summary.json") for b in batches]
    env = spec.config.env_vars if spec is not None else ()
    params = spec.config.param_env_vars if spec is not None else ()
    index.write_index(opts.path, opts.index_key or {}, paths, summaries, env, known, params)


def _options(session: _Session, batch: Batch, recs: list[RunRecord]) -> Options:
    opts, spec, corpus = session.opts, session.spec, session.corpus
    return Options(
        corpus_slugs=sorted(corpus.tasks) if corpus is not None else None,
        corpus=str(corpus.root) if corpus is not None else None,
        n_total=opts.n_total,
        judged=spec is not None,
        rubrics=spec.rubrics if spec else (),
        rubric=opts.rubric if spec else None,
        judge_model=spec.config.name if spec else None,
        prompt_versions=spec.versions if spec else None,
        dataset=_dataset(opts, corpus, recs),
        enforce_recheck=opts.enforce_recheck,
        batch_elapsed_s=_batch_elapsed(batch),
        provenance=provenance(),
    )


__all__ = ["RUBRIC_SETS", "BatchResult", "Reporter", "ScoreOptions", "ScoreResult", "score"]
