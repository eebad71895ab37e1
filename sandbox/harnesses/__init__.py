"""Agent harnesses: real LLM agents, each a named unit the sandbox can build and run.

A harness says how it is installed (a Dockerfile layer on the sandbox image, its own venv or npm
prefix with pinned versions, the system Chromium, nothing downloaded at run time) and how it is
run (a driver inside the container that reads the instruction and /my-info, calls the model
named by --model through the proxy, keeps its own trace in $CLAWBENCH_AGENT_OUT and ends with
result.json). Adding one: a directory here with a Dockerfile and a driver, and an entry below.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Harness:
    """One agent harness: what it is, what it needs, how it is installed and started."""

    name: str
    kind: str
    model_apis: tuple[str, ...]
    needs: str
    version: str
    """The pinned package versions, as recorded in run-meta.json's harness_version."""
    directory: Path
    """Holds the layer's Dockerfile and everything it copies (the driver)."""
    argv: tuple[str, ...]
    """The command inside the container, run as the agent user."""
    chromium: bool = True


BROWSER_USE = Harness(
    name="browser-use",
    kind="browser agent (Python, drives Chromium over CDP)",
    model_apis=("openai-completions",),
    needs="Chromium (the image's, from apt)",
    version=(HERE / "browser_use" / "requirements.txt").read_text().strip(),
    directory=HERE / "browser_use",
    argv=("/opt/harness/browser-use/bin/python", "/opt/harness/browser-use/driver.py"),
)


def _npm_pins(directory: Path) -> str:
    deps = json.loads((directory / "package.json").read_text())["dependencies"]
    return ", ".join(f"{name}@{version}" for name, version in deps.items())


CLAUDE_CODE = Harness(
    name="claude-code",
    kind="CLI coding agent (print mode) with a browser tool (Playwright MCP) and a shell",
    model_apis=("anthropic-messages",),
    needs="Chromium (the image's), Node.js >= 20 (Debian's, in the layer)",
    version=_npm_pins(HERE / "claude_code"),
    directory=HERE / "claude_code",
    argv=("python3", "/opt/clawbench/harness/claude-code/driver.py"),
)

HARNESSES: dict[str, Harness] = {h.name: h for h in (BROWSER_USE, CLAUDE_CODE)}


def get_harness(name: str) -> Harness:
    """The harness named; KeyError lists the known ones."""
    try:
        return HARNESSES[name]
    except KeyError:
        known = ", ".join(sorted(HARNESSES)) or "none"
        raise KeyError(f"no harness named {name!r} (known: {known})") from None


def harness_image(image: str, harness: str) -> str:
    """The harness layer's tag for a sandbox image: clawbench-sandbox:latest ->
    clawbench-sandbox:latest-browser-use."""
    repo, sep, tag = image.rpartition(":")
    if not sep or "/" in tag:  # no tag given (a registry port is not a tag)
        repo, tag = image, "latest"
    return f"{repo}:{tag}-{harness}"


__all__ = ["BROWSER_USE", "CLAUDE_CODE", "HARNESSES", "Harness", "get_harness", "harness_image"]
