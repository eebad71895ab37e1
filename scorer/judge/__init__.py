"""The LLM judge (docs/formats.md, "The judge"), apart from any batch.

- evidence: what the judge is given (JudgeInput): the request dump and the proxy's facts about
  it, the run's date, the user information the agent had
- client: one call through the openai client; errors come back with a kind to schedule on
- prompts: prompt v2 (requirements first, then match / no_match / cannot_tell), the two
  rubrics, per-call delimiters, prompt_version
- verdict: a reply parsed into a verdict (or none: a judge error); data/judge.json's model
- cache: the cache key over the inputs, our saved verdicts and the reference's priors
- limiter: AIMD concurrency (halve on 429, +1 per success)
- scheduler: many calls through one client: retries, 429s re-queued, a fatal error stops all
"""

from __future__ import annotations

from scorer.judge.cache import cache_key, judge_file, read_prior, read_record
from scorer.judge.client import JudgeClient, call_params, token_cap
from scorer.judge.evidence import (
    USER_FILE_LIMIT,
    JudgeInput,
    UserFile,
    request_view,
    run_date,
    user_files,
)
from scorer.judge.prompts import DUMP_LIMIT, RUBRIC_CHOICES, prompt_version, user_message
from scorer.judge.scheduler import (
    CallSettings,
    CallStats,
    JudgeFatal,
    JudgeJob,
    JudgeResult,
    Scheduler,
    run_judge,
)
from scorer.judge.verdict import JudgeRecord

__all__ = [
    "DUMP_LIMIT",
    "RUBRIC_CHOICES",
    "USER_FILE_LIMIT",
    "CallSettings",
    "CallStats",
    "JudgeClient",
    "JudgeFatal",
    "JudgeInput",
    "JudgeJob",
    "JudgeRecord",
    "JudgeResult",
    "Scheduler",
    "UserFile",
    "cache_key",
    "call_params",
    "judge_file",
    "prompt_version",
    "read_prior",
    "read_record",
    "request_view",
    "run_date",
    "run_judge",
    "token_cap",
    "user_files",
    "user_message",
]
