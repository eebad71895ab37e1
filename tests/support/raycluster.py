"""A real multi-node Ray cluster on this machine, for the tests and bench/ (ray.cluster_utils).

Each node is its own raylet with its own `clawbench_docker` resource; all of them use the local
Docker engine. Sized for a shared two-core machine: by default one CPU and one run per node.
Everything Ray writes goes under a fresh short temp directory (Unix socket paths are short), and
shutdown ends every process whose command line names it, so no raylet outlives its user.

Ray binds the machine's own address, not 127.0.0.1 (it maps loopback to it when connecting):
traffic to the machine's own address never leaves it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def node_args(runs: int = 1) -> dict[str, Any]:
    """A node holding `runs` runs of one CPU each."""
    return {
        "num_cpus": runs,
        "resources": {"clawbench_docker": runs},
        "object_store_memory": 150 << 20,
    }


def _ours(temp: Path) -> list[int]:
    """Pids of the processes whose command line names temp (the cluster's own)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if str(temp).encode() in cmdline:
            pids.append(int(entry.name))
    return pids


@dataclass
class TestCluster:
    """The cluster, its nodes (head first) and where Ray keeps its files."""

    cluster: Any
    temp: Path
    previous_tmpdir: str | None
    nodes: list[Any] = field(default_factory=list)

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    @property
    def env(self) -> dict[str, str]:
        """The environment for a driver process: Ray's temp dir (ray.init reads it)."""
        return {**os.environ, "RAY_TMPDIR": str(self.temp)}

    def add_node(self, runs: int = 1) -> Any:
        node = self.cluster.add_node(**node_args(runs))
        self.nodes.append(node)
        return node

    def kill_node(self, node: Any) -> None:
        """The node's raylet and workers die at once (its containers are the engine's)."""
        self.cluster.remove_node(node, allow_graceful=False)
        self.nodes.remove(node)

    def files(self) -> list[Path]:
        """Every file Ray wrote: logs, session files, spilled objects."""
        return [p for p in self.temp.rglob("*") if p.is_file() and not p.is_symlink()]

    def shutdown(self) -> None:
        with contextlib.suppress(Exception):
            self.cluster.shutdown()
        deadline = time.monotonic() + 10
        while (left := _ours(self.temp)) and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.2)
        shutil.rmtree(self.temp, ignore_errors=True)
        if self.previous_tmpdir is None:
            os.environ.pop("RAY_TMPDIR", None)
        else:
            os.environ["RAY_TMPDIR"] = self.previous_tmpdir


def start_cluster(workers: int = 1, runs: int = 1) -> TestCluster:
    """A head node and `workers` more, each taking `runs` runs."""
    from ray.cluster_utils import Cluster

    temp = Path(tempfile.mkdtemp(prefix="cbray-", dir="/tmp"))
    handle = TestCluster(None, temp, os.environ.get("RAY_TMPDIR"))
    # Every node (and Cluster's address file) goes under it, until shutdown puts it back.
    os.environ["RAY_TMPDIR"] = str(temp)
    try:
        handle.cluster = Cluster(
            initialize_head=True, head_node_args={**node_args(runs), "include_dashboard": False}
        )
        handle.nodes.append(handle.cluster.head_node)
        for _ in range(workers):
            handle.add_node(runs)
    except BaseException:
        handle.shutdown()
        raise
    return handle
