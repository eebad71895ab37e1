"""Fixtures for the sandbox tests: a Docker engine, the sandbox image, the closed test network.

The image comes from CLAWBENCH_SANDBOX_IMAGE (CI builds it); without the variable, a session
fixture builds clawbench-sandbox:test itself when an engine runs. Without an engine every Docker
test skips, unless CLAWBENCH_CI=1 makes that a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import require

CASES = Path(__file__).resolve().parent / "cases"


def closed_request(internet: Any, image: str, out: Path, case: str, agent: Any, **over: Any) -> Any:
    """A RunRequest for a test case on the closed network: the fake site's CA trusted, its
    private ranges allowed, a short stop grace; `over` changes any field."""
    from sandbox.host.executor import RunRequest

    fields: dict[str, Any] = dict(
        task_dir=CASES / case,
        agent=agent,
        out=out,
        image=image,
        network=internet.network_name,
        upstream_ca=internet.ca,
        stop_grace_s=2,
        mitm_options={"clawbench_allow_private": internet.subnets},
    )
    fields.update(over)
    return RunRequest(**fields)


HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")


def _engine():
    try:
        import docker

        client = docker.from_env()
        client.ping()
        return client
    except Exception:  # no SDK, no socket, no daemon: all mean "no engine here"
        return None


@pytest.fixture(scope="session")
def docker_client():
    client = _engine()
    require(client is not None, "a running Docker engine")
    return client


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:
    """The image under test: $CLAWBENCH_SANDBOX_IMAGE, else built here once per session."""
    import docker.errors

    name = os.environ.get("CLAWBENCH_SANDBOX_IMAGE")
    if name:
        try:
            docker_client.images.get(name)
        except docker.errors.ImageNotFound:
            pytest.fail(f"CLAWBENCH_SANDBOX_IMAGE={name} is not a local image")
        return name
    from sandbox.host.image import build_image

    name = "clawbench-sandbox:test"
    base = "clawbench-base:trixie"
    try:
        docker_client.images.get(base)
    except docker.errors.ImageNotFound:
        base = "python:3.12-slim"
    bundle = HOST_CA_BUNDLE if HOST_CA_BUNDLE.is_file() else None
    build_image(docker_client, tag=name, base_image=base, ca_bundle=bundle)
    return name


@pytest.fixture(scope="session")
def internet(docker_client, sandbox_image, tmp_path_factory) -> Iterator[object]:
    """The internal network with the fake site (shop.clawbench.test) on it."""
    from tests.sandbox.topology import start_internet

    world = start_internet(docker_client, sandbox_image, tmp_path_factory.mktemp("internet"))
    yield world
    world.close()
