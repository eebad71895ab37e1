"""Scripted model servers on loopback: fakes of the model APIs we call but do not own.

- judge: an OpenAI-compatible judge (chat completions and responses) whose replies a script
  gives; with a latency, a concurrency cap answered by 429 + Retry-After, and counters. Used by
  the tests, bench/ and the demo when no judge key is set.
"""
