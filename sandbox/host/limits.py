"""The agent container's resource limits: memory, processes, CPU and writable space.

Defaults fit one browser agent; flags change them and run-meta.json records them. Memory has no
swap on top. Every place the agent can write is a tmpfs of bounded size (contract.AGENT_MOUNTS),
so an agent that fills its disk fills only its own space; the proxy's records, the logs and
report.json live on the container's root, where the agent cannot write.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

from sandbox.container.contract import (
    AGENT_GID,
    AGENT_HOME,
    AGENT_NOFILE,
    AGENT_OUT,
    AGENT_UID,
    RECORDS_BUDGET,
)

_SIZE = re.compile(r"^(\d+)([kmg])b?$", re.IGNORECASE)
_UNIT = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def parse_size(text: str) -> int:
    """Bytes from '512m', '2g', '64k' (a unit is required: a bare '4' would be 4 bytes, never
    what was meant); ValueError says what to write instead."""
    value = text.strip()
    if value.isdigit():
        raise ValueError(
            f"{text!r} has no unit: write {value}g for {value} GiB or {value}m for MiB"
        )
    m = _SIZE.match(value)
    if not m or int(m.group(1)) == 0:
        raise ValueError(f"{text!r} is not a size (write e.g. 512m or 2g)")
    return int(m.group(1)) * _UNIT[m.group(2).lower()]


@dataclass(frozen=True)
class Limits:
    """What one agent container may use."""

    memory: int = 4 << 30
    pids: int = 512
    cpus: float = 2.0
    disk: int = 1 << 30
    """Size of each of the agent's big writable mounts (/tmp, its home, /dev/shm)."""
    records: int = RECORDS_BUDGET
    """Bytes the proxy's records (requests.jsonl and mitmdump.log) may take, together."""

    def docker_kwargs(self) -> dict[str, Any]:
        """containers.create() arguments that enforce these limits."""
        small = f"size={64 << 20}"
        agent = f"uid={AGENT_UID},gid={AGENT_GID},mode=0700"
        return {
            "mem_limit": self.memory,
            "memswap_limit": self.memory,  # no swap beyond the memory limit
            "pids_limit": self.pids,
            "nano_cpus": int(self.cpus * 1e9),
            "shm_size": self.disk,
            "tmpfs": {
                "/tmp": f"size={self.disk},mode=1777,exec",
                "/var/tmp": f"{small},mode=1777",
                "/run/lock": f"size={1 << 20},mode=1777",
                AGENT_HOME: f"size={self.disk},{agent},exec",
                AGENT_OUT: f"{small},{agent}",
            },
        }

    def record(self) -> dict[str, Any]:
        """run-meta.json's sandbox.limits."""
        return {**asdict(self), "agent_nofile": AGENT_NOFILE}


__all__ = ["Limits", "parse_size"]
