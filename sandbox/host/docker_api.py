"""The Docker SDK calls of a run: create the container, put its files in, wait, copy results out.

Files travel by put_archive/get_archive, not bind mounts: ownership and modes inside the
container are exactly what the tar says (task.json for `proxy` only, the agent's files
read-only), and what lands on the host is owned by whoever runs the runner.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import docker
import docker.errors
import requests.exceptions
import urllib3.exceptions

LABEL = "io.clawbench.sandbox"
"""Every container the runner starts carries it (value: the run directory) for cleanup."""
BATCH_LABEL = "io.clawbench.batch"


class EngineError(RuntimeError):
    """Docker refused or failed an operation; the message says which and why."""


@dataclass(frozen=True)
class FileEntry:
    """One file (data) or directory (data None) to create in the container."""

    path: str
    data: bytes | None = None
    mode: int = 0o644
    uid: int = 0
    gid: int = 0


def files_tar(entries: Iterable[FileEntry]) -> bytes:
    """A tar of entries, rooted at /, with the owners and modes they ask for."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.path.lstrip("/"))
            info.mode, info.uid, info.gid, info.mtime = entry.mode, entry.uid, entry.gid, 0
            if entry.data is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(entry.data)
                tar.addfile(info, io.BytesIO(entry.data))
    return raw.getvalue()


def connect() -> docker.DockerClient:
    """A client for the local engine; EngineError when none answers."""
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as e:
        raise EngineError(
            f"no Docker engine answers ({e}); start dockerd or set DOCKER_HOST"
        ) from e
    return client


def local_image(client: docker.DockerClient, name: str) -> tuple[str, dict[str, str]] | None:
    """(id, labels) of a local image, or None when there is none of that name."""
    try:
        image = client.images.get(name)
    except docker.errors.ImageNotFound:
        return None
    except docker.errors.APIError as e:
        raise EngineError(f"image {name}: {e}") from e
    return image.id, dict(image.labels or {})


def create(
    client: docker.DockerClient,
    image: str,
    *,
    name: str,
    labels: dict[str, str],
    files: Iterable[FileEntry],
    network: str | None = None,
    limits: dict[str, Any] | None = None,
) -> Any:
    """Create (not start) the agent container and put its files in; limits: more create()
    arguments (host.limits.Limits.docker_kwargs)."""
    try:
        container = client.containers.create(
            image,
            name=name,
            detach=True,
            labels=labels,
            cap_add=["NET_ADMIN"],  # for the entrypoint's iptables; the agent drops it
            init=True,  # reap whatever the agent leaves orphaned
            network=network,
            **{"shm_size": "1g", **(limits or {})},  # Chromium needs more than Docker's 64 MB
        )
    except docker.errors.DockerException as e:
        raise EngineError(f"cannot create container from {image}: {e}") from e
    try:
        container.put_archive("/", files_tar(files))
    except docker.errors.DockerException as e:
        remove(container)
        raise EngineError(f"cannot copy the task into the container: {e}") from e
    except BaseException:
        remove(container)  # Ctrl-C while copying: leave nothing behind
        raise
    return container


def start(container: Any) -> None:
    try:
        container.start()
    except docker.errors.DockerException as e:
        raise EngineError(f"cannot start container: {e}") from e


WAIT_POLL_S = 1.0
"""wait() asks the engine again this often: a KeyboardInterrupt that Ray's task cancellation
raises (it sends no signal, so a blocked read never sees it) is seen between two asks."""


def wait(container: Any, timeout_s: float) -> int | None:
    """The container's exit code, or None if it still runs after timeout_s (or the engine
    stopped answering)."""
    deadline = time.monotonic() + timeout_s
    while (left := deadline - time.monotonic()) > 0:
        try:
            return int(container.wait(timeout=min(left, WAIT_POLL_S)).get("StatusCode", -1))
        except requests.exceptions.ReadTimeout:
            continue
        except requests.exceptions.ConnectionError as e:
            # over the engine's Unix socket a read timeout comes wrapped as a ConnectionError
            if e.args and isinstance(e.args[0], urllib3.exceptions.ReadTimeoutError):
                continue
            return None
    return None


def stop(container: Any, grace_s: float) -> None:
    """SIGTERM (the entrypoint then stops the agent and writes its report), SIGKILL after grace."""
    try:
        container.stop(timeout=max(1, int(grace_s)))
    except docker.errors.NotFound:
        pass
    except docker.errors.DockerException as e:
        raise EngineError(f"cannot stop container: {e}") from e


def kill(container: Any) -> None:
    """SIGKILL the container if it runs; one that is not running (yet, or any more) is fine."""
    # Docker answers 409 for a container that is not running, 404 for one already removed.
    with contextlib.suppress(docker.errors.DockerException):
        container.kill()


def remove(container: Any) -> None:
    """Remove the container whatever its state (idempotent)."""
    with contextlib.suppress(docker.errors.NotFound):
        container.remove(force=True)


def _safe_relative(name: str) -> PurePosixPath | None:
    parts = PurePosixPath(name).parts[1:]  # drop the archive's root (the copied dir's name)
    if not parts or any(p in ("", ".", "..") for p in parts) or name.startswith("/"):
        return None
    return PurePosixPath(*parts)


def cut_note(limit: int, size: int) -> bytes:
    """The line that ends a file cut at limit of its size bytes."""
    return f"\n[clawbench: cut at {limit} of {size} bytes]\n".encode()


def fetch(container: Any, src: str, dest: Path, limit: int | None = None) -> list[str]:
    """Copy src (a file or directory in the container) to dest; return what was skipped.

    limit: bytes kept of each file at most; a longer one ends with a line saying it was cut
    (an agent's log can be as long as the agent likes: the run directory is kept)."""
    try:
        chunks, _ = container.get_archive(src)
    except docker.errors.NotFound:
        return [f"{src}: not in the container"]
    except docker.errors.DockerException as e:
        return [f"{src}: {e}"]
    skipped = []
    with tempfile.TemporaryFile() as spool:
        for chunk in chunks:
            spool.write(chunk)
        spool.seek(0)
        with tarfile.open(fileobj=spool, mode="r:") as tar:
            members = tar.getmembers()
            single = len(members) == 1 and members[0].isfile()
            for member in members:
                if single:
                    target = dest
                else:
                    rel = _safe_relative(member.name)
                    if rel is None:
                        continue  # the root entry itself, or a name we refuse
                    target = dest / rel
                if member.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                elif member.isfile():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    source = tar.extractfile(member)
                    assert source is not None
                    with open(target, "wb") as out:
                        if limit is None or member.size <= limit:
                            shutil.copyfileobj(source, out)
                        else:
                            out.write(source.read(limit))
                            out.write(cut_note(limit, member.size))
                            skipped.append(f"{src}: cut at {limit} of {member.size} bytes")
                    os.chmod(target, 0o644)
                else:
                    skipped.append(f"{src}: {member.name}: not a regular file, skipped")
    return skipped


class LiveContainers:
    """A batch's containers as they are created, so an interrupt can kill them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[str, Any] = {}

    def add(self, container: Any) -> None:
        with self._lock:
            self._live[container.id] = container

    def kill_all(self) -> None:
        with self._lock:
            live = list(self._live.values())
        for container in live:
            # Not started yet or already gone is fine: its worker sees the stop event, or
            # removes what is left.
            kill(container)


def remove_labelled(client: docker.DockerClient, label: str, value: str) -> int:
    """Force-remove every container with label=value (a batch's leftovers); return how many."""
    count = 0
    for container in client.containers.list(all=True, filters={"label": f"{label}={value}"}):
        remove(container)
        count += 1
    return count
