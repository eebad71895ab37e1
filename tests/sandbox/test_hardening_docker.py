"""A hostile agent against its own container (issue: sandbox hardening), on the closed network.

The agent tries to spoil its record by exhausting what it has (disk, memory, processes, log
space) or to reach the host as a user of it: each attempt ends as the model's failure with a
stop reason that says so, never an infra failure, and a commit sent after it is still recorded.
"""

from __future__ import annotations

import contextlib
import grp
import json
import pwd
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import docker.errors
import pytest

from proxy_addon.records import REQUESTS_FILE, RequestLogEntry, read_interception, read_run_meta
from proxy_addon.records.requestlog import ShortLine, read_request_log
from sandbox.container.contract import AGENT_MOUNTS, AGENT_UID, MIN_RECORDS_BUDGET, VENV_PYTHON
from sandbox.host import AgentChoice, Limits, run_task
from sandbox.runs import RunOutcome
from tests.sandbox.conftest import closed_request

pytestmark = pytest.mark.docker
SMALL = Limits(memory=384 << 20, pids=96, cpus=1.0, disk=48 << 20)
COMMIT = (
    "curl -sS --max-time 20 -o /dev/null -w 'commit %{http_code}\\n' -X POST "
    '-H \'Content-Type: application/json\' -d \'{"item": "lamp", "qty": 2}\' '
    "https://shop.clawbench.test/api/checkout"
)


def _run(
    client: Any,
    internet: Any,
    image: str,
    out: Path,
    command: str,
    case: str = "quick-null",
    limits: Limits = SMALL,
) -> tuple[RunOutcome, dict[str, Any]]:
    req = closed_request(internet, image, out, case, AgentChoice("cmd", command=command))
    outcome = run_task(client, replace(req, limits=limits))
    meta = json.loads((outcome.run_dir / "run-meta.json").read_text())
    return outcome, meta


def _agent_log(outcome: RunOutcome) -> str:
    return (outcome.run_dir / "data" / "agent.log").read_text(errors="replace")


def test_the_agent_is_no_host_account_and_its_limits_hold(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    with pytest.raises(KeyError):
        pwd.getpwuid(AGENT_UID)
    with pytest.raises(KeyError):
        grp.getgrgid(AGENT_UID)
    probe = (
        "id -u; id -g; ulimit -n; "
        "cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null; "
        "cat /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max 2>/dev/null; "
        "df -B1 --output=target,size /tmp /home/agent /dev/shm | tail -n +2; "
        # everywhere on the container's root the agent could write: nowhere but the mount
        # points of its own tmpfs (symlinks to /dev/null are not places)
        "echo writable: $(find / -xdev ! -type l -writable 2>/dev/null "
        f"| grep -v -x {' '.join(f'-e {m}' for m in AGENT_MOUNTS)} | head -5)"
    )
    outcome, meta = _run(docker_client, internet, sandbox_image, tmp_path, probe)
    assert outcome.ending.category == "model_not_intercepted", outcome.ending
    lines = _agent_log(outcome).split("\n")
    assert lines[:3] == [str(AGENT_UID), str(AGENT_UID), "1024"]
    assert str(SMALL.memory) in lines and str(SMALL.pids) in lines
    sizes = {p[0]: int(p[1]) for p in (line.split() for line in lines) if p and p[0][0] == "/"}
    assert sizes == {"/tmp": SMALL.disk, "/home/agent": SMALL.disk, "/dev/shm": SMALL.disk}
    assert "\nwritable:\n" in _agent_log(outcome)
    assert meta["sandbox"]["limits"]["memory"] == SMALL.memory
    assert meta["sandbox"]["limits"]["pids"] == SMALL.pids


def test_an_agent_that_fills_its_disk_fails_on_its_own_and_its_commit_is_still_recorded(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    fill = "for d in /tmp $HOME; do dd if=/dev/zero of=$d/fill bs=1M 2>/dev/null; done"
    outcome, meta = _run(docker_client, internet, sandbox_image, tmp_path / "a", f"{fill}; true")
    assert outcome.ending.category == "model_not_intercepted"
    assert outcome.ending.stop_reason == "agent_resources_exhausted"
    assert "writable space" in meta["sandbox"]["report_detail"]
    assert read_interception(outcome.run_dir / "data" / "interception.json").stop_reason == (
        "agent_exited"
    )
    # full disks, then the commit: blocked and recorded, the site never sees it
    before = len(internet.log())
    outcome, meta = _run(
        docker_client, internet, sandbox_image, tmp_path / "b", f"{fill}; {COMMIT}", "shop-checkout"
    )
    assert outcome.ending.category == "intercepted", outcome.ending
    assert meta["intercepted"] is True
    assert not any(e["path"] == "/api/checkout" for e in internet.log()[before:])


def test_an_agent_out_of_memory_is_the_models_failure_and_the_proxy_lives(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    hog = "python3 -c 'b = [bytearray(1 << 20) for _ in range(4096)]'"
    outcome, meta = _run(docker_client, internet, sandbox_image, tmp_path, f"{hog}; sleep 1")
    assert outcome.ending.category == "model_not_intercepted", outcome.ending
    assert outcome.ending.stop_reason == "agent_resources_exhausted"
    assert "memory" in meta["sandbox"]["report_detail"]


def test_a_fork_bomb_hits_the_pids_limit_not_the_host(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    bomb = "for i in $(seq 300); do sleep 5 & done 2>/dev/null; wait"
    outcome, meta = _run(docker_client, internet, sandbox_image, tmp_path, bomb)
    assert outcome.ending.category == "model_not_intercepted", outcome.ending
    assert outcome.ending.stop_reason == "agent_resources_exhausted"
    assert "processes" in meta["sandbox"]["report_detail"]


def test_a_huge_commit_body_is_blocked_and_credited_and_the_proxy_survives(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    before = len(internet.log())
    send = (
        # streamed (chunked): curl's --data-binary would hold the whole GiB in its own memory
        "head -c 1073741824 /dev/zero | curl -sS --max-time 60 -o /dev/null -X POST "
        "-H 'Content-Type: application/json' -T - "
        "https://shop.clawbench.test/api/checkout; echo sent"
    )
    outcome, _ = _run(docker_client, internet, sandbox_image, tmp_path, send, "shop-checkout")
    assert outcome.ending.category == "intercepted", outcome.ending
    got = read_interception(outcome.run_dir / "data" / "interception.json")
    assert got.request is not None and got.request.get("body_unverified") is True
    assert not any(e["path"] == "/api/checkout" for e in internet.log()[before:])
    assert read_run_meta(outcome.run_dir / "run-meta.json").stop_reason == "intercepted"


def test_the_agents_output_is_capped_in_its_log(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    outcome, _ = _run(
        docker_client,
        internet,
        sandbox_image,
        tmp_path,
        "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo after",
    )
    assert outcome.ending.category == "model_not_intercepted"
    log = outcome.run_dir / "data" / "agent.log"
    assert log.stat().st_size < 65 * 1024 * 1024
    assert b"agent output cut here" in log.read_bytes()[-200:]


@pytest.mark.parametrize(
    ("command", "category", "exec_error"),
    [
        # the launcher's exec fails before any of the agent's code runs: the sandbox's fault
        ("no-such-harness --task x", "infra_failure", "no-such-harness: No such file or directory"),
        ("/etc/hostname", "infra_failure", "/etc/hostname: Permission denied"),
        # it started, worked, sent nothing and chose 127: the model's failure, no re-run
        ("sh -c 'sleep 2; exit 127'", "model_not_intercepted", None),
        (
            "curl -sS -o /dev/null http://shop.clawbench.test/acted; no-such-tool",
            "model_not_intercepted",
            None,
        ),
    ],
)
def test_could_not_be_executed_is_the_launchers_word_never_the_agents_exit_status(
    command, category, exec_error, docker_client, sandbox_image, internet, tmp_path
) -> None:
    outcome, meta = _run(docker_client, internet, sandbox_image, tmp_path, command)
    assert (outcome.ending.stop_reason, outcome.ending.category) == ("agent_exited", category)
    assert meta["sandbox"]["agent_exit_code"] in (126, 127)
    if exec_error is None:
        assert meta["sandbox"]["agent_exec_error"] is None
        assert "failure_reason" not in meta
    else:
        assert meta["sandbox"]["agent_exec_error"].startswith(exec_error)
        assert meta["failure_reason"].startswith(
            f"agent command could not be executed: {exec_error}"
        )


FLOOD = replace(SMALL, records=MIN_RECORDS_BUDGET)
"""The least records budget, so a flood of a few thousand requests goes past it."""
FLOOD_COMMAND = "python3 /my-info/flood.py 6000 40"
HOST_SLACK = 24 << 20
"""What a run writes to the container's layer besides the records: the reserves kept for the
block (twice clawbench_max_body and a MiB) and report.json, the trust store, the logs."""


def _flooded(
    client: Any, internet: Any, image: str, out: Path, then: str
) -> tuple[RunOutcome, dict[str, Any], int]:
    """A flood run; also the most the container's writable layer held on the host meanwhile."""
    containers: list[Any] = []
    peak = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not done.wait(1.0):
            for c in containers:
                with contextlib.suppress(docker.errors.DockerException):
                    for listed in client.api.containers(size=True, filters={"id": c.id}):
                        peak = max(peak, listed.get("SizeRw") or 0)

    agent = AgentChoice("cmd", command=f"{FLOOD_COMMAND}; {then}")
    req = closed_request(internet, image, out, "flood", agent, on_container=containers.append)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        outcome = run_task(client, replace(req, limits=FLOOD))
    finally:
        done.set()
        watcher.join(10)
    meta = json.loads((outcome.run_dir / "run-meta.json").read_text())
    return outcome, meta, peak


def test_a_flooding_agent_fills_only_its_records_budget_and_fails_on_its_own(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    outcome, meta, peak = _flooded(docker_client, internet, sandbox_image, tmp_path, "true")
    assert outcome.ending.category == "model_not_intercepted", outcome.ending
    assert outcome.ending.stop_reason == "agent_resources_exhausted"
    assert "records budget" in meta["sandbox"]["report_detail"]
    data = outcome.run_dir / "data"
    # the records on the host: within the budget, every line readable, full then short
    on_host = (data / REQUESTS_FILE).stat().st_size + (data / "mitmdump.log").stat().st_size
    assert on_host <= FLOOD.records, on_host
    lines = read_request_log(data / REQUESTS_FILE)
    assert isinstance(lines[0], RequestLogEntry) and lines[0].refused
    assert any(isinstance(line, ShortLine) and line.verdict == "refused" for line in lines)
    assert meta["requests_shortened"] > 0 and meta["requests_not_logged"] > 0, meta
    # and the container's own layer (the host's disk) never held much more
    assert 0 < peak <= FLOOD.records + HOST_SLACK, peak
    assert read_interception(data / "interception.json").stop_reason == "agent_exited"


def test_a_commit_after_a_flood_is_blocked_and_recorded(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    before = len(internet.log())
    outcome, meta, _ = _flooded(docker_client, internet, sandbox_image, tmp_path, COMMIT)
    assert outcome.ending.category == "intercepted", outcome.ending
    assert meta["requests_not_logged"] > 0, meta  # past the budget: the commit's line too
    got = read_interception(outcome.run_dir / "data" / "interception.json")
    assert got.request is not None and got.request["body"] == {"item": "lamp", "qty": 2}
    assert not any(e["path"] == "/api/checkout" for e in internet.log()[before:])


def test_a_disk_that_fills_under_the_proxy_still_records_the_block(
    docker_client, sandbox_image
) -> None:
    """The host's disk is shared: filled by others while the proxy runs, the space reserved at
    start still records the block (interception.json, .stop-requested) and report.json."""
    script = Path(__file__).with_name("full_disk.py")
    out = docker_client.containers.run(
        sandbox_image,
        entrypoint=[VENV_PYTHON, "/t/full_disk.py", "/small"],
        tmpfs={"/small": "size=8m"},
        volumes={str(script.parent): {"bind": "/t", "mode": "ro"}},
        network_mode="none",
        remove=True,
    )
    result = json.loads(out.decode().strip().splitlines()[-1])
    assert result["free_before_commit"] == 0 and result["commit_exit"] != 0, result
    assert result == {**result, "interception": True, "stop_requested": True}, result
    assert result["proxy_alive"] and result["report"], result
