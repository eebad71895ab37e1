"""A batch of runs, from the directories on disk to rescore-summary.json (docs/formats.md,
"The run directory" and "rescore-summary.json").

- discovery: the runs and batches under a path
- corpus: the task corpus given with --tasks
- rundir: one run directory read (a bad file recorded, never raised)
- recheck: the Stage-1 re-check with the shared matcher
- runplan: per run, Stage 1, the task behind it and the judge calls it needs
- scored_run: a run scored (Stage 1, verdicts, result category)
- rescore_summary: rescore-summary.json's model and the aggregation into it
- leaderboard: the leaderboard CSV
- writer: judge files and run-meta.json, written atomically as verdicts arrive
"""

from __future__ import annotations

from scorer.batch.aggregate import SummaryOptions, counted_runs, summarize
from scorer.batch.corpus import Corpus, CorpusError, load_corpus
from scorer.batch.discovery import RUN_META, Batch, DiscoveryError, find_batches
from scorer.batch.identity import identify_from_paths
from scorer.batch.judging import Judging, NoProgress, Progress
from scorer.batch.leaderboard import LeaderboardError, check_csv, merge_csv
from scorer.batch.rescore_summary import (
    NOT_JUDGED,
    SUMMARY_FILE,
    AgentUsageTotals,
    Entry,
    JudgeUsageTotals,
    Summary,
    SummaryError,
    TaskRow,
    parse_summary,
    read_summary,
)
from scorer.batch.rundir import RunRecord, load_data, load_meta, load_run
from scorer.batch.runplan import JudgeSpec, Plan, plan_run, run_key
from scorer.batch.scored_run import DECIDE_RULES, Decide
from scorer.batch.writer import Writer, write_if_changed

__all__ = [
    "DECIDE_RULES",
    "NOT_JUDGED",
    "RUN_META",
    "SUMMARY_FILE",
    "AgentUsageTotals",
    "Batch",
    "Corpus",
    "CorpusError",
    "Decide",
    "DiscoveryError",
    "Entry",
    "JudgeSpec",
    "JudgeUsageTotals",
    "Judging",
    "LeaderboardError",
    "NoProgress",
    "Plan",
    "Progress",
    "RunRecord",
    "Summary",
    "SummaryError",
    "SummaryOptions",
    "TaskRow",
    "Writer",
    "check_csv",
    "counted_runs",
    "find_batches",
    "identify_from_paths",
    "load_corpus",
    "load_data",
    "load_meta",
    "load_run",
    "merge_csv",
    "parse_summary",
    "plan_run",
    "read_summary",
    "run_key",
    "summarize",
    "write_if_changed",
]
