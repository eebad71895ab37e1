#!/usr/bin/env bash
# Install the claude-code harness's npm packages into PREFIX (default .venv/claude-code), pinned:
# Claude Code (its native binary is an optional dependency pinned to the same version, picked
# for this platform by npm: nothing is downloaded at run time) and
# Playwright MCP, without Playwright's browser download (the harness runs the system Chromium).
# Needs npm; at run time the MCP server needs node >= 20, Claude Code's binary needs neither.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-.venv/claude-code}
mkdir -p "$prefix"
cp sandbox/harnesses/claude_code/package.json "$prefix/package.json"  # the pins
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$prefix" --no-audit --no-fund
"$prefix/node_modules/.bin/claude" --version
node "$prefix/node_modules/@playwright/mcp/cli.js" --version
