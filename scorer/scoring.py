"""The scorer as a library: score(ScoreOptions) -> ScoreResult; clawbench-score is a thin shell.

    from scorer.scoring import ScoreOptions, resolve_judge, score
    judge = resolve_judge("gpt-x", Path("models.yaml"))  # ConfigError names the file and fix
    result = score(ScoreOptions(paths=[batch_dir], judges=[judge]))  # or judges=["gpt-x"]
    for batch in result.batches: print(batch.summary.pass_rate_with_judge, batch.runs[0])

Every run-meta.json is read first: it says which runs count (re-runs count once, the newest;
tasks outside the corpus not at all). Each run is then read in full and planned, the judge asked
for what is not saved yet (each verdict written as it arrives), and rescore-summary.json written
per batch. An interrupted batch resumes from its judge files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from proxy_addon.records import Category, JudgeVerdict, as_match, corpus_name, elapsed_seconds
from proxy_addon.records.provenance import provenance
from scorer.agreement import RankingAgreement, ranking_agreement
from scorer.batch import (
    DECIDE_RULES,
    SUMMARY_FILE,
    Batch,
    Corpus,
    CorpusError,
    Decide,
    DiscoveryError,
    JudgeSpec,
    Judging,
    LeaderboardError,
    NoProgress,
    Plan,
    Progress,
    RunRecord,
    Summary,
    SummaryOptions,
    Writer,
    check_csv,
    counted_runs,
    find_batches,
    identify_from_paths,
    load_corpus,
    load_data,
    load_meta,
    merge_csv,
    plan_run,
    run_key,
    summarize,
    write_if_changed,
)
from scorer.judge import (
    DUMP_LIMIT,
    RUBRIC_CHOICES,
    CallSettings,
    CallStats,
    JudgeFatal,
    prompt_version,
)
from scorer.models_yaml import ConfigError, JudgeConfig, Price, read_prices, resolve_judge
from scorer.preflight import PreflightFailed, check_judges

SCORING_ERRORS = (
    ConfigError,
    CorpusError,
    DiscoveryError,
    LeaderboardError,
    JudgeFatal,
    PreflightFailed,
)
"""What score() raises for bad input or a judge that cannot serve: each says what and where in
one line, so a caller prints it without a traceback."""


@dataclass
class ScoreOptions:
    """What to score and how. No judges: Stage 1 only (--no-judge).

    A judge is given resolved (resolve_judge) or by name: an entry of models_yaml or the built-in
    default, resolved once the paths and the corpus are known to be good.
    """

    paths: Sequence[Path]
    judges: Sequence[JudgeConfig | str] = ()  # the first one's verdicts go to data/judge.json
    decide: Decide = "first"  # which judges decide final_pass: first | majority | unanimous
    models_yaml: Path | None = None
    env: Mapping[str, str] | None = None  # for ${ENV} and keys (default os.environ)
    tasks: Path | None = None
    n_total: int | None = None
    rubric: str = "strict"  # strict | lenient | both (strict decides)
    concurrency: int = 16
    force: bool = False
    limit: int | None = None  # judge at most this many runs this time
    enforce_recheck: bool = False
    dataset: str | None = None
    csv: Path | None = None  # merge the leaderboard rows into this CSV
    timeout: float = 60.0
    dump_limit: int = DUMP_LIMIT
    backoff: float = 0.5
    rate_deadline: float = 600.0
    preflight: bool = True  # one tiny call to each judge before the first verdict is asked


@dataclass(frozen=True)
class RunScore:
    """One run as scored."""

    run_dir: Path
    test_case: str | None
    intercepted: bool  # Stage 1 credit (after --enforce-recheck)
    judge_verdict: JudgeVerdict | None  # the deciding verdict; None: not judged, or no verdict
    final_pass: bool
    result_category: Category
    verdicts: dict[str, JudgeVerdict | None] = field(default_factory=dict)  # per judge

    @property
    def judge_match(self) -> bool | None:
        """The reference's boolean: true only for a match verdict."""
        return as_match(self.judge_verdict)


@dataclass
class BatchScore:
    """One batch: its summary (rescore-summary.json's content) and every run."""

    path: Path
    single_run: bool
    summary: Summary
    written: bool  # rescore-summary.json rewritten (False: unchanged, or a single run)
    runs: list[RunScore] = field(default_factory=list)


@dataclass
class ScoreResult:
    batches: list[BatchScore] = field(default_factory=list)
    calls: dict[str, CallStats] = field(default_factory=dict)  # per judge that was called
    ranking: RankingAgreement | None = None  # models ranked per judge: several judges and models
    runs: int = 0
    to_judge: int = 0
    cached: int = 0
    reused_priors: int = 0
    pending_left: int = 0  # verdicts a re-run would still ask for (errors, --limit)
    kept_on_error: int = 0  # --force calls that failed: the saved verdict stands
    write_errors: list[str] = field(default_factory=list)


def resolve_judges(opts: ScoreOptions) -> list[JudgeConfig]:
    """The judges of opts, resolved (ConfigError names the models.yaml file, entry and fix)."""
    return [
        j if isinstance(j, JudgeConfig) else resolve_judge(j, opts.models_yaml, opts.env)
        for j in opts.judges
    ]


def judge_spec(opts: ScoreOptions) -> JudgeSpec | None:
    """The judges, rubrics and decide rule of opts, resolved; None without judges."""
    judges = resolve_judges(opts)
    if not judges:
        return None
    if opts.rubric not in RUBRIC_CHOICES:
        raise ValueError(f"rubric {opts.rubric!r}: use one of {', '.join(RUBRIC_CHOICES)}")
    if opts.decide not in DECIDE_RULES:
        raise ValueError(f"decide {opts.decide!r}: use one of {', '.join(DECIDE_RULES)}")
    names = [j.name for j in judges]
    if len(set(names)) < len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ConfigError(f"judge {', '.join(twice)} given twice: name each judge once")
    rubrics = RUBRIC_CHOICES[opts.rubric]
    versions = {r: prompt_version(r) for r in rubrics}
    return JudgeSpec(tuple(judges), rubrics, versions, opts.force, opts.dump_limit, opts.decide)


def _find(paths: Sequence[Path]) -> list[Batch]:
    """The batches under every path (DiscoveryError before any work), each once."""
    seen: dict[Path, Batch] = {}
    for path in paths:
        for batch in find_batches(path):
            seen.setdefault(batch.path.resolve(), batch)
    return list(seen.values())


def _read(batch: Batch, corpus: Corpus | None, writer: Writer) -> tuple[list[RunRecord], set[Path]]:
    """The batch's run-meta.json files, and which runs count."""
    if not batch.single_run:
        writer.sweep(batch.path)
    recs = [load_meta(d) for d in batch.runs]
    identify_from_paths(recs, corpus.tasks if corpus is not None else ())
    keys = [run_key(r, corpus) for r in recs]
    return recs, {k.run_dir for k in counted_runs(keys, corpus is not None)}


def score(opts: ScoreOptions, progress: Progress | None = None) -> ScoreResult:
    """Score every batch under opts.paths. Before any work: ConfigError, CorpusError,
    DiscoveryError, LeaderboardError; PreflightFailed (before any verdict is asked) or JudgeFatal
    when a judge cannot serve the batch."""
    if opts.csv is not None:
        check_csv(opts.csv)
    batches = _find(opts.paths)
    corpus = load_corpus(opts.tasks) if opts.tasks else None
    spec = judge_spec(opts)
    prices = read_prices(opts.models_yaml) if opts.models_yaml else {}
    writer = Writer()
    judging = Judging(spec, writer, progress or NoProgress())
    result = ScoreResult()
    planned: list[tuple[Batch, list[RunRecord], list[Plan]]] = []
    try:
        chosen: list[tuple[Plan, bool]] = []
        for batch in batches:
            recs, counted = _read(batch, corpus, writer)
            plans = [plan_run(load_data(r), corpus, spec, opts.enforce_recheck) for r in recs]
            chosen += [(p, p.rec.dir in counted) for p in plans]
            planned.append((batch, recs, plans))
        result.runs = len(chosen)
        to_judge = judging.select(chosen, opts.limit)
        if to_judge and spec is not None and opts.preflight:
            check_judges(list(spec.configs), opts.timeout)
        calls = CallSettings(opts.concurrency, opts.timeout, opts.backoff, opts.rate_deadline)
        result.calls = judging.judge(to_judge, calls)
    finally:
        result.write_errors = writer.errors
        for name in ("to_judge", "cached", "reused_priors", "pending_left", "kept_on_error"):
            setattr(result, name, getattr(judging.tally, name))
    for batch, recs, plans in planned:
        summary_opts = _options(opts, spec, corpus, batch, recs, prices)
        result.batches.append(_batch_score(batch, plans, summary_opts))
    if spec is not None and len(spec.configs) > 1:
        result.ranking = _ranking(result)
    if opts.csv is not None:
        merge_csv(opts.csv, _leaderboard_rows(result))
    return result


def _batch_score(batch: Batch, plans: list[Plan], opts: SummaryOptions) -> BatchScore:
    summary = summarize(batch.path, [p.scored for p in plans], opts)
    written = False
    if not batch.single_run:
        written = write_if_changed(batch.path / SUMMARY_FILE, summary.to_json())
    runs = [_run_score(p) for p in plans]
    return BatchScore(batch.path, batch.single_run, summary, written, runs)


def _run_score(plan: Plan) -> RunScore:
    o = plan.scored
    verdict = o.decision()[1]
    verdicts = o.deciding_verdicts()
    return RunScore(
        o.run_dir, o.test_case, o.credited, verdict, o.final_pass, o.result_category, verdicts
    )


def _ranking(result: ScoreResult) -> RankingAgreement | None:
    """Models ranked by each judge's pass rate, over every batch; None with fewer than two."""
    entries = [e for b in result.batches for e in b.summary.entries if e.leaderboard is not None]
    models = [e.model for e in entries]
    rates: dict[str, dict[str, float]] = {}
    for e in entries:
        label = e.model if models.count(e.model) == 1 else f"{e.model} ({e.harness})"
        for judge, rate in e.judge_pass_rates.items():
            rates.setdefault(judge, {})[label] = rate
    if len(entries) < 2:
        return None
    return ranking_agreement(rates)


def _leaderboard_rows(result: ScoreResult) -> list[dict[str, str]]:
    rows = [e.leaderboard for b in result.batches for e in b.summary.entries]
    return [r.model_dump() for r in rows if r is not None]


def _dataset(
    opts: ScoreOptions, corpus: Corpus | None, recs: list[RunRecord], batch: Path
) -> str | None:
    """The dataset a batch's rows name, the same whatever --tasks: --dataset, else what the
    runs name (the reference's run-meta.json), else the corpus the batch ran (its
    batch-summary.json), else --tasks's directory name."""
    if opts.dataset:
        return opts.dataset
    for rec in recs:
        raw = rec.meta_raw or {}
        suite = ((raw.get("provenance") or {}).get("corpus") or {}).get("suite")
        if isinstance(suite, str) and suite:
            return suite
        if isinstance(raw.get("dataset"), str):
            return raw["dataset"]
    ran = corpus_name(batch)
    if ran is not None:
        return ran
    return corpus.name if corpus is not None else None


def _options(
    opts: ScoreOptions,
    spec: JudgeSpec | None,
    corpus: Corpus | None,
    batch: Batch,
    recs: list[RunRecord],
    prices: Mapping[str, Price],
) -> SummaryOptions:
    return SummaryOptions(
        corpus_slugs=sorted(corpus.tasks) if corpus is not None else None,
        corpus=str(corpus.root) if corpus is not None else None,
        n_total=opts.n_total,
        judged=spec is not None,
        rubrics=spec.rubrics if spec else (),
        rubric=opts.rubric if spec else None,
        judge_model=spec.configs[0].name if spec else None,
        judges=spec.names if spec else (),
        decide=spec.decide if spec else "first",
        prompt_versions=spec.versions if spec else None,
        dataset=_dataset(opts, corpus, recs, batch.path),
        enforce_recheck=opts.enforce_recheck,
        batch_elapsed_s=elapsed_seconds(batch.path),
        provenance=provenance(),
        prices=prices,
    )


__all__ = [
    "SCORING_ERRORS",
    "BatchScore",
    "Progress",
    "RunScore",
    "ScoreOptions",
    "ScoreResult",
    "judge_spec",
    "resolve_judge",
    "resolve_judges",
    "score",
]
