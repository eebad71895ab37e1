"""The proxy refuses to start disarmed: each bad setup exits non-zero with one line naming it,
under the sandbox's launch (clawbench-proxy) and under `mitmdump -s proxy_addon/clawbench.py`.

All cases start at once (a proxy takes seconds to start; they are independent), then each is
checked: non-zero exit, exactly one `clawbench:` line that names the problem, no .proxy-ready.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from proxy_addon.addon import proxy_argv, start_proxy
from proxy_addon.addon.launcher import ADDON, MASTER, mitmdump_path
from tests.proxy.conftest import write_task

GOOD = r"shop\.clawbench\.test/api/checkout"

# name → (extra mitmdump args, the words the error line must contain)
CASES: dict[str, tuple[list[str], list[str]]] = {
    "missing task option": ([], ["clawbench_task is not set"]),
    "task given twice": (["--set", "clawbench_task={tmp}/good"], ["clawbench_task", "2 times"]),
    "task file not found": (["--set", "clawbench_task={tmp}/nope/task.json"], ["nope/task.json"]),
    "invalid task": (["--set", "clawbench_task={tmp}/badkey/task.json"], ["bogus", "unknown key"]),
    "not JSON": (["--set", "clawbench_task={tmp}/notjson/task.json"], ["invalid JSON"]),
    "bad regex": (
        ["--set", "clawbench_task={tmp}/badre/task.json"],
        ["url_pattern", "compile", "escape literal ( ) [ ] ? + * with a backslash"],
    ),
    "null body filter": (
        ["--set", "clawbench_task={tmp}/nullbody/task.json"],
        ["eval_schema.body", "must be an object, got null", "remove the key"],
    ),
    "missing data option": (["--set", "clawbench_data="], ["clawbench_data is not set"]),
    "data dir not writable": (["--set", "clawbench_data=/proc/clawbench"], ["not writable"]),
    "stream_large_bodies": (["--set", "stream_large_bodies=1m"], ["stream_large_bodies"]),
    "ignore_hosts": (["--set", "ignore_hosts=example\\.com"], ["ignore_hosts"]),
    "allow_hosts": (["--set", "allow_hosts=example\\.com"], ["allow_hosts"]),
    "tcp_hosts": (["--set", "tcp_hosts=example\\.com"], ["tcp_hosts"]),
    # mitmproxy would drop the whole script for a value that does not parse and run unarmed.
    "status not an int": (["--set", "clawbench_block_status=abc"], ["clawbench_block_status"]),
    "max_body not an int": (["--set", "clawbench_max_body=1m"], ["clawbench_max_body"]),
    "status out of range": (["--set", "clawbench_block_status=99"], ["200 to 599"]),
    "unknown block mode": (["--set", "clawbench_block_mode=drop"], ["clawbench_block_mode"]),
    "misspelt option": (["--set", "clawbench_blok_mode=respond"], ["clawbench_blok_mode"]),
    "bad route": (["--set", "clawbench_route=shop.clawbench.test"], ["clawbench_route"]),
    # raw TCP relaying passes bytes no hook sees (mitmproxy's default on is turned off; an
    # explicit on is refused)
    "rawtcp on": (["--set", "rawtcp=true"], ["rawtcp is on", "Unset it"]),
    "bad allow list": (["--set", "clawbench_allow_private=intranet"], ["clawbench_allow_private"]),
}


LAUNCHES = ("clawbench-proxy", "mitmdump")


def launch_head(launch: str) -> list[str]:
    """The command up to the options: the sandbox's proxy, or stock mitmdump with the addon."""
    return proxy_argv(sys.executable, [], {}, quiet=True, stock=launch == "mitmdump")


@dataclass
class Outcome:
    code: int
    lines: list[str]
    data: Path


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Outcome]:
    from mitmproxy.certs import CertStore

    tmp = tmp_path_factory.mktemp("startup")
    CertStore.from_store(tmp / "conf", "mitmproxy", 2048)
    write_task(tmp / "good", GOOD)
    bad = write_task(tmp / "badkey", GOOD)
    bad.write_text(bad.read_text().replace('"time_limit"', '"bogus": 1, "time_limit"'))
    write_task(tmp / "badre", r"shop(\.clawbench")
    nullbody = write_task(tmp / "nullbody", GOOD)
    nullbody.write_text(nullbody.read_text().replace('"method"', '"body": null, "method"'))
    (tmp / "notjson").mkdir()
    (tmp / "notjson" / "task.json").write_text("{nope")
    procs = {}
    cases = [(launch, name) for launch in LAUNCHES for name in CASES]
    for i, (launch, name) in enumerate(cases):
        extra = CASES[name][0]
        data = tmp / f"data{i}"
        args = [*launch_head(launch), "--set", f"confdir={tmp / 'conf'}"]
        args += ["--mode", "regular@127.0.0.1:0"]
        extra = [a.replace("{tmp}", str(tmp)) for a in extra]
        # The case's own value replaces the good one (given twice on purpose in one case).
        own_task = "clawbench_task=" in " ".join(extra)
        if name == "task given twice" or (not own_task and name != "missing task option"):
            args += ["--set", f"clawbench_task={tmp / 'good'}"]
        if "clawbench_data=" not in " ".join(extra):
            args += ["--set", f"clawbench_data={data}"]
        args += extra
        out = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        procs[launch, name] = (out, data)
    results = {}
    deadline = time.monotonic() + 300  # 2 x 22 proxies starting at once on a busy machine
    for key, (proc, data) in procs.items():
        try:
            stdout, _ = proc.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()  # still running: the case failed to refuse; record it as such
            stdout, _ = proc.communicate()
        results[key] = Outcome(proc.returncode, stdout.splitlines(), data)
    return results


@pytest.mark.parametrize("launch", LAUNCHES)
@pytest.mark.parametrize("case", list(CASES))
def test_refuses_to_start(outcomes: dict[tuple[str, str], Outcome], launch: str, case: str) -> None:
    outcome = outcomes[launch, case]
    assert outcome.code not in (0, -9), f"{case}: {launch} ran: {outcome.lines}"
    ours = [line for line in outcome.lines if "clawbench:" in line]
    assert len(ours) == 1, outcome.lines
    for word in CASES[case][1]:
        assert word in ours[0], ours[0]
    assert "Traceback" not in "\n".join(outcome.lines)
    assert not (outcome.data / ".proxy-ready").exists()


def test_good_setup_starts_and_declares_its_options(tmp_path: Path) -> None:
    """The control case: the same command line with a good task starts and says it is ready."""
    task = write_task(tmp_path / "good", GOOD)
    with start_proxy(task, tmp_path / "data") as p:
        assert p.proc.poll() is None and p.ready.listen and not p.ready.log_only
        assert p.ready.task_sha256 and p.ready.versions["mitmproxy"]
        dump = subprocess.run(
            [mitmdump_path(), "-s", str(ADDON), "--options"], capture_output=True, text=True
        )
    for name in ("clawbench_task", "clawbench_data", "clawbench_block_mode"):
        assert name in dump.stdout
    assert "How a blocked client is answered" in dump.stdout  # help text is declared


def test_sandbox_proxy_refuses_options_of_addons_it_does_not_load(tmp_path: Path) -> None:
    """clawbench-proxy loads only the built-ins it needs: an option of one it leaves out (the
    anticache addon's, mitmdump's dumper's) is an error naming it, not silently ignored."""
    task = write_task(tmp_path / "good", GOOD)
    for option in ("anticache=true", "flow_detail=2"):
        args = [*launch_head("clawbench-proxy"), "--mode", "regular@127.0.0.1:0"]
        args += ["--set", f"clawbench_task={task}", "--set", f"clawbench_data={tmp_path / 'd'}"]
        args += ["--set", f"confdir={tmp_path / 'conf'}", "--set", option]
        done = subprocess.run(args, capture_output=True, text=True, timeout=60)
        name = option.split("=")[0]
        assert done.returncode == 2, done.stderr
        assert f"unknown option(s) {name}" in done.stderr
        assert not (tmp_path / "d" / ".proxy-ready").exists()


LOOP_PROBE = """
import asyncio, logging, uvloop
class Probe:
    def running(self):
        uv = isinstance(asyncio.get_running_loop(), uvloop.Loop)
        logging.getLogger("probe").warning("loop=%s", "uvloop" if uv else "asyncio")
addons = [Probe()]
"""


@pytest.mark.parametrize("stock_loop", [False, True])
def test_sandbox_proxy_runs_on_uvloop_unless_told(tmp_path: Path, stock_loop: bool) -> None:
    """uvloop is the event loop where it is installed; --stock-loop gives asyncio's own. A -s
    script (here a probe) runs beside the addon, which is armed and ready all the same."""
    pytest.importorskip("uvloop", reason="uvloop is not installed here (pip install uvloop)")
    task = write_task(tmp_path / "good", GOOD)
    probe = tmp_path / "probe.py"
    probe.write_text(LOOP_PROBE)
    extra = ["-s", str(probe), *(["--stock-loop"] if stock_loop else [])]
    with start_proxy(task, tmp_path / "data", quiet=False, extra_args=extra) as p:
        assert p.proc.poll() is None and p.ready.listen
    log = p.log_path.read_text()
    expected = "loop=asyncio" if stock_loop else "loop=uvloop"
    assert expected in log, log
    assert MASTER in p.proc.args
