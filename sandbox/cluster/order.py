"""What travels to a node for one run (a RunOrder) and what the node rebuilds from it.

A RunOrder is a Ray task argument, so it holds nothing secret: the --env values stay on the
driver and reach the node by the ticket (cluster.handoff); only their names travel. The task's
files travel as bytes (task.json and the /my-info/ files its extra_info names), since the corpus
is on the driver's disk, not the node's.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict

from proxy_addon.records import RunMeta, case_name
from proxy_addon.tasks import TaskError, load_task, task_path
from sandbox.cluster.handoff import Ticket
from sandbox.host import RunRequest
from sandbox.runs import agent_view


@dataclass(frozen=True)
class TaskFiles:
    """A task directory as bytes: task.json and the extra_info files, by relative path."""

    case: str
    files: dict[str, bytes]

    @classmethod
    def read(cls, task_dir: Path) -> TaskFiles:
        """task.json (as it is, even when it does not load) and the files its agent would see."""
        src = task_path(task_dir)
        files = {"task.json": src.read_bytes()}
        try:
            view = agent_view(load_task(src), src.parent)
        except TaskError:
            view = None  # the node's load fails the same way: a task_data infra failure
        for path in view.files.values() if view else ():
            files[path.relative_to(src.parent).as_posix()] = path.read_bytes()
        return cls(case_name(task_dir), files)

    def write(self, root: Path) -> Path:
        """Recreate the task directory under root; return it."""
        task_dir = root / self.case
        for rel, data in self.files.items():
            parts = PurePosixPath(rel).parts
            if PurePosixPath(rel).is_absolute() or ".." in parts:
                raise ValueError(f"task file {rel!r}: not a relative path")
            target = task_dir.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return task_dir


class NodeInfo(BaseModel):
    """Which node ran a run: run-meta.json's `sandbox.node` (written by the pipeline with the
    executor's sandbox block, read back by `of_run`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    hostname: str
    ray_node_id: str

    @classmethod
    def here(cls) -> NodeInfo:
        import ray

        return cls(
            hostname=socket.gethostname(), ray_node_id=ray.get_runtime_context().get_node_id()
        )

    @classmethod
    def of_run(cls, meta: RunMeta) -> NodeInfo | None:
        """The node a run's run-meta.json names; None for a run that did not go through Ray."""
        node = meta.sandbox.node if meta.sandbox is not None else None
        return None if node is None else cls.model_validate(node)

    def record(self) -> dict[str, str]:
        return self.model_dump()

    @property
    def label(self) -> str:
        return f"{self.hostname} ({self.ray_node_id[:8]})"


@dataclass(frozen=True)
class RunOrder:
    """One run as a node receives it: the request without its secrets, the task as bytes."""

    index: int
    """The task's place in the corpus (the batch's key for the run)."""
    attempt: int
    task: TaskFiles
    request: RunRequest
    """task_dir, out and upstream_ca are the driver's paths; env holds no values."""
    env_names: tuple[str, ...]
    ticket: Ticket | None
    image_id: str
    upstream_ca: bytes | None = None
    return_limit: int = 0

    @classmethod
    def of(
        cls,
        index: int,
        attempt: int,
        req: RunRequest,
        *,
        task: TaskFiles,
        ticket: Ticket | None,
        image_id: str,
        return_limit: int,
    ) -> RunOrder:
        """The order for req: no env values, no callbacks, the CA as bytes."""
        bare = replace(req, env={}, on_container=None, stop=None)
        ca = req.upstream_ca.read_bytes() if req.upstream_ca is not None else None
        return cls(
            index,
            attempt,
            task,
            bare,
            tuple(sorted(req.env)),
            ticket,
            image_id,
            ca,
            return_limit,
        )

    def local_request(self, root: Path) -> RunRequest:
        """The node's RunRequest, its env values still to fetch: the task and the CA written
        under root, the run going to root/out."""
        ca = None
        if self.upstream_ca is not None:
            ca = root / "upstream-ca.pem"
            ca.write_bytes(self.upstream_ca)
        return replace(
            self.request,
            task_dir=self.task.write(root / "task"),
            out=root / "out",
            upstream_ca=ca,
        )


__all__ = ["NodeInfo", "RunOrder", "TaskFiles"]
