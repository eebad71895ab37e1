"""The driver's image on every node: checked by ID, pulled from a registry, or shipped once.

The driver records the ID of the image it means (its local tag, as `clawbench-sandbox build` left
it). A node whose tag names another image refuses the run; a node without the image pulls it when
the name carries a registry (`registry.example:5000/clawbench-sandbox:tag`), and otherwise loads
the driver's `docker save` stream, sent through Ray's object store in chunks, once per node (a
lock file makes a node's concurrent runs wait for the first one's load).
"""

from __future__ import annotations

import contextlib
import fcntl
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import docker.errors

CHUNK = 64 << 20
"""Bytes of the saved image per object in Ray's object store."""


class ImageRefused(RuntimeError):
    """The node cannot run the driver's image; the message names the node's image and the fix."""


def has_registry(name: str) -> bool:
    """Whether an image name starts with a registry host (Docker's rule: a first path component
    with a '.' or a ':', or 'localhost')."""
    first, slash, _ = name.partition("/")
    return bool(slash) and ("." in first or ":" in first or first == "localhost")


def local_id(client: docker.DockerClient, name: str) -> str | None:
    """The ID the node's tag points at, None when the node has no such image."""
    try:
        return client.images.get(name).id
    except docker.errors.ImageNotFound:
        return None


def _pull(client: docker.DockerClient, name: str) -> None:
    repo, tag = _split(name)
    try:
        client.images.pull(repo, tag=tag)
    except docker.errors.DockerException as e:
        raise ImageRefused(f"image {name}: docker pull failed: {e}") from e


def _split(name: str) -> tuple[str, str]:
    repo, sep, tag = name.rpartition(":")
    if not sep or "/" in tag:
        return name, "latest"
    return repo, tag


def _load(client: docker.DockerClient, chunks: Iterator[bytes]) -> None:
    try:
        client.images.load(chunks)  # streamed: the image is never whole in memory here
    except docker.errors.DockerException as e:
        raise ImageRefused(f"docker load of the driver's image failed: {e}") from e


@contextlib.contextmanager
def _node_lock(image_id: str) -> Iterator[None]:
    """One loader per node and image: the others wait, then find it there."""
    path = Path(tempfile.gettempdir()) / f"clawbench-image-{image_id.replace(':', '-')[:40]}.lock"
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_image(
    client: docker.DockerClient,
    name: str,
    want: str,
    saved: Iterator[bytes] | None = None,
    *,
    where: str = "this node",
) -> str:
    """Make sure name is the image want on this node; say how ('present', 'pulled', 'loaded').

    ImageRefused when the tag points at another image, or the image is missing and can be
    neither pulled (no registry in the name) nor loaded (saved is None)."""
    with _node_lock(want):
        found = local_id(client, name)
        how = "present"
        if found is None:
            if has_registry(name):
                _pull(client, name)
                how = "pulled"
            elif saved is not None:
                _load(client, saved)
                how = "loaded"
            else:
                raise ImageRefused(
                    f"image {name} is missing on {where}: name a registry in --image, or let "
                    "the driver send it (it does when its first look finds the image missing)"
                )
            found = local_id(client, name)
    if found != want:
        raise ImageRefused(
            f"image {name} on {where} is {found}, the driver's is {want}: rebuild or re-tag it "
            "there, or remove it so the driver's image is sent"
        )
    return how


def save_chunks(client: docker.DockerClient, name: str) -> Iterator[bytes]:
    """The driver's image as a `docker save` stream, in CHUNK-sized pieces."""
    image: Any = client.images.get(name)
    buffer = bytearray()
    for piece in image.save(chunk_size=1 << 20, named=True):
        buffer += piece
        while len(buffer) >= CHUNK:
            yield bytes(buffer[:CHUNK])
            del buffer[:CHUNK]
    if buffer:
        yield bytes(buffer)


__all__ = ["CHUNK", "ImageRefused", "ensure_image", "has_registry", "local_id", "save_chunks"]
