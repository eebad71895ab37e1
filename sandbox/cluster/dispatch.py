"""The driver's loop: runs to nodes within the concurrency, what comes back into the batch.

Each run is a Ray task pinned to the node the driver picked (cluster.nodes), asking for one
`clawbench_docker` and the run's --cpus and --memory, with Ray's own retries off: the driver
decides what a failure means. A run that comes back is unpacked and placed (cluster.transfer);
one that does not (its node or worker gone) is recorded `node_lost`; either way an infra failure
that may be the node's is re-run once on another node, and a node with EXCLUDE_AFTER of them in a
row gets no more runs. Ctrl-C cancels every task (each node removes its container), then every
node is swept for the batch's containers.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import ray
import ray.exceptions
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from proxy_addon.records import Category, StopReason, case_name, is_infra_category
from sandbox.cluster.handoff import EnvHandoff, Ticket
from sandbox.cluster.node import NodeReport, prepare_node, run_order, sweep_node
from sandbox.cluster.nodes import RESOURCE, Node, Nodes, NodeState
from sandbox.cluster.order import NodeInfo, RunOrder, TaskFiles
from sandbox.cluster.progress import Progress
from sandbox.cluster.returns import Result, Returns
from sandbox.host import ApiStreak, RunRequest
from sandbox.runs import RunOutcome, done_line, say

REFRESH_S = 2.0
SWEEP_TIMEOUT_S = 60.0
NOT_THE_NODES = (StopReason.TASK_DATA, StopReason.INTERRUPTED)
"""Infra failures that say nothing about the node that ran them."""


@dataclass
class Setup:
    """What every run of the batch shares on its way to a node."""

    template: RunRequest
    batch_dir: Path
    image_id: str
    batch_label: str
    """The batch's identity on every node's containers (engine.BATCH_LABEL)."""
    driver_token: str
    """This driver's, on the containers it starts (node.DRIVER_LABEL)."""
    return_limit: int
    concurrency: int | None
    handoff: EnvHandoff | None
    ship_image: Callable[[], list[Any]]
    """docker save of the driver's image into the object store (called once, when a node
    lacks it)."""


@dataclass
class _Flight:
    index: int
    attempt: int
    node: Node
    ticket: Ticket | None
    started: float = field(default_factory=time.monotonic)


class Dispatcher:
    """Runs the batch's tasks on the cluster; `run()` returns whether it was interrupted."""

    def __init__(
        self,
        setup: Setup,
        todo: dict[int, Path],
        nodes: Nodes,
        on_result: Callable[[Result], None],
        streak: ApiStreak | None = None,
    ) -> None:
        self.setup = setup
        self.streak = streak
        self.todo = todo
        self.nodes = nodes
        self.on_result = on_result
        self.returns = Returns(setup.template, setup.batch_dir, setup.return_limit, todo)
        self.queue: deque[tuple[int, int]] = deque((i, 1) for i in todo)
        self.avoid: dict[int, set[str]] = {}
        self.rerun: set[int] = set()
        self.flights: dict[Any, _Flight] = {}
        self.preparing: dict[Any, Node] = {}
        self.saved: list[Any] | None = None
        self.progress = Progress(left=len(todo))
        self.gave_up: str | None = None
        self.widest = 0
        """The most runs the ready and preparing nodes took at once, over the batch."""
        self._refreshed = 0.0
        cpus, memory = setup.template.limits.cpus, setup.template.limits.memory
        # Ray's own retries off: the driver decides what a failure means.
        self._run = ray.remote(
            num_cpus=cpus, memory=memory, resources={RESOURCE: 1}, max_retries=0
        )(run_order)
        self._prepare = ray.remote(num_cpus=0, max_retries=0)(prepare_node)
        self._sweep = ray.remote(num_cpus=0, max_retries=0)(sweep_node)

    # the loop

    def run(self) -> bool:
        """Every queued run to a node and back; True when Ctrl-C (or SIGTERM) stopped it."""
        try:
            self._refresh(force=True)
            while self.queue or self.flights:
                self._refresh()
                self._fill()
                if not self.flights and not self.preparing and not self.nodes.hopeful:
                    self.gave_up = f"no node takes runs: {self.nodes.why_not()}"
                    break
                self._wait()
            return False
        except KeyboardInterrupt:
            self._stop()
            return True
        finally:
            self._sweep_nodes()

    def _refresh(self, force: bool = False) -> None:
        if not force and time.monotonic() - self._refreshed < REFRESH_S:
            return
        self._refreshed = time.monotonic()
        new, lost = self.nodes.refresh(ray.nodes())
        self.widest = max(self.widest, self.nodes.capacity)
        for node in lost:
            say(f"node {node.label} left the cluster")
        for node in new:
            say(f"node {node.label}: {node.slots} slot(s), preparing the image")
            self._prepare_on(node)

    def _prepare_on(self, node: Node) -> None:
        s = self.setup
        ref = self._prepare.options(scheduling_strategy=_on(node)).remote(
            s.template.image, s.image_id, self.saved, s.batch_label, s.driver_token
        )
        self.preparing[ref] = node

    def _cap(self) -> int:
        capacity = self.nodes.capacity
        return capacity if self.setup.concurrency is None else self.setup.concurrency

    def _fill(self) -> None:
        if self.streak is not None and self.streak.halted.is_set():
            while self.queue:  # the model's API keeps failing: start no more (they are skipped)
                self.queue.popleft()
                self.progress.drop()
        while self.queue and len(self.flights) < self._cap():
            index, attempt = self.queue[0]
            avoid = self.avoid.get(index, set())
            node = self.nodes.pick(avoid)
            if node is None:
                if not self.nodes.hopeful_outside(avoid):
                    self.queue.popleft()  # its infra record stands
                    self.progress.drop()
                    say(f"no other node to re-run {case_name(self.todo[index])} on")
                    continue
                return
            self.queue.popleft()
            self._submit(index, attempt, node)

    def _submit(self, index: int, attempt: int, node: Node) -> None:
        s, case_dir = self.setup, self.todo[index]
        req = replace(s.template, task_dir=case_dir)
        self.progress.start()
        try:
            task = TaskFiles.read(case_dir)
        except OSError as e:
            self._record(index, f"task_data: cannot read {case_dir}: {e}", None, 0.0)
            return
        ticket = s.handoff.ticket() if s.handoff is not None else None
        order = RunOrder.of(
            index,
            attempt,
            req,
            task=task,
            ticket=ticket,
            image_id=s.image_id,
            return_limit=s.return_limit,
        )
        ref = self._run.options(
            scheduling_strategy=_on(node), name=f"clawbench {case_name(case_dir)}"
        ).remote(order, self.saved)
        node.running += 1
        self.flights[ref] = _Flight(index, attempt, node, ticket)
        say(f"START {case_name(case_dir)} on {node.label}")

    def _wait(self) -> None:
        refs = [*self.flights, *self.preparing]
        if not refs:
            time.sleep(0.5)  # nothing out: a node may yet become ready
            return
        ready, _ = ray.wait(refs, num_returns=1, timeout=1.0)
        for ref in ready:
            if ref in self.preparing:
                self._prepared(ref, self.preparing.pop(ref))
            else:
                self._landed(ref, self.flights.pop(ref))

    # what comes back

    def _prepared(self, ref: Any, node: Node) -> None:
        try:
            report: NodeReport = ray.get(ref)
        except ray.exceptions.RayError as e:
            node.state, node.reason = NodeState.LOST, f"lost while preparing: {type(e).__name__}"
            say(f"node {node.label}: {node.reason}")
            return
        if report.ready:
            node.state = NodeState.READY
            say(f"node {node.label}: ready (image {report.how})")
        elif report.how == "missing" and self.saved is None:
            say(f"node {node.label}: no image {self.setup.template.image}; sending the driver's")
            self.saved = self.setup.ship_image()
            self._prepare_on(node)
        elif report.how == "missing":
            self._prepare_on(node)
        else:
            node.state, node.reason = NodeState.REFUSED, report.detail
            say(f"node {node.label}: refused, no runs go there: {report.detail}")

    def _landed(self, ref: Any, flight: _Flight) -> None:
        flight.node.running -= 1
        if flight.ticket is not None and self.setup.handoff is not None:
            self.setup.handoff.revoke(flight.ticket)
        seconds = time.monotonic() - flight.started
        node = NodeInfo(hostname=flight.node.hostname, ray_node_id=flight.node.id)
        result = self.returns.settle(
            ref, flight.index, node, seconds, lambda e: self._lost(flight, e)
        )
        self._report(result)
        if result.ending.stop_reason != StopReason.INTERRUPTED:
            self._count(flight, result)

    def _lost(self, flight: _Flight, error: Exception) -> str:
        """How a run's node or worker went away, and whether the run goes again."""
        self._refresh(force=True)
        gone = flight.node.state == NodeState.LOST
        what = "left the cluster" if gone else f"lost the run ({type(error).__name__})"
        return what + ("" if flight.index in self.rerun else "; re-run on another node")

    def _count(self, flight: _Flight, result: Result) -> None:
        """The node's health after this run. An infra failure of the node's (neither a task that
        does not load, a stop, nor the model's API failing) is re-run once on another node."""
        ending = result.ending
        infra = (
            ending.category == Category.INFRA_FAILURE and ending.stop_reason not in NOT_THE_NODES
        )
        node = flight.node
        if self.nodes.ran(node, infra=infra, reason=ending.failure_reason):
            say(f"node {node.label}: excluded, no more runs go there: {node.reason}")
        if infra:
            self._requeue(flight.index, node)

    def _requeue(self, index: int, node: Node) -> None:
        """Run it again on another node, once per run."""
        if index in self.rerun:
            return
        self.rerun.add(index)
        self.avoid.setdefault(index, set()).add(node.id)
        self.queue.append((index, 2))
        self.progress.requeue()

    def _record(self, index: int, reason: str, node: NodeInfo | None, seconds: float) -> None:
        self._report(self.returns.record(index, reason, node, seconds))

    def _report(self, result: Result) -> None:
        ending = result.ending
        self.progress.end(infra=is_infra_category(ending.category), seconds=result.duration_s)
        if self.streak is not None:
            self.streak.add(ending)
        where = f" on {result.node.label}" if result.node is not None else ""
        line = done_line(RunOutcome(result.run_dir, ending, result.duration_s))
        say(f"DONE  {case_name(self.todo[result.index])}{where}: {line}")
        say(self.progress.line(min(self._cap(), max(1, self.nodes.capacity))))
        self.on_result(result)

    # stopping and cleaning up

    def _stop(self) -> None:
        say(f"interrupted: cancelling {len(self.flights)} run(s) on the cluster, no new runs")
        self.queue.clear()
        for ref in self.flights:
            ray.cancel(ref, force=False)
        deadline = time.monotonic() + self.setup.template.stop_grace_s + 30
        while self.flights and time.monotonic() < deadline:
            try:
                ready, _ = ray.wait(list(self.flights), num_returns=1, timeout=1.0)
                for ref in ready:
                    self._landed(ref, self.flights.pop(ref))
            except KeyboardInterrupt:
                continue  # again: keep stopping, never leave anything behind
        for ref, flight in list(self.flights.items()):
            ray.cancel(ref, force=True)
            self.flights.pop(ref)
            flight.node.running -= 1
            node = NodeInfo(hostname=flight.node.hostname, ray_node_id=flight.node.id)
            self._record(flight.index, "interrupted: the batch was stopped", node, 0)

    def _sweep_nodes(self) -> None:
        """Remove the batch's containers on every node still there (Ctrl-C, a dead worker)."""
        live = [n for n in self.nodes.by_id.values() if n.state != NodeState.LOST]
        refs = [
            self._sweep.options(scheduling_strategy=_on(n)).remote(self.setup.batch_label)
            for n in live
        ]
        removed = 0
        deadline = time.monotonic() + SWEEP_TIMEOUT_S
        while refs and time.monotonic() < deadline:
            try:
                ready, refs = ray.wait(refs, num_returns=len(refs), timeout=1.0)
                removed += sum(_count_removed(r) for r in ready)
            except KeyboardInterrupt:
                continue
        if removed:
            say(f"removed {removed} leftover container(s) on the cluster")


def _count_removed(ref: Any) -> int:
    try:
        return int(ray.get(ref))
    except ray.exceptions.RayError:
        return 0


def _on(node: Node) -> NodeAffinitySchedulingStrategy:
    return NodeAffinitySchedulingStrategy(node_id=node.id, soft=False)


__all__ = ["Dispatcher", "Setup"]
