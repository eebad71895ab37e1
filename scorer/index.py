"""The score index: lets a re-run that would change nothing answer from the saved summaries.

After a complete scoring (no judge error, nothing left by --limit) the index records the options
and the (mtime_ns, size) of everything the result depends on: each directory from the path down
to every run (an added or removed run, judge file or data file changes one of them), every file
read or written, the corpus, models.yaml, and the scorer's own code. A re-run with the same
options whose stats all match prints the saved rescore-summary.json files instead of reading a
thousand runs. Anything else falls through to a full scoring. The index lives in the user's cache
directory (never in the batch) and needs only the standard library, so the check costs
milliseconds. The one thing it cannot see is a file changed while the scoring that wrote the
index was still running.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

VERSION = 1
_CODE = Path(__file__).resolve().parent.parent
_RUN_FILES = ("run-meta.json", "task.json", "judge.json", "judge_llm.json")
_DATA_FILES = ("interception.json", "judge.json", "judge_llm.json", ".proxy-ready")


def cache_dir() -> Path:
    """$CLAWBENCH_SCORE_CACHE, else $XDG_CACHE_HOME/clawbench-score, else ~/.cache/..."""
    if env := os.environ.get("CLAWBENCH_SCORE_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "clawbench-score"


def index_path(root: Path) -> Path:
    digest = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:24]
    return cache_dir() / f"index-{digest}.json"


def _digest(name: str) -> str:
    """sha256 of an environment variable's value (the value itself is never stored)."""
    value = os.environ.get(name)
    return hashlib.sha256(
        b"" if value is None else value.encode("utf-8", "surrogateescape")
    ).hexdigest()


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def _code_files() -> list[str]:
    out = []
    for package in ("scorer", "proxy_addon"):
        out.append(str(_CODE / package))  # a module added or removed
        with contextlib.suppress(OSError):
            out += [e.path for e in os.scandir(_CODE / package) if e.name.endswith(".py")]
    return sorted(out)


def snapshot_paths(
    root: Path,
    run_dirs: Iterable[Path],
    batch_dirs: Iterable[Path],
    extra: Iterable[Path | None] = (),
    known: dict[str, list[int] | None] | None = None,
) -> list[str]:
    """Every path whose stat the index keeps (missing files too: their creation changes a dir).
    known: stats already taken (stat_run): those runs' paths are its keys."""
    top = str(root)
    known = known or {}
    paths: set[str] = {top, *known}
    for run in run_dirs:
        run_s = str(run)
        parent = os.path.dirname(run_s)
        while parent.startswith(top) and len(parent) > len(top):  # dirs between root and run
            paths.add(parent)
            parent = os.path.dirname(parent)
        if run_s not in known:
            paths.update(run_paths(run_s))
    join = os.path.join
    for batch in batch_dirs:
        b = str(batch)
        paths.update((b, join(b, "rescore-summary.json"), join(b, "batch-summary.json")))
    paths.update(str(p) for p in extra if p is not None)
    paths.update(_code_files())
    return sorted(paths)


def run_paths(run: str) -> list[str]:
    """A run's own paths in the index: the run and data dirs, the files read or written there."""
    join = os.path.join
    data = join(run, "data")
    return [run, data, *(join(run, n) for n in _RUN_FILES), *(join(data, n) for n in _DATA_FILES)]


def stat_run(run: Path) -> dict[str, list[int] | None]:
    """The index's stats of one run, taken once it is final (its last write done)."""
    return {p: _stat(p) for p in run_paths(str(run))}


def corpus_paths(corpus_root: Path) -> list[Path]:
    """The corpus's directories and task files (an edited or added task changes one)."""
    out = [corpus_root]
    for dirpath, dirnames, filenames in os.walk(corpus_root):
        out += [Path(dirpath, d) for d in dirnames]
        if "task.json" in filenames:
            out.append(Path(dirpath, "task.json"))
    return out


def write_index(
    root: Path,
    options: dict[str, Any],
    paths: Iterable[str],
    summaries: list[str],
    env_required: Iterable[str],
    known: dict[str, list[int] | None] | None = None,
    env_params: Iterable[str] = (),
) -> None:
    """Record a complete scoring; an unwritable cache directory only costs the fast path.

    known: stats already taken (stat_run, as each run was finished); the rest are taken now.
    env_params: variables whose values are the judge's parameters (models.yaml ${ENV}): a
    digest of each is kept, so another value scores in full (keys are only checked as set).
    """
    known = known or {}
    from proxy_addon.records.atomic import write_bytes_atomic

    data = {
        "version": VERSION,
        "options": options,
        "env_required": sorted(env_required),
        "env_params": {name: _digest(name) for name in sorted(env_params)},
        "stats": {p: known[p] if p in known else _stat(p) for p in paths},
        "summaries": summaries,
    }
    target = index_path(root)
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        # compact, so json's C encoder writes it (~10k entries: 2 ms, not 15 ms indented); ASCII
        # escapes keep a path that is not UTF-8 (a lone surrogate) readable as the same string
        write_bytes_atomic(target, json.dumps(data, separators=(",", ":")).encode(), durable=False)


def forget(root: Path) -> None:
    """Drop the index for root (the next run scores in full)."""
    with contextlib.suppress(OSError):
        index_path(root).unlink()


def up_to_date(root: Path, options: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The saved summaries when nothing changed since the indexed scoring, else None."""
    try:
        data = json.loads(index_path(root).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    if data.get("options") != options:
        return None
    if any(not os.environ.get(name) for name in data.get("env_required") or ()):
        return None  # the full path then says which key is missing
    params = data.get("env_params")
    if not isinstance(params, dict) or any(_digest(n) != d for n, d in params.items()):
        return None  # a judge parameter from the environment changed
    stats = data.get("stats") or {}
    for path, was in stats.items():
        if _stat(path) != was:
            return None
    out = []
    for path in data.get("summaries") or []:
        try:
            out.append(json.loads(Path(path).read_bytes()))
        except (OSError, ValueError):
            return None
    return out


__all__ = [
    "cache_dir",
    "corpus_paths",
    "forget",
    "index_path",
    "run_paths",
    "snapshot_paths",
    "stat_run",
    "up_to_date",
]
