"""The fake model API (tests.support.fake_api) in its own container on the tests' internal
network, reachable as MODEL_HOST: what a harness in the sandbox calls instead of an LLM
provider. The tests' fake is copied in and run by the sandbox image's python (our package is in
its venv); it keeps every call and the usage totals in RECORD."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from sandbox.host import FileEntry, files_tar

MODEL_HOST = "model.clawbench.test"
PYTHON = "/opt/clawbench/venv/bin/python"
SUPPORT = Path(__file__).resolve().parent.parent / "support"
FAKE = ("__init__.py", "fake_api.py", "fake_api_wire.py", "model_replies.py", "claude_script.py",
        "playwright_snapshot.py")  # fmt: skip
"""tests/support's files the fake needs, copied to /fake/tests/support/."""
RECORD = "/tmp/record.json"
READY = b"fake model API on"


def harness_layer(client: Any, image: str, harness: Any) -> str:
    """The harness's layer on the image under test (built here when CI has not built it)."""
    import docker.errors

    from sandbox.harnesses import harness_image
    from sandbox.host import build_harness_image

    tag = harness_image(image, harness.name)
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        build_harness_image(client, harness, base=image, tag=tag)
    return tag


def _payload(script: dict[str, Any]) -> bytes:
    """The tar put at /: the fake's modules and the script."""
    files = [FileEntry(f"fake/tests/support/{n}", (SUPPORT / n).read_bytes()) for n in FAKE]
    return files_tar([*files, FileEntry("fake/script.json", json.dumps(script).encode())])


class ModelServer:
    """`python -m tests.support.fake_api --script /fake/script.json --port 8000 ...` (script:
    {"claude": SCRIPT} or {"browser_use": STEPS}), known on the network as alias."""

    def __init__(
        self,
        client: Any,
        image: str,
        network: str,
        script: dict[str, Any],
        extra: tuple[str, ...] = (),
        alias: str = MODEL_HOST,
    ) -> None:
        argv = [PYTHON, "-m", "tests.support.fake_api", "--script", "/fake/script.json"]
        argv += ["--host", "0.0.0.0", "--port", "8000", "--record", RECORD, *extra]
        self.container = client.containers.create(
            image,
            entrypoint=argv,
            environment={"PYTHONPATH": "/fake"},
            network=network,
            detach=True,
        )
        self.container.put_archive("/", _payload(script))
        net = client.networks.get(network)
        net.disconnect(self.container)
        net.connect(self.container, aliases=[alias])
        self.container.start()
        deadline = time.monotonic() + 30
        while READY not in self.container.logs():
            assert time.monotonic() < deadline, self.container.logs()
            time.sleep(0.2)

    def record(self) -> dict[str, Any]:
        """The calls it answered, their usage totals and what its script reports."""
        return json.loads(self.container.exec_run(["cat", RECORD]).output)

    def close(self) -> None:
        """Remove the container (again: a no-op)."""
        import docker.errors

        with contextlib.suppress(docker.errors.NotFound):
            self.container.remove(force=True)
