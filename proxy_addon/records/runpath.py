"""Who ran a run and which task, read from its directory's path when run-meta.json cannot be.

The reference's layout (SPEC section 5, proxy_addon/records/layout.py) names every run
`<batch>/<safe_model>/<harness>-<case>-<safe_model>-<YYYYmmdd-HHMMSS>[-N]/`, so a run whose
run-meta.json is truncated or corrupt still says its model, harness, case and start time. Without
this, such a run fell into a made-up (unknown, unknown) entry: with --tasks that entry added a
whole corpus to N and its real entry listed the task as missing.

`<harness>-<case>` is split on a hyphen, and both halves may hold hyphens (claude-code,
v2-001-shop), so the split is chosen by evidence: a harness that readable runs of the batch name,
then a case that is a corpus slug, else the first hyphen.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from proxy_addon.records.runmeta import RunMeta, safe_model
from scorer.batch.rundir import RunRecord, read_task


@dataclass(frozen=True, slots=True)
class PathIdentity:
    model: str
    harness: str
    case: str
    timestamp: str


def _split(head: str, harnesses: Collection[str], slugs: Collection[str]) -> tuple[str, str]:
    splits = [(head[:i], head[i + 1 :]) for i, c in enumerate(head) if c == "-"]
    splits = [(h, c) for h, c in splits if h and c]
    if not splits:
        raise ValueError(head)
    for wanted in (
        lambda h, c: h in harnesses and c in slugs,
        lambda h, c: h in harnesses,
        lambda h, c: c in slugs,
    ):
        hits = [s for s in splits if wanted(*s)]
        if hits:
            return max(hits, key=lambda s: len(s[0]) if s[0] in harnesses else len(s[1]))
    return splits[0]


def parse_run_dir(
    name: str,
    parent: str,
    *,
    models: Iterable[str] = (),
    harnesses: Collection[str] = (),
    slugs: Collection[str] = (),
) -> PathIdentity | None:
    """The identity a run directory's name gives, or None when it does not fit the layout.

    name is the run directory's name, parent its parent's (the safe model name). models are the
    model names readable runs of the batch carry: the one whose safe name is parent is the model
    (the safe name itself when none or several are).
    """
    pattern = rf"(?P<head>.+)-{re.escape(parent)}-(?P<ts>\d{{8}}-\d{{6}})(?:-\d+)?"
    m = re.fullmatch(pattern, name)
    if m is None or not parent:
        return None
    try:
        harness, case = _split(m["head"], harnesses, slugs)
    except ValueError:
        return None
    named = {model for model in models if safe_model(model) == parent}
    model = named.pop() if len(named) == 1 else parent
    return PathIdentity(model, harness, case, m["ts"])


def identify_from_paths(recs: list[RunRecord], slugs: Collection[str] = ()) -> None:
    """Give each record whose run-meta.json was unreadable the identity its path holds.

    The record keeps its problem (the run stays an infra failure naming the file) and gains a
    RunMeta built from the path and the task.json copy, marked meta_from_path, never written back.
    """
    readable = [r.meta for r in recs if r.meta is not None]
    models = {m.model for m in readable if m.model}
    harnesses = {m.harness for m in readable if m.harness}
    for rec in recs:
        if rec.meta is not None:
            continue
        found = parse_run_dir(
            rec.dir.name, rec.dir.parent.name, models=models, harnesses=harnesses, slugs=slugs
        )
        if found is None:
            continue
        read_task(rec)
        task = rec.task
        rec.meta = RunMeta(
            test_case=found.case,
            task_id=task.task_id if task else None,
            instruction=task.instruction if task else None,
            model=found.model,
            harness=found.harness,
            timestamp=found.timestamp,
            task_json_sha256=rec.task_sha256,
        )
        rec.meta_from_path = True
        source = "the run directory's name"
        if task is not None:
            source += " and its task.json copy"
        rec.notes.append(f"run-meta.json unreadable: model, harness and task taken from {source}")


__all__ = ["PathIdentity", "identify_from_paths", "parse_run_dir"]
