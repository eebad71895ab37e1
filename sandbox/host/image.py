"""Build the sandbox image with the Docker SDK from a small, reproducible context, and check the
image a run starts from (`check_image`, before any container starts).

The context holds only what the Dockerfile needs: the Dockerfile, build-ca.pem (the --ca-bundle,
or empty), constraints.txt (this environment's exact versions, so the image runs the mitmproxy
the tests ran) and src/ with pyproject.toml, README.md and the three packages. Entries have fixed
owners and mtimes, so an unchanged tree gives a byte-identical context and the build cache hits.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import tarfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import docker.errors

from sandbox.container.contract import CONTRACT_LABEL, contract_id
from sandbox.host.docker_api import EngineError, local_image

if TYPE_CHECKING:
    from sandbox.harnesses import Harness

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("proxy_addon", "scorer", "sandbox")
DEFAULT_IMAGE = "clawbench-sandbox:latest"
DEFAULT_BASE = "python:3.12-slim"
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
OWN_DISTRIBUTION = "clawbench-intercept"
HARNESS_LABEL = "io.clawbench.harness"
"""On a harness layer: the harness it holds (build_harness_image sets it)."""
HARNESS_VERSION_LABEL = "io.clawbench.harness.version"
"""On a harness layer: its pinned packages when it was built (run-meta's harness_version)."""
HOST_CA_VARIABLES = ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE")
"""Where this machine tells its own pip and Python which CAs to trust, in that order."""
TLS_FAILED = ("CERTIFICATE_VERIFY_FAILED", "certificate verify failed", "Certificate verification")
"""What pip, Python and apt print when a download's certificate is not trusted."""
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


class StaleImage(EngineError):
    """The image was built from other clawbench code: its container would not read our files."""


class BuildError(RuntimeError):
    """The image could not be built; the message carries the builder's last lines."""


def _add(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    tar.addfile(info, io.BytesIO(data))


def _sources(root: Path) -> Iterator[tuple[str, Path]]:
    for package in PACKAGES:
        base = root / package
        if not base.is_dir():
            raise BuildError(f"{base}: package directory missing; run from a checkout")
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(root)
            if path.is_file() and not SKIP_PARTS & set(rel.parts) and path.suffix != ".pyc":
                yield f"src/{rel.as_posix()}", path


def constraints() -> str:
    """Pin every distribution of this environment (ours excluded) for pip inside the build."""
    pins = set()
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and name.lower().replace("_", "-") != OWN_DISTRIBUTION:
            pins.add(f"{name}=={dist.version}")
    return "\n".join(sorted(pins, key=str.lower)) + "\n"


def host_ca_bundle(environ: Mapping[str, str] = os.environ) -> tuple[str, Path] | None:
    """The build's default --ca-bundle: the file the first of HOST_CA_VARIABLES names, so a
    build behind a TLS-inspecting proxy trusts what this machine's own downloads trust."""
    for variable in HOST_CA_VARIABLES:
        value = environ.get(variable)
        if value and Path(value).is_file():
            return variable, Path(value)
    return None


def build_failure(error: str, output: Sequence[str]) -> str:
    """The one line a failed build ends with: the builder's error, its last output and, when
    its downloads failed TLS verification (a TLS-inspecting proxy), the option that fixes it."""
    lines = [
        ANSI_COLOUR.sub("", line).strip() for text in output[-12:] for line in text.splitlines()
    ]
    detail = " | ".join(line for line in lines[-12:] if line)
    said = f"{' '.join(error.split())} (last output: {detail})"
    if any(marker in line for line in output for marker in TLS_FAILED):
        said += (
            "; the build's downloads failed TLS verification: give --ca-bundle FILE, a PEM "
            "bundle with the CA of this network's TLS-inspecting proxy"
        )
    return said


def _ca_bundle(ca_bundle: Path | None) -> bytes:
    """The --ca-bundle's PEM bytes (empty without one); BuildError if it is not a bundle."""
    if ca_bundle is None:
        return b""
    try:
        bundle = ca_bundle.read_bytes()
    except OSError as e:
        raise BuildError(f"--ca-bundle {ca_bundle}: cannot read: {e}") from e
    if b"-----BEGIN CERTIFICATE-----" not in bundle:
        raise BuildError(f"--ca-bundle {ca_bundle}: no PEM certificate in it")
    return bundle


def build_context(root: Path = REPO, ca_bundle: Path | None = None) -> bytes:
    """The gzipped tar the daemon builds from."""
    dockerfile = root / "Dockerfile"
    if not dockerfile.is_file():
        raise BuildError(f"{dockerfile}: missing; run from a checkout of clawbench-intercept")
    bundle = _ca_bundle(ca_bundle)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add(tar, "Dockerfile", dockerfile.read_bytes())
        _add(tar, "build-ca.pem", bundle)
        _add(tar, "constraints.txt", constraints().encode())
        _add(tar, "src/pyproject.toml", (root / "pyproject.toml").read_bytes())
        readme = root / "README.md"
        # pyproject names README.md as the readme; a checkout without one still builds.
        _add(tar, "src/README.md", readme.read_bytes() if readme.exists() else b"clawbench\n")
        for name, path in _sources(root):
            _add(tar, name, path.read_bytes())
    return gzip.compress(raw.getvalue(), mtime=0)


def build_image(
    client: Any,
    *,
    tag: str = DEFAULT_IMAGE,
    base_image: str = DEFAULT_BASE,
    ca_bundle: Path | None = None,
    chromium: bool = False,
    extra_packages: str = "",
    progress: Callable[[str], None] | None = None,
) -> str:
    """Build and tag the image; return its id. Pulls nothing but the base, when it is not local
    (BuildError saying to name a local one with --base-image when that pull fails)."""
    context = build_context(REPO, ca_bundle)
    _base(client, base_image, progress)
    args = {
        "BASE_IMAGE": base_image,
        "WITH_CHROMIUM": "1" if chromium else "0",
        "EXTRA_PACKAGES": extra_packages,
    }
    labels = {
        "org.opencontainers.image.title": "clawbench-sandbox",
        "io.clawbench.base-image": base_image,
        "io.clawbench.chromium": args["WITH_CHROMIUM"],
        CONTRACT_LABEL: contract_id(),
    }
    for dist in (OWN_DISTRIBUTION, "mitmproxy"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            labels[f"io.clawbench.version.{dist}"] = metadata.version(dist)
    return _build(client, context, tag, args, labels, progress)


def _base(client: Any, base_image: str, progress: Callable[[str], None] | None) -> None:
    """The base image on this machine: local already, or pulled here (the builder's FROM would
    pull it too, and fail with only the registry's words)."""
    if local_image(client, base_image) is not None:
        return
    if progress:
        progress(f"pulling the base image {base_image}")
    try:
        client.images.pull(base_image)
    except docker.errors.DockerException:
        raise BuildError(
            f"base image {base_image} is not on this machine and cannot be pulled: give "
            "--base-image IMAGE, an image already here (see `docker images`)"
        ) from None


def _build(
    client: Any,
    context: bytes,
    tag: str,
    args: dict[str, str],
    labels: dict[str, str],
    progress: Callable[[str], None] | None,
) -> str:
    """Send a gzipped context to the daemon's classic builder; the built image's id."""
    output: list[str] = []
    image_id = None
    stream = client.api.build(
        fileobj=io.BytesIO(context),
        custom_context=True,
        encoding="gzip",
        tag=tag,
        buildargs=args,
        labels=labels,
        rm=True,
        forcerm=True,
        decode=True,
    )
    for chunk in stream:
        if "error" in chunk:
            raise BuildError(build_failure(chunk["error"], output))
        text = chunk.get("stream", "")
        if text:
            output.append(text)
            if progress and text.startswith("Step "):
                progress(text.strip())
        aux = chunk.get("aux") or {}
        image_id = aux.get("ID", image_id)
    if image_id is None:
        image_id = client.images.get(tag).id
    return image_id


def harness_context(directory: Path, ca_bundle: Path | None = None) -> bytes:
    """The build context of a harness layer: its directory's files and build-ca.pem."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add(tar, "build-ca.pem", _ca_bundle(ca_bundle))
        for path in sorted(directory.rglob("*")):
            rel = path.relative_to(directory)
            if path.is_file() and not SKIP_PARTS & set(rel.parts) and path.suffix != ".pyc":
                _add(tar, rel.as_posix(), path.read_bytes())
    return gzip.compress(raw.getvalue(), mtime=0)


def build_harness_image(
    client: Any,
    harness: Harness,
    *,
    base: str,
    tag: str,
    ca_bundle: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> str:
    """Build a harness's layer on the sandbox image `base` and tag it; return its id."""
    labels = {
        "org.opencontainers.image.title": f"clawbench-sandbox-{harness.name}",
        HARNESS_LABEL: harness.name,
        HARNESS_VERSION_LABEL: harness.version,
        "io.clawbench.base-image": base,
    }
    context = harness_context(harness.directory, ca_bundle)
    return _build(client, context, tag, {"BASE": base}, labels, progress)


@dataclass(frozen=True)
class RunImage:
    """The local image runs start from, checked: its id and labels."""

    name: str
    id: str
    labels: Mapping[str, str]

    @property
    def harness_version(self) -> str | None:
        """The harness's pinned packages as the image was built with them (never the host's)."""
        return self.labels.get(HARNESS_VERSION_LABEL)


def build_fix(image: str, harness: str | None) -> str:
    """The `clawbench-sandbox build` that makes image (with harness's layer), said as a fix."""
    if harness is None:
        return f"build it with `clawbench-sandbox build --tag {image}`"
    from sandbox.harnesses import harness_image

    repo, sep, tag = image.rpartition(":")
    suffix = f"-{harness}"
    if sep and "/" not in tag and tag.endswith(suffix) and tag != suffix:
        base = f"{repo}:{tag.removesuffix(suffix)}"  # the layer's tag is the base's + -harness
        return f"build it with `clawbench-sandbox build --tag {base} --harness {harness}`"
    return (
        f"build the harness's image with `clawbench-sandbox build --tag {image} --harness "
        f"{harness}` and run with --image {harness_image(image, harness)}"
    )


def check_image(client: Any, image: str, harness: str | None, fix: str | None = None) -> RunImage:
    """The image a run or batch starts from: it exists, for a harness run holds that harness
    (its io.clawbench.harness label), and was built from this code (its io.clawbench.contract
    label, else StaleImage); else EngineError naming the image and the build command (fix,
    or build_fix's)."""
    found = local_image(client, image)
    if found is None:
        raise EngineError(f"image {image} is missing: {fix or build_fix(image, harness)}")
    image_id, labels = found
    held = labels.get(HARNESS_LABEL)
    if harness is not None and held != harness:
        has = f"its {HARNESS_LABEL} label is {held!r}" if held else f"no {HARNESS_LABEL} label"
        raise EngineError(
            f"image {image} does not hold the {harness} harness ({has}): "
            f"{fix or build_fix(image, harness)}"
        )
    built, ours = labels.get(CONTRACT_LABEL), contract_id()
    if built != ours:
        has = f"its {CONTRACT_LABEL} label is {built!r}" if built else f"no {CONTRACT_LABEL} label"
        raise StaleImage(
            f"image {image} was built from other clawbench code ({has}, this code's is "
            f"{ours!r}): {fix or build_fix(image, harness)}"
        )
    return RunImage(image, image_id, labels)
