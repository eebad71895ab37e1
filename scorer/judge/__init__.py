"""The LLM judge (docs/formats.md, "The judge"), apart from any batch.

- evidence: what the judge is given (JudgeInput): the request dump and the proxy's facts about
  it, the run's date, the user information the agent had
- client: one call through the openai client; errors come back with a kind to schedule on
- prompts: prompt v2 (requirements first, then match / no_match / cannot_tell), the two
  rubrics, per-call delimiters, prompt_version
- verdict: a reply parsed into a verdict (or none: a judge error); data/judge.json's model
- cache: the cache key over the inputs, our saved verdicts and the reference's priors
- limiter: AIMD concurrency (halve on 429, +1 per success)
- scheduler: many calls through one client: retries, 429s re-queued, a fatal error stops all
"""
