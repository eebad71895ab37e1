"""Fixtures for the sandbox tests: a Docker engine, the sandbox image, the closed test network.

The image comes from CLAWBENCH_SANDBOX_IMAGE (CI builds it); without the variable, a session
fixture builds clawbench-sandbox:test itself when an engine runs, from a base image that is local
or pullable. Without an engine, or without any base, every Docker test skips with one reason,
unless CLAWBENCH_CI=1 makes that a failure.
"""

from __future__ import annotations

import io
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox.container.contract import CONTRACT_LABEL
from sandbox.host import StaleImage, check_image
from sandbox.host.image import HARNESS_LABEL
from tests.conftest import require

CASES = Path(__file__).resolve().parent / "cases"


def closed_request(internet: Any, image: str, out: Path, case: str, agent: Any, **over: Any) -> Any:
    """A RunRequest for a test case on the closed network: the fake site's CA trusted, its
    private ranges allowed, a short stop grace; `over` changes any field."""
    from sandbox.host import RunRequest

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


def closed_args(internet: Any, image: str, out: Path) -> list[str]:
    """closed_request as run/batch options: the image, the closed network, the site's CA, its
    private ranges allowed, --out, a short stop grace."""
    return [
        "--image",
        image,
        "--network",
        internet.network_name,
        "--upstream-ca",
        str(internet.ca),
        "--out",
        str(out),
        "--stop-grace",
        "2",
        *(a for subnet in internet.subnets for a in ("--allow-private", subnet)),
    ]


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


BASE_IMAGES = ("clawbench-base:trixie", "python:3.12-slim")
"""What the tests build their image from when CLAWBENCH_SANDBOX_IMAGE is unset, first found
first: a local debootstrap base (as CI makes), else the default base, pulled if it can be."""


def base_candidates() -> tuple[str, ...]:
    """$CLAWBENCH_BASE_IMAGE alone when set, else BASE_IMAGES."""
    named = os.environ.get("CLAWBENCH_BASE_IMAGE")
    return (named,) if named else BASE_IMAGES


def available_base(client: Any, candidates: tuple[str, ...]) -> str | None:
    """The first candidate that is local or can be pulled; None when none is."""
    import docker.errors

    for name in candidates:
        try:
            client.images.get(name)
            return name
        except docker.errors.ImageNotFound:
            pass
        try:
            client.images.pull(name)
            return name
        except docker.errors.APIError:  # no registry here, or no such image in it
            continue
    return None


def no_image_reason(candidates: tuple[str, ...]) -> str:
    """Why the Docker tests cannot run, and how to give them an image."""
    return (
        "a sandbox image (CLAWBENCH_SANDBOX_IMAGE is not set, and no base image to build one "
        f"from is local or pullable: {', '.join(candidates)}; build one from a local base with "
        "`.venv/bin/clawbench-sandbox build --base-image YOUR-LOCAL-DEBIAN --chromium --tag "
        "clawbench-sandbox:test` and run the tests with "
        "CLAWBENCH_SANDBOX_IMAGE=clawbench-sandbox:test, or name the base with "
        "CLAWBENCH_BASE_IMAGE=YOUR-LOCAL-DEBIAN)"
    )


@pytest.fixture(scope="session")
def sandbox_image(docker_client) -> str:
    """The image under test: $CLAWBENCH_SANDBOX_IMAGE, else built here once per session from a
    base that is local or pullable; else every Docker test skips with one reason (CLAWBENCH_CI=1:
    fails)."""
    import docker.errors

    name = os.environ.get("CLAWBENCH_SANDBOX_IMAGE")
    if name:
        try:
            docker_client.images.get(name)
        except docker.errors.ImageNotFound:
            pytest.fail(f"CLAWBENCH_SANDBOX_IMAGE={name} is not a local image")
        try:  # one failure here, not every run ending container_failed
            check_image(docker_client, name, None)
        except StaleImage as e:
            pytest.fail(f"CLAWBENCH_SANDBOX_IMAGE={name}: {e}")
        return name
    from sandbox.host import build_image

    candidates = base_candidates()
    base = available_base(docker_client, candidates)
    require(base is not None, no_image_reason(candidates))
    assert base is not None
    name = "clawbench-sandbox:test"
    bundle = HOST_CA_BUNDLE if HOST_CA_BUNDLE.is_file() else None
    build_image(docker_client, tag=name, base_image=base, ca_bundle=bundle)
    return name


@pytest.fixture(scope="session")
def stale_images(docker_client, sandbox_image) -> Iterator[tuple[str, str]]:
    """The sandbox image as older code built it: only its io.clawbench.contract label differs
    (another code's hash on a browser-use layer's tag; none at all)."""
    token = secrets.token_hex(3)
    other, unlabelled = f"{sandbox_image}-old{token}-browser-use", f"{sandbox_image}-nolabel{token}"
    for tag, labels in (
        (other, f"{CONTRACT_LABEL}=0123456789abcdef {HARNESS_LABEL}=browser-use"),
        (unlabelled, f'{CONTRACT_LABEL}=""'),
    ):
        dockerfile = f"FROM {sandbox_image}\nLABEL {labels}\n".encode()
        docker_client.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, rm=True)
    yield other, unlabelled
    for tag in (other, unlabelled):
        docker_client.images.remove(tag)


@pytest.fixture(scope="session")
def internet(docker_client, sandbox_image, tmp_path_factory) -> Iterator[object]:
    """The internal network with the fake site (shop.clawbench.test) on it."""
    from tests.sandbox.topology import start_internet

    world = start_internet(docker_client, sandbox_image, tmp_path_factory.mktemp("internet"))
    yield world
    world.close()
