"""The sandbox demo's closed world: an internal Docker network and the demo site's container on
it, with the scripted models of the browser-use runs beside the site.

Nothing on the network reaches anything else: the network is `--internal`, the site container is
the sandbox image running `python -m sandbox.demo.site` (our own code, nothing pulled), and the
agents' proxies reach it through routes. Everything the demo creates carries DEMO_LABEL, and
close() removes it.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors

from sandbox.demo.site import HOSTS, Received
from sandbox.host import EngineError, FileEntry, files_tar

DEMO_LABEL = "io.clawbench.demo"
SITE_PORT = 8080
MODEL_HOST = "model.clawbench.test"
"""The browser-use runs' scripted model, as their models.yaml-style base URL names it."""
FIRST_MODEL_PORT = 9001
PYTHON = "/opt/clawbench/venv/bin/python"
LOG = "/tmp/site.jsonl"
READY_S = 120
"""Seconds the site container may take to answer (a loaded machine starts it slowly)."""


@dataclass
class DemoWorld:
    """The network and the site container; routes() tells a run's proxy how to reach them."""

    client: docker.DockerClient
    network: Any
    site: Any
    address: str

    @property
    def network_name(self) -> str:
        return str(self.network.name)

    def routes(self, model_port: int | None = None) -> list[str]:
        """clawbench_route values: every demo host, and every other host too (a browser's own
        traffic gets the site's 404), to the site; the run's scripted model to its port."""
        site = f"http://{self.address}:{SITE_PORT}"
        model = [f"{MODEL_HOST}=http://{self.address}:{model_port}"] if model_port else []
        return [*model, *(f"{host}={site}" for host in (*HOSTS, "*"))]

    def allow_private(self) -> list[str]:
        """clawbench_allow_private: the site container's address, the one private place the
        proxy may reach."""
        return [f"{self.address}/32"]

    def received(self) -> list[Received]:
        """Every request the site answered so far."""
        code, out = self.site.exec_run(["cat", LOG])
        if code != 0:
            return []
        return [Received.from_json(line) for line in out.decode().splitlines() if line.strip()]

    def close(self) -> None:
        with contextlib.suppress(docker.errors.NotFound):
            self.site.remove(force=True)
        with contextlib.suppress(docker.errors.NotFound):
            self.network.remove()


def start_world(
    client: docker.DockerClient, image: str, models: dict[int, list[dict[str, Any]]], label: str
) -> DemoWorld:
    """Create the internal network and start the site (and one scripted model per port of
    `models`); return once the site is ready. EngineError says what failed."""
    name = f"clawbench-demo-{secrets.token_hex(3)}"
    labels = {DEMO_LABEL: label}
    try:
        network = client.networks.create(name, driver="bridge", internal=True, labels=labels)
    except docker.errors.DockerException as e:
        raise EngineError(f"cannot create the demo's internal network: {e}") from e
    scripts = [
        FileEntry(f"world/model-{port}.json", json.dumps(steps).encode())
        for port, steps in models.items()
    ]
    argv = [PYTHON, "-m", "sandbox.demo.site", "--port", str(SITE_PORT), "--log", LOG]
    argv += [a for port in models for a in ("--model", f"{port}=/world/model-{port}.json")]
    try:
        site = client.containers.create(
            image,
            entrypoint=argv,
            name=f"{name}-site",
            user="nobody",
            detach=True,
            labels=labels,
            network=name,
        )
    except docker.errors.DockerException as e:
        network.remove()
        raise EngineError(f"cannot create the demo site's container from {image}: {e}") from e
    world = DemoWorld(client, network, site, "")
    try:
        if scripts:
            site.put_archive("/", files_tar([FileEntry("world", mode=0o755), *scripts]))
        site.start()
        world.address = _ready(site, name)
    except BaseException:
        world.close()
        raise
    return world


def _ready(site: Any, network: str) -> str:
    """Wait for the site's ready line; its address on the network."""
    deadline = time.monotonic() + READY_S
    while b"demo site: ready" not in site.logs():
        site.reload()
        if site.status == "exited" or time.monotonic() > deadline:
            tail = site.logs().decode(errors="replace").strip().splitlines()[-3:]
            raise EngineError(f"the demo site did not start: {' | '.join(tail) or 'no output'}")
        time.sleep(0.1)
    site.reload()
    return str(site.attrs["NetworkSettings"]["Networks"][network]["IPAddress"])


__all__ = ["DEMO_LABEL", "FIRST_MODEL_PORT", "MODEL_HOST", "DemoWorld", "start_world"]
