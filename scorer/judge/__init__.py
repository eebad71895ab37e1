"""The LLM judge (SPEC section 6), apart from any batch.

- client: one call through the openai client; errors come back with a kind to schedule on
- prompts: the two rubrics, the request dump, per-call delimiters, prompt_version
- verdict: a reply parsed into a tri-state verdict; data/judge.json's model
- cache: the cache key over the inputs, our saved verdicts and the reference's priors
- limiter: AIMD concurrency (halve on 429, +1 per success)
- scheduler: many calls through one client: retries, 429s re-queued, a fatal error stops all
"""
