"""A run that did not come back from its node, recorded by the driver as an infra failure.

Its node left the cluster or its Ray worker died (`node_lost`), the batch was stopped
(`interrupted`), or what came back was refused (cluster.transfer). The record is written by the
same pipeline steps as any run (a fresh run directory, task.json copied, run-meta.json and the
not-intercepted interception.json), with the sandbox block of a run that never reached an engine
plus the node, so the scorer, the report and --resume read it like a local infra failure.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from proxy_addon.records import Ending
from proxy_addon.tasks import TaskError
from sandbox.cluster.order import NodeInfo
from sandbox.host import DockerExecutor, RunRequest
from sandbox.runs import finish, load, prepare


def record_missing(
    template: RunRequest, task_dir: Path, batch_dir: Path, reason: str, node: NodeInfo | None
) -> tuple[Path, Ending]:
    """Write the infra-failure record of a run that did not come back; (its directory, ending)."""
    req = replace(template, task_dir=task_dir, out=batch_dir, on_container=None, stop=None)
    run = prepare(req.job())
    try:
        load(run)
    except TaskError as e:
        reason = f"{reason}; task_data: {e}"
    blocks = DockerExecutor(None, req).describe(run)
    if node is not None:
        blocks["sandbox"].node = node.record()
    return run.run_dir, finish(run, reason, blocks)


__all__ = ["record_missing"]
