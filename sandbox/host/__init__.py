"""The host side of the sandbox: the image build (`image`), the Docker SDK calls (`docker_api`),
what goes into a container before it starts (`payload`), and the executor that runs one task in
a container (`executor.DockerExecutor`)."""

from __future__ import annotations

from sandbox.host import docker_api
from sandbox.host.batch import BatchOptions, BatchPlan, Executed, run_batch
from sandbox.host.docker_api import EngineError, FileEntry, cut_note, files_tar
from sandbox.host.executor import DockerExecutor, RunRequest, run_task
from sandbox.host.image import (
    DEFAULT_BASE,
    DEFAULT_IMAGE,
    REPO,
    BuildError,
    StaleImage,
    build_fix,
    build_harness_image,
    build_image,
    check_image,
    host_ca_bundle,
)
from sandbox.host.incomplete import ApiStreak
from sandbox.host.limits import Limits, parse_size
from sandbox.host.payload import AgentChoice

__all__ = [
    "DEFAULT_BASE",
    "DEFAULT_IMAGE",
    "REPO",
    "AgentChoice",
    "ApiStreak",
    "BatchOptions",
    "BatchPlan",
    "BuildError",
    "DockerExecutor",
    "EngineError",
    "Executed",
    "FileEntry",
    "Limits",
    "RunRequest",
    "StaleImage",
    "build_fix",
    "build_harness_image",
    "build_image",
    "check_image",
    "cut_note",
    "docker_api",
    "files_tar",
    "host_ca_bundle",
    "parse_size",
    "run_batch",
    "run_task",
]
