"""Run and batch directory names (docs/formats.md, "The run directory": the reference's layout) and
corpus discovery.

<out>/batch-<YYYYmmdd-HHMMSS>/batch-summary.json
<out>/batch-.../<safe_model>/<harness>-<case>-<safe_model>-<YYYYmmdd-HHMMSS>/
    my-info/   the files the agent was given under /my-info/ (MY_INFO_DIR)
"""

from __future__ import annotations

import os
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

from proxy_addon.records.runmeta import safe_model

MY_INFO_DIR = "my-info"
"""<run>/my-info/: the runner's copy of the files the agent was given under /my-info/ (the
task's extra_info), read by the judge."""

_CASE_ID = re.compile(r"^(?:v\d+-|ce-)?[A-Za-z]?(\d+)")


def stamp(now: datetime | None = None) -> str:
    """The reference's UTC timestamp for directory names: YYYYmmdd-HHMMSS."""
    return (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")


def case_name(task_dir: Path) -> str:
    """A task's case name: its directory's name (the parent's, for a task.json path)."""
    p = task_dir.resolve()
    return p.parent.name if p.is_file() else p.name


def run_dir_name(harness: str, case: str, model: str, ts: str) -> str:
    """<harness>-<case>-<safe_model>-<ts>."""
    return f"{harness}-{case}-{safe_model(model)}-{ts}"


def new_run_dir(out: Path, harness: str, case: str, model: str, ts: str) -> Path:
    """Create and return a fresh run directory under out/<safe_model>/ (suffix on a collision)."""
    parent = out / safe_model(model)
    parent.mkdir(parents=True, exist_ok=True)
    base = run_dir_name(harness, case, model, ts)
    for n in range(1, 1000):
        candidate = parent / (base if n == 1 else f"{base}-{n}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"{parent}: too many runs named {base}")


def runs_of(batch_dir: Path, harness: str, case: str, model: str) -> list[Path]:
    """Existing run directories of (harness, case, model) in a batch, oldest first."""
    parent = batch_dir / safe_model(model)
    prefix = f"{harness}-{case}-{safe_model(model)}-"
    pattern = re.compile(re.escape(prefix) + r"\d{8}-\d{6}(?:-\d+)?$")
    if not parent.is_dir():
        return []
    return sorted(p for p in parent.iterdir() if p.is_dir() and pattern.match(p.name))


def _sort_key(case_dir: Path) -> tuple[int, int, str]:
    m = _CASE_ID.match(case_dir.name)
    return (0, int(m.group(1)), case_dir.name) if m else (1, sys.maxsize, case_dir.name)


def find_task_dirs(root: Path) -> list[Path]:
    """The task directories under root, at any depth, in the reference's order (by task id).

    root itself when it holds task.json (or is one); hidden directories are skipped, and a task's
    own directory is not searched further (its extra_info/ holds no tasks)."""
    if root.is_file():
        return [root.parent]
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if "task.json" in filenames:
            found.append(Path(dirpath))
            dirnames[:] = []
    return sorted(found, key=_sort_key)
