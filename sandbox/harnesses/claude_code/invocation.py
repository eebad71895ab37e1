"""How the driver invokes Claude Code: its argv, its environment, the Playwright MCP config.

Stdlib only (the driver runs with the image's python3). Pure functions: nothing here starts a
process or touches a file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = [
    "ALLOWED_TOOLS",
    "BUILTIN_TOOLS",
    "anthropic_base_url",
    "build_command",
    "claude_env",
    "mcp_config",
    "playwright_config",
    "versions",
]

ALLOWED_TOOLS = "mcp__playwright__*,Bash,Read"
"""Pre-approved tools; with --permission-mode dontAsk every other tool call is denied."""
BUILTIN_TOOLS = "Bash,Read"
"""The only built-in tools the model is shown (no Edit, Write, WebFetch, subagents...)."""


def anthropic_base_url(base_url: str) -> str:
    """models.yaml's base URL (OpenAI style, may end in /v1) as ANTHROPIC_BASE_URL (no /v1)."""
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def versions(prefix: Path) -> dict[str, str | None]:
    """The installed versions of Claude Code and Playwright MCP, from their package.json."""
    found: dict[str, str | None] = {}
    for key, package in (
        ("claude_code", "@anthropic-ai/claude-code"),
        ("playwright_mcp", "@playwright/mcp"),
    ):
        try:
            data = json.loads((prefix / "node_modules" / package / "package.json").read_text())
            found[key] = data.get("version")
        except (OSError, ValueError):
            found[key] = None
    return found


def mcp_config(prefix: Path, chromium: str, proxy: str | None, out: Path) -> dict[str, Any]:
    """Claude Code's --mcp-config: Playwright MCP on the system Chromium, headless, in-memory
    profile, through the proxy (Playwright proxies loopback too), snapshots kept in out."""
    args = [
        str(prefix / "node_modules" / "@playwright" / "mcp" / "cli.js"),
        "--headless",
        "--isolated",
        "--executable-path",
        chromium,
        "--no-sandbox",
        "--output-dir",
        str(out / "playwright"),
        "--config",
        str(out / "playwright.json"),
    ]
    if proxy:
        args += ["--proxy-server", proxy]
    return {"mcpServers": {"playwright": {"type": "stdio", "command": "node", "args": args}}}


def playwright_config() -> dict[str, Any]:
    """Launch flags the CLI has no option for: no QUIC (the firewall drops UDP). Playwright's
    own defaults already turn off background networking, component updates, sync and https
    upgrades; a --disable-features here would replace its list (Chromium keeps the last one)."""
    return {"browser": {"browserName": "chromium", "launchOptions": {"args": ["--disable-quic"]}}}


def build_command(
    prefix: Path,
    model: str,
    max_turns: int,
    mcp_path: Path,
    extra_prompt: str | None,
    my_info: str | None,
    instruction: str,
) -> list[str]:
    """claude's argv: print mode, stream-json, the turn cap, only our MCP server, the browser,
    Bash and Read pre-approved and nothing else allowed (dontAsk denies what would prompt)."""
    cmd = [
        str(prefix / "node_modules" / ".bin" / "claude"),
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        model,
        "--max-turns",
        str(max_turns),
        "--mcp-config",
        str(mcp_path),
        "--strict-mcp-config",
        "--permission-mode",
        "dontAsk",
        "--tools",
        BUILTIN_TOOLS,
        "--allowedTools",
        ALLOWED_TOOLS,
        "--no-session-persistence",
    ]
    if my_info and Path(my_info).is_dir():
        cmd += ["--add-dir", my_info]
    if extra_prompt:
        cmd += ["--append-system-prompt", extra_prompt]
    return [*cmd, "--", instruction]


def claude_env(env: dict[str, str], base_url: str, api_key: str, model: str) -> dict[str, str]:
    """Claude Code's environment: the sandbox's (proxy, CA) plus the model and quiet switches."""
    out = {k: v for k, v in env.items() if not k.startswith("CLAWBENCH_AGENT_API")}
    out.update(
        {
            "ANTHROPIC_BASE_URL": anthropic_base_url(base_url),
            "ANTHROPIC_API_KEY": api_key,
            # side requests (titles, summaries) must name a model the provider has
            "ANTHROPIC_SMALL_FAST_MODEL": model,
            "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "ENABLE_TOOL_SEARCH": "false",  # every browser tool in the first request, none deferred
        }
    )
    if env.get("CLAWBENCH_CA_CERT"):
        out.setdefault("NODE_EXTRA_CA_CERTS", env["CLAWBENCH_CA_CERT"])
    return out
