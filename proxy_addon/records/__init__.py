"""Every file of a run and a batch (docs/formats.md, "The run directory"), one owner module each,
imported by the addon, the scorer and the sandbox alike:

| file | module |
|---|---|
| data/interception.json, data/.proxy-ready | `interception` |
| data/requests.jsonl (its line models, its reader) | `requestlog` |
| requests.jsonl's writer under its byte budget, data/requests-summary.json | `requestwriter` |
| data/usage.json (the agent's model calls, counted by the proxy) | `usage` |
| data/traffic.har (the run's traffic as HAR 1.2, built from requests.jsonl) | `har`, `traffic` |
| agent/result.json (a harness's own claim) | `agentresult` |
| run-meta.json (its objects: claim, executor blocks, provenance) | `runmeta`, `runblocks` |
| batch-summary.json | `batchsummary` |
| run and batch directory names, finding runs' identity in paths | `layout`, `runpath` |
| provenance (versions, git SHA) in summaries | `provenance` |

`outcome` owns how a run ended (stop reasons, result categories, the one classify); `reserve`
the space kept back for recording it; `atomic`
writes files so a reader sees the old one or the new one; `jsonfile` reads them, with one error
(RecordError: file, field, problem).
"""

from __future__ import annotations

from proxy_addon.records.agentresult import read_agent_result
from proxy_addon.records.atomic import (
    dump_json,
    finite_floats,
    write_bytes_atomic,
    write_json_atomic,
)
from proxy_addon.records.batchsummary import (
    BatchJob,
    BatchSummary,
    corpus_name,
    elapsed_seconds,
    now_iso,
    status_of,
    totals,
    write_summary,
)
from proxy_addon.records.batchsummary import (
    read_summary as read_batch_summary,
)
from proxy_addon.records.har import Har, HarEntry, TrafficAction
from proxy_addon.records.harentry import number
from proxy_addon.records.interception import (
    InterceptedRequest,
    Interception,
    InterceptionView,
    NotIntercepted,
    ProxyReady,
    normalise_interception,
    read_interception,
)
from proxy_addon.records.jsonfile import RecordError, first_error
from proxy_addon.records.layout import (
    MY_INFO_DIR,
    case_name,
    find_task_dirs,
    new_run_dir,
    runs_of,
    stamp,
)
from proxy_addon.records.modelapi import CallOutcome, FailedCall, ModelApiRecord, model_api_failure
from proxy_addon.records.outcome import (
    INFRA_CATEGORIES,
    AnyCategory,
    AnyStopReason,
    BatchStatus,
    Category,
    Ending,
    Stopped,
    StopReason,
    batch_status,
    classify,
    is_infra_category,
    is_infra_stop,
    scored_category,
)
from proxy_addon.records.requestlog import REQUESTS_FILE, LogLine, RequestLogEntry, ResponseLine
from proxy_addon.records.requestwriter import (
    LOG_BUDGET,
    RequestLogSummary,
    RequestLogWriter,
)
from proxy_addon.records.requestwriter import (
    SUMMARY_FILE as REQUESTS_SUMMARY_FILE,
)
from proxy_addon.records.requestwriter import (
    read_summary as read_requests_summary,
)
from proxy_addon.records.reserve import RESERVE_FILE, release, reserve_space, write_with_reserve
from proxy_addon.records.runblocks import AgentClaim, DemoBlock, SandboxBlock
from proxy_addon.records.runmeta import (
    RUN_META,
    RunMeta,
    merged_run_meta,
    read_run_meta,
    read_run_meta_raw,
    safe_model,
    write_run_meta,
)
from proxy_addon.records.runpath import parse_run_dir
from proxy_addon.records.tokens import ModelUsage, TokenCounts, Tokens, tokens_from_usage
from proxy_addon.records.traffic import build_har, write_traffic_har
from proxy_addon.records.usage import (
    USAGE_FILE,
    AgentUsage,
    ModelCallLine,
    add_call,
    add_unmetered,
    read_usage,
)
from proxy_addon.records.verdict import JudgeVerdict, as_match, read_verdict, read_verdicts

__all__ = [
    "INFRA_CATEGORIES",
    "LOG_BUDGET",
    "MY_INFO_DIR",
    "REQUESTS_FILE",
    "REQUESTS_SUMMARY_FILE",
    "RESERVE_FILE",
    "RUN_META",
    "USAGE_FILE",
    "AgentClaim",
    "AgentUsage",
    "AnyCategory",
    "AnyStopReason",
    "BatchJob",
    "BatchStatus",
    "BatchSummary",
    "CallOutcome",
    "Category",
    "DemoBlock",
    "Ending",
    "FailedCall",
    "Har",
    "HarEntry",
    "InterceptedRequest",
    "Interception",
    "InterceptionView",
    "JudgeVerdict",
    "LogLine",
    "ModelApiRecord",
    "ModelCallLine",
    "ModelUsage",
    "NotIntercepted",
    "ProxyReady",
    "RecordError",
    "RequestLogEntry",
    "RequestLogSummary",
    "RequestLogWriter",
    "ResponseLine",
    "RunMeta",
    "SandboxBlock",
    "StopReason",
    "Stopped",
    "TokenCounts",
    "Tokens",
    "TrafficAction",
    "add_call",
    "add_unmetered",
    "as_match",
    "batch_status",
    "build_har",
    "case_name",
    "classify",
    "corpus_name",
    "dump_json",
    "elapsed_seconds",
    "find_task_dirs",
    "finite_floats",
    "first_error",
    "is_infra_category",
    "is_infra_stop",
    "merged_run_meta",
    "model_api_failure",
    "new_run_dir",
    "normalise_interception",
    "now_iso",
    "number",
    "parse_run_dir",
    "read_agent_result",
    "read_batch_summary",
    "read_interception",
    "read_requests_summary",
    "read_run_meta",
    "read_run_meta_raw",
    "read_usage",
    "read_verdict",
    "read_verdicts",
    "release",
    "reserve_space",
    "runs_of",
    "safe_model",
    "scored_category",
    "stamp",
    "status_of",
    "tokens_from_usage",
    "totals",
    "write_bytes_atomic",
    "write_json_atomic",
    "write_run_meta",
    "write_summary",
    "write_traffic_har",
    "write_with_reserve",
]
