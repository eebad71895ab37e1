"""Scripted model servers that speak real model APIs, for tests, benchmarks and the demo: they
drive real agents and the real judge client without an LLM (`openai_chat`: OpenAI chat
completions for agents such as browser-use)."""
