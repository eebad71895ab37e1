"""One run directory as the report shows it: the scorer's RunRecord plus judges, near misses,
the agent's claim and links to its files. Every file is optional; a bad one becomes a note."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from proxy_addon.matching import redact_fields, redact_headers, redact_url
from proxy_addon.records import (
    REQUESTS_FILE,
    AgentClaim,
    AgentUsage,
    AnyStopReason,
    JudgeVerdict,
    RunMeta,
    build_har,
    read_verdict,
)
from proxy_addon.tasks import TaskError, read_task_json
from scorer.batch import TaskRow, load_run
from scorer.html_report.runtimeline import run_timeline
from scorer.html_report.timeline import Timeline
from scorer.judge import read_record

NEAR_MISS_CAP = 25
"""Near misses shown per run (the rest are counted)."""
FILE_CAP = 40
"""Files linked per run."""


@dataclass(frozen=True)
class JudgeView:
    """One judge file's verdict."""

    file: str  # relative to the run directory
    judge_model: str | None
    rubric: str | None
    verdict: JudgeVerdict | None
    reason: str
    error: str | None
    missing: str = ""  # cannot_tell: what the judge could not see


@dataclass(frozen=True)
class NearMiss:
    """A request that came close (same host, or the URL matched but not the rest)."""

    method: str
    url: str
    reasons: tuple[str, ...]


@dataclass
class RunView:
    """Everything shown of one run; anchor is its id in the page, set once all are loaded."""

    dir: Path
    row: TaskRow
    anchor: str = ""
    meta: RunMeta | None = None
    meta_raw: dict[str, Any] = field(default_factory=dict)
    instruction: str | None = None
    request: dict[str, Any] | None = None
    schema: dict[str, Any] | None = None
    stop_reason: AnyStopReason | None = None
    stop_description: str | None = None
    judges: list[JudgeView] = field(default_factory=list)
    near_misses: list[NearMiss] = field(default_factory=list)
    near_miss_count: int = 0
    requests_logged: int | None = None
    agent_claim: AgentClaim | None = None
    agent_usage: AgentUsage | None = None
    harness_version: str | None = None
    files: list[tuple[str, str]] = field(default_factory=list)  # (name, href)
    notes: list[str] = field(default_factory=list)
    timeline: Timeline | None = None
    shot_hrefs: dict[Path, str] = field(default_factory=dict)
    shot_uris: dict[int, str] = field(default_factory=dict)  # event index -> data: URI


def file_href(target: Path, out_dir: Path) -> str:
    """A relative link from the report's directory to target, every segment percent-encoded
    (so no segment can read as a scheme or break out of the attribute)."""
    rel = os.path.relpath(target.absolute(), out_dir)
    return "/".join(quote(part, safe="") for part in Path(rel).parts)


def redacted_request(request: dict[str, Any]) -> dict[str, Any]:
    """The recorded request with secrets redacted again (the addon did; this is defence)."""
    out = dict(request)
    if isinstance(out.get("url"), str):
        out["url"] = redact_url(out["url"])
    for key in ("body", "params"):
        if key in out:
            out[key] = redact_fields(out[key])
    headers = out.get("headers")
    if isinstance(headers, dict):
        out["headers"] = redact_headers((str(k), str(v)) for k, v in headers.items())
    return out


def _judge_files(run_dir: Path) -> list[Path]:
    """data/judge*.json (ours: judge.json first, then judge_llm.json, then extra judges), then
    the reference's judge files beside run-meta.json."""
    order = {"judge.json": 0, "judge_llm.json": 1}
    found: list[Path] = []
    for directory in (run_dir / "data", run_dir):
        try:
            names = [n for n in os.listdir(directory) if n.startswith("judge")]
        except OSError:
            continue
        names = [n for n in names if n.endswith(".json")]
        found += [directory / n for n in sorted(names, key=lambda n: (order.get(n, 2), n))]
    return found


def _judge(path: Path, run_dir: Path) -> JudgeView | str:
    """A judge file's verdict, or a note saying why it could not be read."""
    name = str(path.relative_to(run_dir))
    record, _why = read_record(path)
    if record is not None:
        return JudgeView(
            name,
            record.judge_model,
            record.rubric,
            record.answer,
            record.reason,
            record.error,
            record.missing,
        )
    try:  # the reference's files and newer shapes: read the keys every judge file has
        data = json.loads(path.read_bytes())
    except (OSError, ValueError) as e:
        return f"{name}: unreadable or truncated JSON: {e}"
    if not isinstance(data, dict):
        return f"{name}: expected a JSON object, got {type(data).__name__}"
    model, rubric, error = data.get("judge_model"), data.get("rubric"), data.get("error")
    return JudgeView(
        name,
        str(model) if model else None,
        str(rubric) if rubric else None,
        read_verdict(data.get("verdict", data.get("match"))),
        str(data.get("reason") or ""),
        str(error) if error else None,
    )


def _traffic(view: RunView, out_dir: Path) -> None:
    """The run's HAR (built from data/requests.jsonl), its near misses and its timeline (with
    links to its screenshot files)."""
    har = build_har(view.dir)
    if (view.dir / "data" / REQUESTS_FILE).exists():
        view.requests_logged = har.log.clawbench.lines
    if har.log.clawbench.source.startswith(f"data/{REQUESTS_FILE}: unreadable"):
        view.notes.append(har.log.clawbench.source)
    for entry in har.log.entries:
        mark = entry.clawbench
        if not mark.near_miss or mark.matched:
            continue
        view.near_miss_count += 1
        if len(view.near_misses) < NEAR_MISS_CAP:
            url = redact_url(entry.request.url)
            view.near_misses.append(NearMiss(entry.request.method, url, tuple(mark.near_miss)))
    view.timeline = run_timeline(view, har)
    shots = [e.screenshot.path for e in view.timeline.events if e.screenshot]
    view.shot_hrefs = {p: file_href(p, out_dir) for p in shots if p is not None}


def _files(view: RunView, out_dir: Path) -> None:
    names: list[str] = []
    for sub in ("", "data"):
        try:
            entries = sorted(os.scandir(view.dir / sub), key=lambda e: e.name)
        except OSError:
            continue
        names += [f"{sub}/{e.name}".lstrip("/") for e in entries if e.is_file()]
    names = [n for n in names if not n.rsplit("/", 1)[-1].startswith(".")]
    view.files = [(n, file_href(view.dir / n, out_dir)) for n in names[:FILE_CAP]]


def _instruction(view: RunView, task: Any) -> str | None:
    if task is not None:
        return str(task.instruction)
    if view.meta is not None and view.meta.instruction:
        return view.meta.instruction
    try:  # a task.json copy the strict model refused may still carry its instruction
        data = read_task_json(view.dir / "task.json")
    except TaskError:
        return None
    return str(data["instruction"]) if isinstance(data, dict) and "instruction" in data else None


def load_run_view(run_dir: Path, row: TaskRow, out_dir: Path) -> RunView:
    """Read one run for the report; never raises for a missing or broken file."""
    rec = load_run(run_dir)
    view = RunView(dir=run_dir, row=row, meta=rec.meta, meta_raw=rec.meta_raw or {})
    view.notes += rec.problems + rec.notes
    if rec.interception is not None:
        if isinstance(rec.interception.request, dict):
            view.request = redacted_request(rec.interception.request)
        view.schema = rec.interception.schema_
        view.stop_reason = rec.interception.stop_reason
        view.stop_description = rec.interception.stop_description
    if view.stop_reason is None and rec.meta is not None:
        view.stop_reason = rec.meta.stop_reason
    metrics = view.meta_raw.get("run_metrics")
    if view.stop_reason is None and isinstance(metrics, dict) and metrics.get("stop_reason"):
        view.stop_reason = str(metrics["stop_reason"])  # the reference's place for it
    view.instruction = _instruction(view, rec.task)
    for path in _judge_files(run_dir):
        judged = _judge(path, run_dir)
        if isinstance(judged, JudgeView):
            view.judges.append(judged)
        else:
            view.notes.append(judged)
    if rec.meta is not None:
        view.agent_claim = rec.meta.agent_claim
        view.agent_usage = rec.meta.agent_usage
        view.harness_version = rec.meta.harness_version or None
    _traffic(view, out_dir)
    _files(view, out_dir)
    return view


__all__ = [
    "NEAR_MISS_CAP",
    "AgentClaim",
    "JudgeView",
    "NearMiss",
    "RunView",
    "file_href",
    "load_run_view",
    "redacted_request",
]
