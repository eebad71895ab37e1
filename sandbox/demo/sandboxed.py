"""clawbench-demo --sandbox: the demo's runs in the real sandbox, one container per run.

The demo site runs in a container of its own on an internal Docker network (sandbox.demo.world);
each agent runs in a fresh sandbox container on that network, with the fail-closed firewall and
its own mitmdump + addon, whose routes send the demo hosts to the site and whose
clawbench_allow_private lets it reach the site's address. The agents are the local demo's: the
scripted python agent, a curl script, headless Chromium filling the page (when the image has
Chromium) and browser-use with its scripted model (when the image's browser-use layer is built).
Nothing is built here: a missing image is an error naming the build command.
"""

from __future__ import annotations

import secrets
import shlex
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import docker
from rich.console import Console

from sandbox.demo.browser_use import MAX_STEPS
from sandbox.demo.chromium import CHROMIUM_FLAGS
from sandbox.demo.local import RunResult
from sandbox.demo.scenarios import (
    MODEL,
    DemoRun,
    browser_use_script,
    chromium_url,
    curl_script,
    python_script,
)
from sandbox.demo.show import SiteSeen, site_seen
from sandbox.demo.world import FIRST_MODEL_PORT, MODEL_HOST, SITE_PORT, DemoWorld, start_world
from sandbox.harnesses import BROWSER_USE, harness_image
from sandbox.harnesses.models import AgentModel
from sandbox.host import (
    DEFAULT_BASE,
    AgentChoice,
    DockerExecutor,
    RunRequest,
    StaleImage,
    build_fix,
    check_image,
)
from sandbox.host import docker_api as engine
from sandbox.run_request import with_model
from sandbox.runs import PreparedRun, done_line, run_all, run_one, say

AGENT_LIMIT_S = 90
"""Seconds a demo agent may take in its container (the tasks' own limits are minutes)."""
STOP_GRACE_S = 1.0


class SandboxUnavailable(RuntimeError):
    """The sandbox demo cannot start: no engine or no image (the message names the fix)."""


@dataclass(frozen=True)
class Images:
    """The images the demo's runs start from, and the agents they can run."""

    base: str
    browser_use: str | None
    harnesses: tuple[str, ...]
    notes: tuple[str, ...]


def _build_command(image: str) -> str:
    return f"`clawbench-sandbox build --chromium --harness browser-use --tag {image}`"


def check_images(client: docker.DockerClient, image: str, wanted: tuple[str, ...]) -> Images:
    """The sandbox image (SandboxUnavailable naming the build command when it is missing or
    was built from other code), and which of the wanted agents it can run: Chromium's runs need
    an image built with Chromium, browser-use's its layer (<image>-browser-use); each missing
    one skips its runs, said."""
    fix = (
        f"build it with {_build_command(image)} (add --base-image IMAGE when {DEFAULT_BASE} "
        "cannot be pulled here), or name a built one with --image"
    )
    try:
        base = check_image(client, image, None, fix)
    except engine.EngineError as e:
        raise SandboxUnavailable(str(e)) from None
    notes = []
    harnesses = list(wanted)
    browsers = [h for h in harnesses if h in ("chromium", "browser-use")]
    if browsers and base.labels.get("io.clawbench.chromium") != "1":
        notes.append(
            f"image {image} has no Chromium: the {' and '.join(browsers)} runs are skipped "
            f"(build it with {_build_command(image)})"
        )
        harnesses = [h for h in harnesses if h not in browsers]
    bu_image = None
    if "browser-use" in harnesses:
        bu_image = harness_image(image, BROWSER_USE.name)
        try:
            check_image(client, bu_image, BROWSER_USE.name, fix)
        except StaleImage as e:  # its runs would all fail reading our files
            raise SandboxUnavailable(str(e)) from None
        except engine.EngineError:
            notes.append(
                f"no browser-use layer {bu_image}: its runs are skipped "
                f"({build_fix(bu_image, BROWSER_USE.name)})"
            )
            harnesses.remove("browser-use")
            bu_image = None
    return Images(image, bu_image, tuple(harnesses), tuple(notes))


def connect() -> docker.DockerClient:
    """The Docker engine, or SandboxUnavailable saying how to run the demo without one."""
    try:
        return engine.connect()
    except engine.EngineError as e:
        raise SandboxUnavailable(f"{e} (clawbench-demo without --sandbox needs no Docker)") from e


def chromium_command(run: DemoRun) -> str:
    """Headless Chromium filling the run's page, as the agent user runs it in the container
    (the image's Chromium, its proxy flags from the entrypoint, its CA from the NSS db)."""
    flags = " ".join(shlex.quote(f) for f in CHROMIUM_FLAGS)
    return (
        f'exec timeout {AGENT_LIMIT_S} chromium {flags} --user-data-dir="$HOME/chromium" '
        f"$CLAWBENCH_CHROMIUM_FLAGS {shlex.quote(chromium_url(run))}"
    )


@dataclass
class SandboxSetup:
    """What every container run of one sandbox demo shares."""

    client: docker.DockerClient
    images: Images
    batch_dir: Path
    ts: str
    stop: threading.Event
    batch_id: str = ""
    world: DemoWorld | None = None
    model_ports: dict[int, int] | None = None
    """Index of a browser-use run in the plan → its scripted model's port."""


def model_ports(runs: list[DemoRun]) -> dict[int, int]:
    """Each browser-use run's scripted model port, by the run's index in the plan."""
    bu = [i for i, r in enumerate(runs) if r.harness == "browser-use"]
    return {i: FIRST_MODEL_PORT + n for n, i in enumerate(bu)}


def request_for(index: int, run: DemoRun, setup: SandboxSetup) -> RunRequest:
    """The container run of one planned run: its agent, image, routes and private address."""
    world = setup.world
    assert world is not None and setup.model_ports is not None
    port = setup.model_ports.get(index)
    mitm: dict[str, str | list[str]] = {
        "clawbench_route": world.routes(port),
        "clawbench_allow_private": world.allow_private(),
    }
    env: dict[str, str] = {}
    image = setup.images.base
    if run.harness == "python":
        agent = AgentChoice("scripted", script=tuple(python_script(run, info_dir="/my-info")))
    elif run.harness == "curl":
        agent = AgentChoice("cmd", command=curl_script(run))
    elif run.harness == "chromium":
        agent = AgentChoice("cmd", command=chromium_command(run))
    else:
        assert port is not None and setup.images.browser_use is not None
        agent = AgentChoice("harness", harness_name=BROWSER_USE.name)
        image = setup.images.browser_use
        model = AgentModel(
            "scripted-browser-use",
            f"http://{MODEL_HOST}:{port}/v1",
            "openai-completions",
            "scripted",
        )
        env, mitm = with_model(
            model, MAX_STEPS, {"CLAWBENCH_TIME_LIMIT_S": str(AGENT_LIMIT_S)}, mitm
        )
    return RunRequest(
        task_dir=run.task_dir,
        agent=agent,
        out=setup.batch_dir,
        image=image,
        model=MODEL,
        harness=run.harness,
        env=env,
        network=world.network_name,
        mitm_options=mitm,
        stop_grace_s=STOP_GRACE_S,
        labels={engine.BATCH_LABEL: setup.batch_id},
        stop=setup.stop,
        ts=setup.ts,
    )


class DemoDockerExecutor(DockerExecutor):
    """The Docker executor, and the demo's own block in run-meta.json (variant, why)."""

    def __init__(self, client: docker.DockerClient, req: RunRequest, demo: DemoRun) -> None:
        super().__init__(client, req)
        self.demo = demo

    def describe(self, run: PreparedRun) -> dict[str, Any]:
        return {
            **super().describe(run),
            "demo": {"variant": self.demo.variant, "why": self.demo.why},
        }


class Sandboxed:
    """The demo in the sandbox: the engine and images checked (SandboxUnavailable when the
    demo cannot start), the agents the images can run (each missing one said), and running
    them in containers."""

    how = "sandbox containers (mitmdump + addon, fail-closed firewall)"

    def __init__(self, wanted: tuple[str, ...], image: str, console: Console) -> None:
        self.client = connect()
        self.images = check_images(self.client, image, wanted)
        for note in self.images.notes:
            console.print(f"{note}.", highlight=False)
        self.harnesses = self.images.harnesses
        self.image = image
        self.console = console

    def run(
        self, runs: list[DemoRun], batch: Path, ts: str, workers: int
    ) -> tuple[list[RunResult], bool, SiteSeen]:
        """Start the world, run every planned run in its own container `workers` at a time,
        and take the world down: (results, interrupted, what the site saw). On Ctrl-C no new
        run starts, the running containers are killed, and every container and the network of
        the demo are removed before this returns."""
        setup = SandboxSetup(self.client, self.images, batch, ts, threading.Event())
        setup.batch_id = f"{batch.name}-{secrets.token_hex(4)}"
        setup.model_ports = model_ports(runs)
        scripts = {p: browser_use_script(runs[i]) for i, p in setup.model_ports.items()}
        live = engine.LiveContainers()

        def work(item: tuple[int, DemoRun]) -> RunResult | None:
            index, run = item
            if setup.stop.is_set():
                return None
            req = replace(request_for(index, run, setup), on_container=live.add)
            say(f"START {run.harness} {run.slug} ({run.variant})")
            executor = DemoDockerExecutor(self.client, req, run)
            result = RunResult(run, run_one(req.job(), executor))
            say(f"DONE  {run.harness} {run.slug}: {done_line(result.outcome)}")
            return result

        world = setup.world = start_world(self.client, self.images.base, scripts, setup.batch_id)
        self.console.print(
            f"The demo site runs in {world.site.name} on the internal network "
            f"{world.network_name}; each run's proxy routes the demo hosts to it "
            f"(--mitm-set clawbench_route=HOST=http://{world.address}:{SITE_PORT}) and may reach "
            f"it (--allow-private {world.allow_private()[0]}).",
            highlight=False,
        )
        try:
            items = list(enumerate(runs))
            futures, interrupted = run_all(items, work, workers, setup.stop, live.kill_all)
            received = setup.world.received()
        finally:
            engine.remove_labelled(self.client, engine.BATCH_LABEL, setup.batch_id)
            setup.world.close()
        done = [f.result() for f in futures if f.done() and not f.cancelled() and not f.exception()]
        return [r for r in done if r is not None], interrupted, site_seen(received, runs)


__all__ = ["Images", "SandboxUnavailable", "Sandboxed", "check_images", "chromium_command"]
