"""The claude-code harness: Claude Code (print mode) with Playwright MCP on the system Chromium."""

from __future__ import annotations

from sandbox.harnesses.claude_code.invocation import anthropic_base_url

__all__ = ["anthropic_base_url"]
