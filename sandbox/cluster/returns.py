"""What comes back for one run, made the batch's record: the node's run directory unpacked and
placed whole (cluster.transfer), or, for a run that did not come back, the driver's own record
of it (cluster.missing): `node_lost` when its node or worker went away, `interrupted` when the
batch was stopped, an infra failure naming the member when its archive was refused.
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
import ray.exceptions

from proxy_addon.records import Ending
from sandbox.cluster.missing import record_missing
from sandbox.cluster.node import Landed
from sandbox.cluster.order import NodeInfo
from sandbox.cluster.transfer import TransferRefused, place, unpack
from sandbox.host import RunRequest


@dataclass
class Result:
    """One run as the batch records it."""

    index: int
    run_dir: Path
    ending: Ending
    duration_s: float
    node: NodeInfo | None


@dataclass
class Returns:
    """Turns what a run's task gave back into its run directory in the batch."""

    template: RunRequest
    batch_dir: Path
    return_limit: int
    todo: dict[int, Path]

    def settle(
        self, ref: Any, index: int, node: NodeInfo, seconds: float, lost: Callable[[Exception], str]
    ) -> Result:
        """The run of a finished task (ref); lost(error) words a node or worker gone."""
        try:
            landed: Landed = ray.get(ref)
        except ray.exceptions.TaskCancelledError:
            return self.record(index, "interrupted: the batch was stopped", node, seconds)
        except ray.exceptions.TaskUnschedulableError as e:  # not a lost node: it never fit
            why = f"runner: node {node.label} cannot hold the run: {e}"
            return self.record(index, " ".join(why.split())[:500], node, seconds)
        except ray.exceptions.RayTaskError as e:
            why = f"runner: node {node.label}: {type(e.cause).__name__}: {e.cause}"
            return self.record(index, why, node, seconds)
        except ray.exceptions.RayError as e:
            return self.record(index, f"node_lost: node {node.label} {lost(e)}", node, 0.0)
        return self._place(index, landed, seconds)

    def _place(self, index: int, landed: Landed, seconds: float) -> Result:
        incoming = self.batch_dir / f".incoming-{secrets.token_hex(6)}"
        try:
            run = unpack(landed.archive, incoming, landed.parent, self.return_limit)
            run_dir = place(run, self.batch_dir / landed.parent)
        except TransferRefused as e:
            why = f"transfer: node {landed.node.label} sent a run directory refused here: {e}"
            return self.record(index, why, landed.node, seconds)
        finally:
            shutil.rmtree(incoming, ignore_errors=True)
        return Result(index, run_dir, landed.ending, seconds, landed.node)

    def record(self, index: int, reason: str, node: NodeInfo | None, seconds: float) -> Result:
        """The driver's record of a run that did not come back."""
        run_dir, ending = record_missing(
            self.template, self.todo[index], self.batch_dir, reason, node
        )
        return Result(index, run_dir, ending, seconds, node)


__all__ = ["Result", "Returns"]
