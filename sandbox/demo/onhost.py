"""The demo on this machine (no Docker): the site on 127.0.0.1, each run's mitmdump and agent
as local processes (sandbox.demo.local), the tools each agent needs looked up first."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from sandbox.demo.browser_use import find_browser_use
from sandbox.demo.chromium import find_chromium
from sandbox.demo.local import RunResult, Setup, execute
from sandbox.demo.scenarios import DemoRun
from sandbox.demo.show import SiteSeen, site_seen
from sandbox.demo.site import DemoSite
from sandbox.harnesses.models import AgentModel
from sandbox.runs import run_all

BROWSERS = ("chromium", "browser-use")


class OnHost:
    """Which agents can run here (each missing tool skips its runs, said), and running them."""

    image = "none (clawbench-demo runs on the host)"
    how = "mitmdump -s proxy_addon/clawbench.py"

    def __init__(self, wanted: tuple[str, ...], console: Console) -> None:
        self.chromium = find_chromium() if any(h in BROWSERS for h in wanted) else None
        harnesses = list(wanted)
        if self.chromium is None and any(h in BROWSERS for h in wanted):
            console.print("Chromium not found: the browser agents' runs are skipped.")
            harnesses = [h for h in harnesses if h not in BROWSERS]
        self.browser_use = find_browser_use()
        if "browser-use" in harnesses and self.browser_use is None:
            console.print(
                "browser-use not installed: its runs are skipped "
                "(scripts/setup.sh --with-browser-use)."
            )
            harnesses.remove("browser-use")
        if "curl" in harnesses and shutil.which("curl") is None:
            console.print("curl not found: the curl agent's runs are skipped.")
            harnesses.remove("curl")
        self.harnesses = tuple(harnesses)
        self.agent_model: AgentModel | None = None

    def run(
        self, runs: list[DemoRun], batch: Path, ts: str, workers: int
    ) -> tuple[list[RunResult], bool, SiteSeen]:
        """Every run against the demo site, `workers` at a time: (results, interrupted, what
        the site saw). On Ctrl-C or SIGTERM no new run starts and each run in flight ends its
        agent's session and its mitmdump before this returns (a second Ctrl-C does not cut
        that short)."""
        from mitmproxy.certs import CertStore

        confdir = batch / ".mitmproxy"
        CertStore.from_store(confdir, "mitmproxy", 2048)  # one CA for every run, made once
        setup = Setup(
            batch,
            [],
            confdir,
            ts,
            self.chromium,
            browser_use=self.browser_use,
            agent_model=self.agent_model,
        )
        with DemoSite() as site:
            setup = replace(setup, routes=site.routes)
            futures, interrupted = run_all(
                runs, lambda run: execute(run, setup), workers, setup.stop
            )
            setup.stop.set()
            received = site.received
        done = [f for f in futures if f.done() and not f.cancelled() and f.exception() is None]
        return [f.result() for f in done], interrupted, site_seen(received, runs)


__all__ = ["BROWSERS", "OnHost"]
