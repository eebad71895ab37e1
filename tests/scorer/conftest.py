"""Scorer test plumbing: no judge key from the environment, a loopback judge, models.yaml files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_api import FakeModelAPI, start_judge_server

FAKE_KEY = "sk-clawbench-test-7c1e0d5b9a2f4e8d"
"""A distinctive API key: tests grep every file and stream for it."""


@pytest.fixture(autouse=True)
def _no_judge_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    monkeypatch.delenv("DEEPSEEK_BASE_URL", raising=False)


@pytest.fixture
def judge() -> Iterator[FakeModelAPI]:
    server = start_judge_server()
    yield server
    server.close()


def models_yaml(path: Path, server: FakeModelAPI, name: str = "judge-x", **extra: str) -> Path:
    """A models.yaml in the reference's format with one entry pointing at the loopback judge."""
    lines = [
        f"{name}:",
        f"  base_url: {server.base_url}",
        f"  api_type: {extra.pop('api_type', 'openai-completions')}",
        f'  api_key: "{extra.pop("api_key", FAKE_KEY)}"',
    ]
    lines += [f"  {k}: {v}" for k, v in extra.items()]
    path.write_text("\n".join(lines) + "\n")
    return path
