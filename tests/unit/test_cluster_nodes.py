"""The driver's node table: slots from a node's resources, picking, losing and excluding nodes."""

from __future__ import annotations

from typing import Any

from sandbox.cluster.nodes import EXCLUDE_AFTER, RESOURCE, Demand, Nodes, NodeState
from sandbox.cluster.progress import Progress

GIB = 1 << 30


def _entry(node_id: str, alive: bool = True, **resources: float) -> dict[str, Any]:
    return {
        "NodeID": node_id,
        "Alive": alive,
        "NodeManagerHostname": f"host-{node_id}",
        "Resources": resources,
    }


def test_slots_are_what_the_resources_allow_for_one_run() -> None:
    demand = Demand(cpus=2, memory=4 * GIB)
    assert demand.slots({RESOURCE: 4, "CPU": 16, "memory": 64 * GIB}) == 4
    assert demand.slots({RESOURCE: 8, "CPU": 6, "memory": 64 * GIB}) == 3
    assert demand.slots({RESOURCE: 8, "CPU": 64, "memory": 10 * GIB}) == 2
    assert demand.slots({"CPU": 64, "memory": 64 * GIB}) == 0
    assert Demand(cpus=0.5, memory=GIB).slots({RESOURCE: 8, "CPU": 1.5, "memory": 8 * GIB}) == 3


def test_refresh_finds_new_nodes_and_lost_ones() -> None:
    nodes = Nodes(Demand(cpus=1, memory=GIB))
    new, lost = nodes.refresh(
        [
            _entry("a", **{RESOURCE: 2, "CPU": 4, "memory": 8 * GIB}),
            _entry("b", **{RESOURCE: 1, "CPU": 4, "memory": 8 * GIB}),
            _entry("head", CPU=4, memory=8 * GIB),  # no clawbench_docker: not ours
            _entry("tiny", **{RESOURCE: 1, "CPU": 0.5, "memory": 8 * GIB}),
        ]
    )
    assert [n.id for n in new] == ["a", "b"] and lost == []
    assert nodes.by_id["tiny"].state == NodeState.REFUSED
    assert "too small" in (nodes.by_id["tiny"].reason or "")
    assert nodes.capacity == 3 and nodes.pick() is None  # none ready yet
    for node in new:
        node.state = NodeState.READY
    assert nodes.pick().id == "a"
    nodes.by_id["a"].running = 1
    assert nodes.pick().id in ("a", "b")
    assert nodes.pick(avoid=["a"]).id == "b"
    new, lost = nodes.refresh([_entry("a", alive=False), _entry("b", **{RESOURCE: 1, "CPU": 4})])
    assert new == [] and [n.id for n in lost] == ["a"]
    assert nodes.capacity == 1 and not nodes.hopeful_outside(["b"])
    assert nodes.refresh([_entry("a", alive=False)]) == ([], [])  # lost once


def test_a_node_is_excluded_after_infra_failures_in_a_row() -> None:
    nodes = Nodes(Demand(cpus=1, memory=GIB))
    (node,), _ = nodes.refresh([_entry("a", **{RESOURCE: 2, "CPU": 4, "memory": 8 * GIB})])
    node.state = NodeState.READY
    assert not nodes.ran(node, infra=True, reason="engine: gone")
    assert not nodes.ran(node, infra=False, reason=None)  # a good run resets the count
    for _ in range(EXCLUDE_AFTER - 1):
        assert not nodes.ran(node, infra=True, reason="firewall: no NET_ADMIN")
    assert nodes.ran(node, infra=True, reason="firewall: no NET_ADMIN")
    assert node.state == NodeState.EXCLUDED and node.failures == EXCLUDE_AFTER
    assert "firewall: no NET_ADMIN" in (node.reason or "") and not nodes.hopeful
    assert "excluded" in nodes.why_not()


def test_progress_counts_and_estimates() -> None:
    progress = Progress(left=4)
    assert "ETA after the first run" in progress.line(2)
    progress.start()
    progress.start()
    progress.end(infra=False, seconds=60)
    progress.end(infra=True, seconds=1)
    progress.requeue()
    assert progress.line(2).startswith("1 done, 0 running, 1 failed, 3 left; ETA 1m30s")
