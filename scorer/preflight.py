"""Pre-flight: one tiny call to a model endpoint before anything is spent on it.

A judge, or the model an agent harness drives, that will fail every call (a refused key, a wrong
model name or base_url, a port nothing listens on, no credit left) is found here with one
one-token completion, and the command stops with one line naming the entry, the URL and what
came back, before any container starts or any verdict is asked. `--no-preflight` skips it.

A 429 that is only a rate limit passes (the key works); the call is sent as the caller's own
would be, and the API's error is named by its type or code and a short message, never a key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from scorer.judge import call_params, token_cap
from scorer.models_yaml import JudgeConfig

PROMPT = "ClawBench pre-flight check: reply with OK."
"""The pre-flight call's only message (a scripted test server may recognise it)."""
TIMEOUT = 30.0


class PreflightFailed(ValueError):
    """An endpoint failed its pre-flight call; the message names the entry, URL and reply."""


@dataclass(frozen=True)
class Endpoint:
    """One model endpoint to check: who it is for, where, and the call (key kept out of repr)."""

    role: str
    """What it is for, as the message names it: "judge" or "agent model"."""
    entry: str
    source: str
    """Where the entry comes from (a models.yaml, or "built-in")."""
    url: str
    body: dict[str, Any]
    headers: dict[str, str] = field(repr=False)
    keys: tuple[str, ...] = field(default=(), repr=False)
    max_tokens_key: str | None = None
    """The body's key that caps the reply (dropped and retried once if the API refuses it)."""


def chat_endpoint(
    role: str, entry: str, source: str, base_url: str, model: str, key: str
) -> Endpoint:
    """An OpenAI-compatible chat completions endpoint (a judge, browser-use's model)."""
    body = {"model": model, "messages": [{"role": "user", "content": PROMPT}], "max_tokens": 1}
    headers = {"authorization": f"Bearer {key}"}
    url = base_url.rstrip("/") + "/chat/completions"
    return Endpoint(role, entry, source, url, body, headers, (key,), "max_tokens")


def judge_endpoint(cfg: JudgeConfig) -> Endpoint:
    """The judge's endpoint as its client calls it (the first of its keys): the body its
    provider's parameters make (scorer.judge.providers), with a tiny reply cap."""
    key = cfg.api_keys[0] if cfg.api_keys else ""
    responses = cfg.endpoint == "responses"
    cap = 16 if responses else 1
    body = call_params(cfg, None, PROMPT, json_mode=False, max_tokens=cap)
    url = cfg.base_url.rstrip("/") + ("/responses" if responses else "/chat/completions")
    headers = {"authorization": f"Bearer {key}"}
    cap_key = None if responses else token_cap(cfg)
    return Endpoint("judge", cfg.name, cfg.source, url, body, headers, cfg.api_keys, cap_key)


def messages_endpoint(
    role: str, entry: str, source: str, url: str, model: str, key: str
) -> Endpoint:
    """An Anthropic Messages endpoint (Claude Code's model); url is the messages URL."""
    body = {"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": PROMPT}]}
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    return Endpoint(role, entry, source, url, body, headers, (key,))


SCRUBBED = 8
"""Keys at least this long are cut out of messages (a shorter one is no secret, and replacing
it would garble the words it occurs in)."""


def _scrub(text: str, keys: tuple[str, ...]) -> str:
    for key in keys:
        if len(key) >= SCRUBBED:
            text = text.replace(key, "[REDACTED]")
    return " ".join(text.split())


def _api_error(raw: bytes) -> tuple[str, str]:
    """(the error's type or code, its message) from an API error body, as far as it has them."""
    try:
        data = json.loads(raw)
    except ValueError:
        return "", raw[:200].decode("utf-8", "replace")
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, str):
        return "", error
    if not isinstance(error, dict):
        return "", ""
    named = error.get("code") or error.get("type") or ""
    return str(named), str(error.get("message") or "")


def _what_it_means(status: int, named: str, message: str) -> str | None:
    """What a reply's status says about the setting to fix; None when the call passed."""
    said = f"{named} {message}".lower()
    quota = any(w in said for w in ("quota", "credit", "billing", "balance"))
    if 200 <= status < 300 or (status == 429 and not quota):
        return None
    if status == 402 or quota:
        return "no quota or credit left on this key"
    if status in (401, 403):
        return "the key was refused: check the entry's api_key (and its environment variable)"
    if status == 404:
        return "the model name or the base_url is wrong"
    if status >= 500:
        return "the endpoint is failing"
    return "the call was refused: check the model name and the entry's settings"


def check_endpoint(endpoint: Endpoint, timeout: float = TIMEOUT) -> None:
    """One tiny call to endpoint; PreflightFailed naming the entry, URL and reply if it fails."""
    import httpx

    who = f"{endpoint.role} {endpoint.entry!r} ({endpoint.source})"
    body = dict(endpoint.body)
    for attempt in (1, 2):
        try:
            reply = httpx.post(endpoint.url, json=body, headers=endpoint.headers, timeout=timeout)
        except httpx.TimeoutException:
            raise PreflightFailed(
                f"pre-flight: {who}: no answer from {endpoint.url} in {timeout:g} s "
                "(check the base_url and that the endpoint is up; --no-preflight skips this)"
            ) from None
        except httpx.HTTPError as e:
            why = _scrub(f"{type(e).__name__}: {e}", endpoint.keys)[:300]
            raise PreflightFailed(
                f"pre-flight: {who}: could not reach {endpoint.url}: {why} (check the base_url; "
                "--no-preflight skips this)"
            ) from None
        named, message = _api_error(reply.content)
        named, message = _scrub(named, endpoint.keys)[:80], _scrub(message, endpoint.keys)[:200]
        cap = endpoint.max_tokens_key
        if reply.status_code == 400 and attempt == 1 and cap and cap in f"{named} {message}":
            body.pop(cap, None)  # an API that takes another cap (max_completion_tokens)
            continue
        meaning = _what_it_means(reply.status_code, named, message)
        if meaning is None:
            return
        said = ": ".join(s for s in (named, message) if s)
        raise PreflightFailed(
            f"pre-flight: {who}: {endpoint.url} answered HTTP {reply.status_code}"
            f"{f' ({said})' if said else ''}: {meaning} (--no-preflight skips this check)"
        )


def check_judges(configs: list[JudgeConfig], timeout: float = TIMEOUT) -> None:
    """check_endpoint for each judge."""
    for cfg in configs:
        check_endpoint(judge_endpoint(cfg), timeout)


__all__ = [
    "PROMPT",
    "Endpoint",
    "PreflightFailed",
    "chat_endpoint",
    "check_endpoint",
    "check_judges",
    "judge_endpoint",
    "messages_endpoint",
]
