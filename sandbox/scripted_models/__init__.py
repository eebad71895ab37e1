"""Scripted model servers that speak real model APIs: fakes of the APIs we call but do not own,
for the tests, bench/ and the demo. They drive the real judge client and real agents without an
LLM.

- `judge`: an OpenAI-compatible judge (chat completions and responses) whose replies a script
  gives; with a latency, a concurrency cap answered by 429 + Retry-After, and counters.
- `openai_chat`: OpenAI chat completions in browser-use's action format (streamed or not).
- `anthropic_messages` (with `anthropic_script`, `anthropic_sse`, `playwright_snapshot`):
  Anthropic Messages, streamed, with tool calls to Playwright MCP for Claude Code.
"""
