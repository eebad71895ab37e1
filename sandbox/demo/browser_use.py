"""The demo's browser-use runs: the real browser-use agent (its own venv, the harness's driver)
on this machine, its model either scripted (sandbox.demo.scripted_model, answering
with the run's form) or a real one named with --agent-model.

The model's calls go through the run's proxy like every other request: a route sends the
scripted model's host to its port, a real model's host to itself (the demo's catch-all route
would otherwise send it to the demo site). The proxy is given the model's options as
`clawbench-sandbox run` gives them (sandbox.run_request.with_model): its host among the model
hosts and what the run's own calls look like, so that a model API failing them ends the run
`model_api_failure` (docs/formats.md).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from sandbox.demo.scenarios import DemoRun, browser_use_script
from sandbox.demo.scripted_model import ScriptedServer
from sandbox.harnesses import BROWSER_USE
from sandbox.harnesses.models import AgentModel
from sandbox.host import REPO
from sandbox.run_request import with_model

DRIVER = BROWSER_USE.directory / "driver.py"
TIME_LIMIT_S = 90.0
"""A browser-use run's time limit in the demo (Chromium's start and a few model calls)."""
MAX_STEPS = 8
"""A browser-use run's step cap in the demo (the scripted model needs three)."""


def find_browser_use() -> str | None:
    """The python of a browser-use venv: $CLAWBENCH_BROWSER_USE_PYTHON, else .venv-browser-use
    (scripts/setup.sh --with-browser-use)."""
    named = os.environ.get("CLAWBENCH_BROWSER_USE_PYTHON")
    local = REPO / ".venv-browser-use" / "bin" / "python"
    for candidate in (named, str(local)):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


@dataclass(frozen=True)
class Launch:
    """How to start one browser-use run: argv, its model's variables, the proxy's options."""

    argv: list[str]
    env: dict[str, str]
    proxy_options: dict[str, str | list[str]]
    """The run's routes (its model's first) and the model's options (with_model)."""


def _route(base_url: str) -> str:
    url = urlsplit(base_url)
    port = url.port or (443 if url.scheme == "https" else 80)
    return f"{url.hostname}={url.scheme}://{url.hostname}:{port}"


@contextlib.contextmanager
def launch(
    demo: DemoRun, python: str, instruction: str, model: AgentModel | None, routes: list[str]
) -> Iterator[Launch]:
    """A browser-use run's launch (routes: the demo's own), with its scripted model serving
    while it runs."""
    server = None
    if model is None:
        server = ScriptedServer(browser_use_script(demo)).start()
        model = AgentModel("scripted-browser-use", server.url, "openai-completions", "scripted")
    try:
        run_env = {
            "CLAWBENCH_INSTRUCTION": instruction,
            "CLAWBENCH_TIME_LIMIT_S": str(int(TIME_LIMIT_S)),
        }
        route = {"clawbench_route": [_route(model.base_url), *routes]}
        env, options = with_model(model, MAX_STEPS, run_env, route)
        yield Launch([python, str(DRIVER)], env, options)
    finally:
        if server is not None:
            server.shutdown()
            server.server_close()


__all__ = ["MAX_STEPS", "TIME_LIMIT_S", "Launch", "find_browser_use", "launch"]
