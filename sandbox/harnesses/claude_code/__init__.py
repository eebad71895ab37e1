"""The claude-code harness: Claude Code (print mode) with Playwright MCP on the system Chromium."""
