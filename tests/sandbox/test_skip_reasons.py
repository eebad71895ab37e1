"""Without an image or a base to build one from, the Docker tests skip with one reason that says
how to give them one; under CLAWBENCH_CI=1 the same is a failure."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.docker
TARGETS = [
    "tests/sandbox/test_sandbox_docker.py::test_image_holds_no_build_ca_bundle",
    "tests/sandbox/test_sandbox_docker.py::test_null_agent_does_nothing",
]
NO_BASE = "127.0.0.1:9/clawbench-no-such-base:none"
"""A base that is not local and whose registry (loopback port 9) refuses the pull."""


def _pytest(ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAWBENCH_SANDBOX_IMAGE", "CI")}
    env |= {"CLAWBENCH_BASE_IMAGE": NO_BASE, "CLAWBENCH_CI": "1" if ci else "0"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rsE", *TARGETS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_without_a_base_image_the_docker_tests_skip_with_one_reason(docker_client) -> None:
    done = _pytest(ci=False)
    assert done.returncode == 0, done.stdout + done.stderr
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    (reason,) = {line.split(": ", 1)[1] for line in skips}  # every test: the same reason
    assert "CLAWBENCH_SANDBOX_IMAGE=clawbench-sandbox:test" in reason
    assert "clawbench-sandbox build --base-image" in reason and NO_BASE in reason
    assert "2 skipped" in done.stdout


def test_under_ci_a_missing_base_image_is_a_failure(docker_client) -> None:
    done = _pytest(ci=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "required in CI (CLAWBENCH_CI=1)" in done.stdout and "2 error" in done.stdout
