"""The browser-use harness's driver: one task, one agent run, its trace kept.

Runs inside the agent container under the harness's own venv (stdlib + browser-use only; nothing
of clawbench is importable here). Reads what the sandbox gives every agent:

    CLAWBENCH_INSTRUCTION       the task (with the /my-info listing appended)
    CLAWBENCH_AGENT_MODEL       the models.yaml entry's name (the model id sent to the API)
    CLAWBENCH_AGENT_BASE_URL    its OpenAI-compatible base URL
    CLAWBENCH_AGENT_API_KEY     its key (never written anywhere)
    CLAWBENCH_AGENT_MAX_STEPS   the step cap
    CLAWBENCH_TIME_LIMIT_S      the task's time limit (the sandbox stops the agent at it)
    CLAWBENCH_AGENT_OUT         where the trace goes (copied to the run's agent/ dir)
    CLAWBENCH_PROXY_URL         the interception proxy (Chromium's --proxy-server)
    CLAWBENCH_CHROMIUM_EXTRA_ARGS  more Chromium flags (the demo pins the proxy's CA with one)

and writes $CLAWBENCH_AGENT_OUT/trace.jsonl and result.json (the final answer, whether the agent
claims success, steps, versions). The trace has a line when a step's actions start (goal,
actions, URL), one when its result comes (errors), one naming the screenshot of the page after it
(screenshots/step-N.jpg), and on the sandbox's stop one for the step in flight: a run stopped by
its blocked commit ends with the step that sent it. The model's
calls go through the proxy like every other request (HTTPS_PROXY), which counts their tokens.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

# Before browser_use is imported: no telemetry, no cloud, no version check, no extensions
# fetched, no cost lookup (every one of them would try the internet).
os.environ.update(
    ANONYMIZED_TELEMETRY="false",
    BROWSER_USE_CLOUD_SYNC="false",
    BROWSER_USE_VERSION_CHECK="false",
    BROWSER_USE_DISABLE_EXTENSIONS="1",
    BROWSER_USE_CALCULATE_COST="false",
    BROWSER_USE_LOGGING_LEVEL=os.environ.get("BROWSER_USE_LOGGING_LEVEL", "info"),
)

import websockets
from browser_use import Agent, BrowserProfile, BrowserSession, ChatOpenAI
from browser_use.agent.views import AgentOutput
from browser_use.browser.profile import ProxySettings
from browser_use.browser.views import BrowserStateSummary
from browser_use.browser.watchdogs import aboutblank_watchdog

CHROMIUM = os.environ.get("CLAWBENCH_CHROMIUM", "/usr/bin/chromium")


def _offline() -> None:
    """browser-use's two reaches outside the task: an animation page it loads from the web on
    about:blank, and the CDP websocket taking the proxy variables (Chromium's own port on
    loopback must be reached directly)."""

    async def no_animation(self: Any, *args: Any, **kwargs: Any) -> None:
        return None

    aboutblank_watchdog.AboutBlankWatchdog._show_dvd_screensaver_loading_animation_cdp = (
        no_animation
    )
    connect = websockets.connect

    def direct(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("proxy", None)
        return connect(*args, **kwargs)

    import cdp_use.client

    cdp_use.client.websockets.connect = direct  # type: ignore[attr-defined]


SCREENSHOTS = 60
"""Steps with a screenshot (the first ones); agent/ is capped at 32 MB in all."""
SCREENSHOT_BYTES = 400_000
"""A larger capture is not kept (a JPEG of the viewport is far smaller)."""


class Trace:
    """trace.jsonl, one line per event of a step as it happens (`actions` when the model's
    actions start, `result` when the step ends, `screenshot` of the page after it, `stopped` for
    the step in flight when the sandbox stops the agent), flushed at once; result.json at the
    end.

    Every line is {step, time, event, ...}: a new kind of line is one more `_line` call."""

    def __init__(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.out = out
        self.steps = 0
        self.in_flight = False
        self.file = (out / "trace.jsonl").open("a", encoding="utf-8")

    def _line(self, event: str, **fields: Any) -> None:
        if self.file.closed:
            return
        line = {"step": self.steps, "time": time.time(), "event": event, **fields}
        self.file.write(json.dumps(line, default=str) + "\n")
        self.file.flush()

    async def step_start(self, agent: Agent) -> None:
        self.steps += 1
        self.in_flight = True

    def actions(self, state: BrowserStateSummary, output: AgentOutput, n_steps: int) -> None:
        """The model's actions for this step, written before any of them runs."""
        self._line(
            "actions",
            url=getattr(state, "url", None),
            goal=output.next_goal,
            evaluation=output.evaluation_previous_goal,
            actions=[a.model_dump(exclude_none=True) for a in output.action],
        )

    async def step_end(self, agent: Agent) -> None:
        item = agent.history.history[-1] if agent.history.history else None
        self.in_flight = False
        self._line(
            "result",
            url=getattr(item.state, "url", None) if item else None,
            errors=[r.error for r in item.result if r.error] if item else [],
        )
        await self.screenshot(agent.browser_session)

    async def screenshot(self, browser: BrowserSession) -> None:
        """The page after the step as a JPEG in screenshots/, for the report's run page: a
        `screenshot` line names it, or says why there is none (the step stands either way)."""
        if self.steps > SCREENSHOTS or self.file.closed:
            return
        name = f"screenshots/step-{self.steps}.jpg"
        try:
            data = await asyncio.wait_for(browser.take_screenshot(format="jpeg", quality=50), 5)
        except Exception as e:  # a page that cannot be captured now (closing, navigating)
            self._line("screenshot", error=f"{type(e).__name__}: {e}"[:300])
            return
        if len(data) > SCREENSHOT_BYTES:
            self._line("screenshot", error=f"{len(data)} bytes: not kept")
            return
        (self.out / "screenshots").mkdir(exist_ok=True)
        (self.out / name).write_bytes(data)
        self._line("screenshot", path=name)

    def finish(self, text: str, success: bool | None, error: str | None = None) -> None:
        if self.file.closed:  # written already (the sandbox's stop came first)
            return
        if self.in_flight:
            self._line("stopped", reason=error)
        result = {
            "harness": "browser-use",
            "version": metadata.version("browser-use"),
            "success": success,
            "text": text,
            "steps": self.steps,
            "error": error,
        }
        tmp = self.out / "result.json.tmp"
        tmp.write_text(json.dumps(result, indent=1), encoding="utf-8")
        tmp.replace(self.out / "result.json")
        self.file.close()


def _browser() -> BrowserSession:
    proxy = os.environ.get("CLAWBENCH_PROXY_URL")
    extra = shlex.split(os.environ.get("CLAWBENCH_CHROMIUM_EXTRA_ARGS", ""))
    profile = BrowserProfile(
        executable_path=CHROMIUM,
        headless=True,
        chromium_sandbox=False,
        enable_default_extensions=False,
        user_data_dir=None,
        args=["--disable-quic", "--no-first-run", "--disable-background-networking", *extra],
        proxy=ProxySettings(server=proxy, bypass="<-loopback>") if proxy else None,
    )
    return BrowserSession(browser_profile=profile)


async def run(trace: Trace) -> int:
    env = os.environ
    llm = ChatOpenAI(
        model=env["CLAWBENCH_AGENT_MODEL"],
        base_url=env["CLAWBENCH_AGENT_BASE_URL"],
        api_key=env["CLAWBENCH_AGENT_API_KEY"],
        temperature=0,
    )
    agent = Agent(
        task=env["CLAWBENCH_INSTRUCTION"],
        llm=llm,
        browser_session=_browser(),
        use_vision=False,
        use_judge=False,
        enable_planning=False,
        calculate_cost=False,
        enable_signal_handler=False,  # SIGTERM is the sandbox's stop: main() handles it
        register_new_step_callback=trace.actions,
        available_file_paths=[str(p) for p in Path("/my-info").glob("*") if p.is_file()],
    )
    budget = float(env.get("CLAWBENCH_TIME_LIMIT_S", "600")) - 5
    steps = int(env.get("CLAWBENCH_AGENT_MAX_STEPS", "30"))
    try:
        history = await asyncio.wait_for(
            agent.run(max_steps=steps, on_step_start=trace.step_start, on_step_end=trace.step_end),
            timeout=budget,
        )
    except TimeoutError:
        trace.finish("", None, "time limit reached")
        return 1
    except asyncio.CancelledError:  # SIGTERM: the sandbox stops the agent (a commit was blocked)
        trace.finish("", None, "stopped by the sandbox")
        return 143
    success = history.is_successful() if history.is_done() else None
    trace.finish(
        history.final_result() or "",
        success,
        "; ".join(e for e in history.errors() if e)[:2000] or None,
    )
    return 0 if history.is_done() else 1


async def _until_stopped(trace: Trace) -> int:
    """run(); SIGTERM (the sandbox's stop, a few seconds before SIGKILL) writes result.json at
    once, then cancels the agent."""
    task = asyncio.current_task()
    assert task is not None

    def stop() -> None:
        trace.finish("", None, "stopped by the sandbox")
        task.cancel()

    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop)
    return await run(trace)


def main() -> int:
    _offline()
    out = Path(os.environ.get("CLAWBENCH_AGENT_OUT") or "agent-out")
    return asyncio.run(_until_stopped(Trace(out)))


if __name__ == "__main__":
    sys.exit(main())
