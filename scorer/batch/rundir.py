"""One run directory as the scorer reads it; a bad file is recorded, never raised.

A file that makes the run unscorable (run-meta.json or data/interception.json unreadable) is a
`problem` (the run is an infra failure, the file named); a bad task.json copy or judge file is a
`note` (the run is still scored), except a task.json copy that is not JSON at all
(`task_problem`): without --tasks it is the run's only task, so the plan makes that an infra
failure too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proxy_addon.records import (
    RUN_META,
    InterceptionView,
    RecordError,
    RunMeta,
    normalise_interception,
    read_run_meta_raw,
)
from proxy_addon.tasks import Task, TaskError, decode_task_json, parse_task


@dataclass
class RunRecord:
    """Everything read from one run directory."""

    dir: Path
    meta_raw: dict[str, Any] | None = None
    meta: RunMeta | None = None
    interception: InterceptionView | None = None
    interception_present: bool = False
    task: Task | None = None
    task_sha256: str | None = None
    task_read: bool = False
    task_problem: str | None = None  # the task.json copy is unreadable or truncated JSON
    meta_from_path: bool = False  # run-meta.json unreadable: meta built from the path (runpath)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def test_case(self) -> str | None:
        return self.meta.test_case if self.meta else None

    @property
    def request(self) -> dict[str, Any] | None:
        """The credited request, when the proxy intercepted one."""
        view = self.interception
        return view.request if view is not None and view.intercepted else None


def _read_json(path: Path) -> tuple[Any, str | None]:
    try:
        return json.loads(path.read_bytes()), None
    except FileNotFoundError:
        return None, "missing"
    except (OSError, ValueError) as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None, f"{path}: unreadable or truncated JSON: {e}"


def _read_meta(rec: RunRecord) -> None:
    try:
        rec.meta, rec.meta_raw = read_run_meta_raw(rec.dir / RUN_META)
    except RecordError as e:
        rec.problems.append(str(e))


def _read_interception(rec: RunRecord) -> None:
    path = rec.dir / "data" / "interception.json"
    data, err = _read_json(path)
    if err == "missing":
        return
    rec.interception_present = True
    if err:
        rec.problems.append(err)
        return
    try:
        rec.interception = normalise_interception(data, str(path))
    except RecordError as e:
        rec.problems.append(str(e))


def read_task(rec: RunRecord) -> None:
    """Read the run's task.json copy into the record, once."""
    if rec.task_read:
        return
    rec.task_read = True
    path = rec.dir / "task.json"
    try:
        raw = path.read_bytes()
        data = decode_task_json(raw, path)
    except FileNotFoundError:
        return
    except (OSError, TaskError) as e:  # TaskError: not strict JSON (decode_task_json)
        why = e.message if isinstance(e, TaskError) else e
        rec.task_problem = f"{path}: unreadable or truncated JSON: {why}"
        rec.notes.append(rec.task_problem)
        return
    try:
        rec.task = parse_task(data, path)
    except (TaskError, ValueError) as e:
        rec.notes.append(f"{path}: not usable for the re-check or judge_context: {e}")
        return
    rec.task_sha256 = hashlib.sha256(raw).hexdigest()


def load_meta(run_dir: Path) -> RunRecord:
    """A record with run-meta.json read: enough to tell which task the run counts for."""
    rec = RunRecord(run_dir)
    _read_meta(rec)
    return rec


def load_data(rec: RunRecord) -> RunRecord:
    """Add data/interception.json and the task.json copy to a record from load_meta."""
    _read_interception(rec)
    read_task(rec)
    return rec


def load_run(run_dir: Path) -> RunRecord:
    """Read run-meta.json, data/interception.json and the task.json copy of one run."""
    return load_data(load_meta(run_dir))


__all__ = ["RunRecord", "load_data", "load_meta", "load_run", "read_task"]
