"""Whether the agent ran out of its own resources: memory, processes, writable space, or the
byte budget of the records its traffic makes.

The container has limits (memory, pids, CPU, tmpfs sizes, the records budget; set by the runner,
recorded in run-meta.json). When the agent reaches one, that is the model's failure and the stop
reason says so (`agent_resources_exhausted`), never an infra failure that `batch --resume` would
re-run: the proxy keeps running (its OOM score is lowest, the agent's highest) and its records
live where the agent cannot write. Read from the container's cgroup (v2, or v1's memory and pids
controllers), the agent's tmpfs mounts, the proxy's requests-summary.json and mitmdump.log.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from proxy_addon.records import REQUESTS_SUMMARY_FILE, RecordError, read_requests_summary
from sandbox.container.processes import CUT

CGROUP = Path("/sys/fs/cgroup")
FULL_FRACTION = 0.98
"""A tmpfs this full counts as filled by the agent."""


def _counter(paths: Iterable[Path], key: str) -> int:
    """The value of `key N` in the first of paths that exists (0 when none does)."""
    for path in paths:
        try:
            lines = path.read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value)
        return 0
    return 0


def oom_kills(root: Path = CGROUP) -> int:
    """Processes the kernel's OOM killer ended in this container."""
    return _counter([root / "memory.events", root / "memory" / "memory.oom_control"], "oom_kill")


def pids_refusals(root: Path = CGROUP) -> int:
    """fork()s refused because the container reached its pids limit."""
    return _counter([root / "pids.events", root / "pids" / "pids.events"], "max")


def peak_memory(root: Path = CGROUP) -> int | None:
    """The container's highest memory use so far, in bytes (None when the cgroup says not)."""
    for path in (root / "memory.peak", root / "memory" / "memory.max_usage_in_bytes"):
        try:
            return int(path.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return None


def full_mounts(mounts: Iterable[str]) -> list[str]:
    """The agent's writable mounts that are (nearly) full."""
    full = []
    for mount in mounts:
        try:
            st = os.statvfs(mount)
        except OSError:
            continue
        if st.f_blocks and (st.f_blocks - st.f_bavail) / st.f_blocks >= FULL_FRACTION:
            full.append(mount)
    return full


def _was_cut(log: Path) -> bool:
    """Whether a log copied by processes.capped_copy ends with the line saying it was cut."""
    try:
        with log.open("rb") as f:
            f.seek(max(log.stat().st_size - 200, 0))
            return CUT.encode() in f.read()
    except OSError:  # no log: nothing was cut
        return False


def records_filled(data: Path, mitmdump_log: Path, log_cap: int) -> str | None:
    """How the agent's traffic used up the proxy's records budget, in words, or None."""
    try:
        summary = read_requests_summary(data / REQUESTS_SUMMARY_FILE)
    except RecordError:
        summary = None
    found = []
    if summary is not None and summary.budget_reached:
        found.append(
            f"requests.jsonl: {summary.lines_shortened} request(s) shortened, "
            f"{summary.requests_not_logged} only counted"
        )
    if _was_cut(mitmdump_log):
        found.append(f"mitmdump.log cut at {log_cap} bytes")
    return f"its records budget ({'; '.join(found)})" if found else None


def exhausted(mounts: Iterable[str], root: Path = CGROUP, records: str | None = None) -> str | None:
    """What the agent ran out of, in words (records: what records_filled said), or None."""
    found = [records] if records else []
    if kills := oom_kills(root):
        found.append(f"memory (the OOM killer ended {kills} process(es))")
    if refusals := pids_refusals(root):
        found.append(f"processes ({refusals} fork(s) refused at the pids limit)")
    if full := full_mounts(mounts):
        found.append(f"writable space ({', '.join(full)} full)")
    return "; ".join(found) or None


__all__ = [
    "exhausted",
    "full_mounts",
    "oom_kills",
    "peak_memory",
    "pids_refusals",
    "records_filled",
]
