"""Scripted model servers that speak real model APIs, for tests, benchmarks and the demo: they
drive real agents without an LLM. `openai_chat`: OpenAI chat completions in browser-use's action
format; `anthropic_messages` (with `anthropic_script`, `anthropic_sse`, `playwright_snapshot`):
Anthropic Messages, streamed, with tool calls to Playwright MCP for Claude Code."""
