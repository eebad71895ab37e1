"""What runs on a node, as Ray tasks: prepare it (the image), run one order, sweep a batch.

run_order runs the same pipeline as a local run (sandbox.runs.pipeline.run_one) with the same
DockerExecutor, on this node's Docker engine, in a scratch directory; the run directory goes
back packed (cluster.transfer) and the scratch directory is removed. Everything that can fail
before the container (the engine, the image, the --env values) fails inside the pipeline, so it
is a recorded infra failure like any other, naming the node.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from docker.errors import DockerException

from proxy_addon.records import Ending, safe_model
from sandbox.cluster.handoff import HandoffError, receive
from sandbox.cluster.images import ImageRefused, ensure_image, has_registry, local_id
from sandbox.cluster.order import NodeInfo, RunOrder
from sandbox.cluster.transfer import pack, trim
from sandbox.host import DockerExecutor, RunRequest
from sandbox.host import docker_api as engine
from sandbox.runs import PreparedRun, SetupFailure, run_one

NODE_LABEL = "io.clawbench.ray-node"
"""On the container of a Ray run: the Ray node id of the node that started it."""
DRIVER_LABEL = "io.clawbench.ray-driver"
"""On the container of a Ray run: a token of the driver process that sent it."""


@dataclass(frozen=True)
class NodeReport:
    """A node's answer to prepare_node: ready, or why not (missing: send it the image)."""

    node: NodeInfo
    ready: bool
    how: str
    """present, pulled or loaded when ready; missing or refused when not."""
    detail: str | None = None


@dataclass(frozen=True)
class Landed:
    """A run that came back: its packed directory and how it ended (for the driver's count)."""

    node: NodeInfo
    index: int
    attempt: int
    parent: str
    """The run directory's parent in the batch (<safe_model>): the archive's only top level."""
    archive: bytes
    ending: Ending
    duration_s: float


def _chunks(refs: list[Any] | None) -> Iterator[bytes] | None:
    """The driver's saved image, fetched from the object store one chunk at a time."""
    if refs is None:
        return None
    import ray

    return (ray.get(ref) for ref in refs)


class NodeExecutor:
    """The DockerExecutor on this node, after the node's own checks; trims what returns."""

    def __init__(self, order: RunOrder, req: RunRequest, image: list[Any] | None) -> None:
        self.order = order
        self.node = NodeInfo.here()
        self.image = image
        labels = {**req.labels, NODE_LABEL: self.node.ray_node_id}
        self.docker = DockerExecutor(None, replace(req, labels=labels))

    def execute(self, run: PreparedRun) -> None:
        order = self.order
        try:
            client = engine.connect()
            req = self.docker.req
            ensure_image(client, req.image, order.image_id, _chunks(self.image), where=self.where)
            env = receive(order.ticket) if order.ticket is not None else {}
        except (engine.EngineError, ImageRefused, HandoffError, DockerException) as e:
            raise SetupFailure(f"node {self.where}: {e}") from e
        if sorted(env) != list(order.env_names):
            raise SetupFailure(f"node {self.where}: the driver sent values for other --env names")
        self.docker = DockerExecutor(client, replace(req, env=env))
        try:
            self.docker.execute(run)
        finally:
            run.execution.problems += trim(run.run_dir, order.return_limit)

    @property
    def where(self) -> str:
        return self.node.label

    def abandon(self, run: PreparedRun) -> None:
        self.docker.abandon(run)

    def describe(self, run: PreparedRun) -> dict[str, Any]:
        blocks = self.docker.describe(run)
        blocks["sandbox"].node = self.node.record()
        return blocks


def run_order(order: RunOrder, image: list[Any] | None) -> Landed:
    """Run one order on this node; the packed run directory and its ending."""
    root = Path(tempfile.mkdtemp(prefix="clawbench-run-"))
    try:
        req = order.local_request(root)
        executor = NodeExecutor(order, req, image)
        outcome = run_one(req.job(), executor)
        archive = pack(req.out, outcome.run_dir)
        parent = safe_model(req.model)
        return Landed(
            executor.node,
            order.index,
            order.attempt,
            parent,
            archive,
            outcome.ending,
            outcome.duration_s,
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


def prepare_node(
    image: str, want: str, saved: list[Any] | None, batch: str, driver: str
) -> NodeReport:
    """Make the driver's image ready here (pull or load it if missing), or say why not; first
    remove what an earlier driver of the same batch left running (a driver killed, then
    --resume): the batch's containers of any other driver."""
    node = NodeInfo.here()
    try:
        client = engine.connect()
        _sweep_earlier(client, batch, driver)
        if saved is None and not has_registry(image) and local_id(client, image) is None:
            return NodeReport(node, False, "missing", f"image {image} is not on this node")
        how = ensure_image(client, image, want, _chunks(saved), where=node.label)
    except (engine.EngineError, ImageRefused, DockerException) as e:
        return NodeReport(node, False, "refused", str(e))
    return NodeReport(node, True, how)


def _sweep_earlier(client: Any, batch: str, driver: str) -> None:
    found = client.containers.list(all=True, filters={"label": f"{engine.BATCH_LABEL}={batch}"})
    for container in found:
        if container.labels.get(DRIVER_LABEL) != driver:
            engine.remove(container)


def sweep_node(batch: str) -> int:
    """Remove every container of the batch from this node's engine; how many."""
    try:
        client = engine.connect()
    except engine.EngineError:
        return 0
    return engine.remove_labelled(client, engine.BATCH_LABEL, batch)


__all__ = [
    "DRIVER_LABEL",
    "NODE_LABEL",
    "Landed",
    "NodeExecutor",
    "NodeReport",
    "prepare_node",
    "run_order",
    "sweep_node",
]
