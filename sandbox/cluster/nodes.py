"""The driver's view of the cluster's nodes: how many runs each takes, which may get work.

A node takes runs when Ray says it is alive, it advertises the `clawbench_docker` resource and
its image is ready (cluster.node.prepare_node). Its slots are what its resources allow for one
run's request (clawbench_docker 1, --cpus, --memory). It stops getting work when it leaves the
cluster, refuses the image, or ends EXCLUDE_AFTER runs in a row as infra failures of its own
(its Docker engine fails, its containers cannot get NET_ADMIN ...).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

RESOURCE = "clawbench_docker"
"""The custom resource a node advertises per run it may hold (`ray start --resources`)."""
EXCLUDE_AFTER = 3
"""Infra failures in a row after which a node gets no more runs."""


class NodeState(StrEnum):
    PREPARING = "preparing"
    READY = "ready"
    REFUSED = "refused"
    """Its image is not the driver's, or its Docker engine does not answer."""
    EXCLUDED = "excluded"
    """Too many infra failures in a row."""
    LOST = "lost"


@dataclass(frozen=True)
class Demand:
    """What one run asks of a node."""

    cpus: float
    memory: int

    def slots(self, resources: Mapping[str, float]) -> int:
        """Runs a node with these total resources holds at once."""
        fits = [int(resources.get(RESOURCE, 0))]
        if self.cpus > 0:
            fits.append(math.floor(resources.get("CPU", 0) / self.cpus + 1e-9))
        if self.memory > 0 and "memory" in resources:
            fits.append(math.floor(resources["memory"] / self.memory + 1e-9))
        return max(0, min(fits))


@dataclass
class Node:
    id: str
    hostname: str
    slots: int
    state: NodeState = NodeState.PREPARING
    running: int = 0
    failures: int = 0
    """Infra failures in a row."""
    reason: str | None = None

    @property
    def label(self) -> str:
        return f"{self.hostname} ({self.id[:8]})"

    @property
    def free(self) -> int:
        return self.slots - self.running if self.state == NodeState.READY else 0


class Nodes:
    """Every node the batch has seen, by Ray node id."""

    def __init__(self, demand: Demand) -> None:
        self.demand = demand
        self.by_id: dict[str, Node] = {}

    def refresh(self, listing: Iterable[Mapping[str, Any]]) -> tuple[list[Node], list[Node]]:
        """Take in ray.nodes(): (nodes new and able to take a run, nodes just lost)."""
        new, lost = [], []
        for entry in listing:
            node_id = entry["NodeID"]
            known = self.by_id.get(node_id)
            if not entry.get("Alive", False):
                if known is not None and known.state != NodeState.LOST:
                    known.state, known.reason = NodeState.LOST, "left the cluster"
                    lost.append(known)
                continue
            resources = entry.get("Resources", {})
            if known is None and resources.get(RESOURCE, 0) > 0:
                node = Node(node_id, entry.get("NodeManagerHostname") or "?", 0)
                node.slots = self.demand.slots(resources)
                if node.slots == 0:
                    node.state = NodeState.REFUSED
                    node.reason = f"too small for one run ({self.demand}, it has {resources})"
                else:
                    new.append(node)
                self.by_id[node_id] = node
        return new, lost

    def pick(self, avoid: Iterable[str] = ()) -> Node | None:
        """The ready node with the most free slots, not one of avoid."""
        skip = set(avoid)
        free = [n for n in self.by_id.values() if n.free > 0 and n.id not in skip]
        return max(free, key=lambda n: (n.free, n.slots), default=None)

    @property
    def capacity(self) -> int:
        """Runs the nodes that are or may become ready hold at once."""
        live = (NodeState.READY, NodeState.PREPARING)
        return sum(n.slots for n in self.by_id.values() if n.state in live)

    @property
    def hopeful(self) -> bool:
        """Whether any node is ready or may become ready."""
        return self.capacity > 0

    def hopeful_outside(self, avoid: Iterable[str]) -> bool:
        """Whether a node not in avoid is ready or may become ready."""
        skip = set(avoid)
        live = (NodeState.READY, NodeState.PREPARING)
        return any(n.state in live and n.id not in skip for n in self.by_id.values())

    def ran(self, node: Node, *, infra: bool, reason: str | None) -> bool:
        """A run of node's ended (infra: an infra failure of the node's); True when the node is
        excluded by this one."""
        if not infra:
            node.failures = 0
            return False
        node.failures += 1
        if node.failures >= EXCLUDE_AFTER and node.state == NodeState.READY:
            node.state = NodeState.EXCLUDED
            node.reason = f"{node.failures} runs in a row ended as infra failures (last: {reason})"
            return True
        return False

    def why_not(self) -> str:
        """Why no node takes runs, one clause per node."""
        seen = [f"{n.label}: {n.state} ({n.reason})" for n in self.by_id.values()]
        return "; ".join(seen) or f"no alive node advertises the {RESOURCE} resource"


__all__ = ["EXCLUDE_AFTER", "RESOURCE", "Demand", "Node", "NodeState", "Nodes"]
