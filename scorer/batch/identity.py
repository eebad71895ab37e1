"""Who ran a run whose run-meta.json cannot be read: the identity its directory's path holds
(proxy_addon.records.runpath parses the reference's run directory names)."""

from __future__ import annotations

from collections.abc import Collection

from proxy_addon.records import RunMeta, parse_run_dir
from scorer.batch.rundir import RunRecord, read_task


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


__all__ = ["identify_from_paths"]
