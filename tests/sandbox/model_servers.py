"""A scripted model server (sandbox.scripted_models) in its own container on the tests'
internal network, reachable as MODEL_HOST: what a harness in the sandbox calls instead of an
LLM provider. The sandbox image runs it (our package is in its venv)."""

from __future__ import annotations

import contextlib
import io
import json
import tarfile
import time
from typing import Any

MODEL_HOST = "model.clawbench.test"
PYTHON = "/opt/clawbench/venv/bin/python"


def harness_layer(client: Any, image: str, harness: Any) -> str:
    """The harness's layer on the image under test (built here when CI has not built it)."""
    import docker.errors

    from sandbox.harnesses import harness_image
    from sandbox.host.image import build_harness_image

    tag = harness_image(image, harness.name)
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        build_harness_image(client, harness, base=image, tag=tag)
    return tag


class ModelServer:
    """`python -m sandbox.scripted_models.<module> --script /script.json --port 8000 ...`, known
    on the network as alias (MODEL_HOST unless told)."""

    def __init__(
        self,
        client: Any,
        image: str,
        network: str,
        module: str,
        script: Any,
        ready: bytes,
        extra: tuple[str, ...] = (),
        alias: str = MODEL_HOST,
    ) -> None:
        argv = [PYTHON, "-m", f"sandbox.scripted_models.{module}", "--script", "/script.json"]
        self.container = client.containers.create(
            image,
            entrypoint=[*argv, "--port", "8000", *extra],
            network=network,
            detach=True,
        )
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w") as tar:
            data = json.dumps(script).encode()
            info = tarfile.TarInfo("script.json")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        self.container.put_archive("/", raw.getvalue())
        net = client.networks.get(network)
        net.disconnect(self.container)
        net.connect(self.container, aliases=[alias])
        self.container.start()
        deadline = time.monotonic() + 30
        while ready not in self.container.logs():
            assert time.monotonic() < deadline, self.container.logs()
            time.sleep(0.2)

    def run(self, *argv: str) -> bytes:
        return self.container.exec_run(list(argv)).output

    def close(self) -> None:
        """Remove the container (again: a no-op)."""
        import docker.errors

        with contextlib.suppress(docker.errors.NotFound):
            self.container.remove(force=True)
