"""Shared test plumbing: the reference corpus, and optional tools that CI makes mandatory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox.demo.chromium import find_chromium

ROOT = Path(__file__).resolve().parent.parent
TEST_CASES = ROOT / "test-cases"
IN_CI = os.environ.get("CLAWBENCH_CI") == "1"


def require(available: bool, what: str) -> None:
    """Skip when a tool is missing on a dev machine; fail in CI (CLAWBENCH_CI=1)."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"{what} is required in CI (CLAWBENCH_CI=1) but not available")
    pytest.skip(f"{what} not available")


@pytest.fixture(scope="session")
def reference_corpus() -> Path:
    """The reference's 332 task.json, via CLAWBENCH_REFERENCE_CORPUS (skip only where unset)."""
    value = os.environ.get("CLAWBENCH_REFERENCE_CORPUS")
    if not value:
        pytest.skip("CLAWBENCH_REFERENCE_CORPUS is not set")
    path = Path(value)
    if not path.is_dir() or not any(path.glob("*/*/task.json")):
        pytest.fail(f"CLAWBENCH_REFERENCE_CORPUS={value} holds no */*/task.json")
    return path


@pytest.fixture(scope="session")
def chromium() -> str:
    path = find_chromium()  # the demo's lookup: tests run the browser the demo would
    require(path is not None, "headless Chromium")
    assert path is not None
    return path
