"""Which code produced a summary: our package version, mitmproxy's, and the git SHA when known."""

from __future__ import annotations

import functools
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parents[2]


def _version(dist: str) -> str | None:
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def git_sha(root: Path = _CHECKOUT) -> str | None:
    """HEAD's commit of the checkout we run from, read from .git (no git process), else None."""
    git = root / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head or None
        ref = head[5:]
        loose = git / ref
        if loose.is_file():
            return loose.read_text().strip() or None
        for line in (git / "packed-refs").read_text().splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha
    except OSError:
        return None
    return None


@functools.cache
def provenance() -> dict[str, str | None]:
    """{package, package_version, mitmproxy_version, python_version, git_sha}: each None when
    it cannot be known. Summaries and run-meta.json carry the same keys."""
    return {
        "package": "clawbench-intercept",
        "package_version": _version("clawbench-intercept"),
        "mitmproxy_version": _version("mitmproxy"),
        "python_version": sys.version.split()[0],
        "git_sha": git_sha(),
    }


__all__ = ["git_sha", "provenance"]
