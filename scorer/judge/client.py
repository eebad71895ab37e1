"""One judge call through the openai client (max_retries=0: the scheduler owns retries).

Chat completions for every api_type but openai-responses (Gemini and Anthropic through their
OpenAI-compatible endpoints). Provider-specific parameters come from the judge's provider
(`scorer.judge.providers`), so only providers known to take them get them; JSON mode is asked
of all and dropped for the rest of the run after a 400 that names response_format. Errors come
back as JudgeCallError with a kind the engine schedules on, and no API key in any message.
"""

from __future__ import annotations

import email.utils
import itertools
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proxy_addon.records import Tokens, tokens_from_usage
from scorer.judge.providers import ChatCall, get_provider

if TYPE_CHECKING:  # imported by the first call: a run whose verdicts are all saved never needs it
    import openai

    from scorer.models_yaml import JudgeConfig  # annotations only: models_yaml imports providers

OFF = frozenset({"off", "none", "disabled", "false", "0", "no"})
REPLY_TOKENS = 4096
"""Output tokens a judge without thinking may spend: prompt v2's reply lists the requirements,
each checked, before its verdict (a reply cut short has no verdict)."""
THINKING_TOKENS = 8192
_IN_OUT = set(Tokens.model_fields)


class JudgeCallError(Exception):
    """kind: rate_limited (re-queue after retry_after), transient (spend a try), format (400 on
    response_format), permanent (give up on this call), fatal (stop the whole batch)."""

    def __init__(self, kind: str, message: str, retry_after: float = 0.0) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Completion:
    text: str | None
    tokens: Tokens
    latency_s: float


def _thinking(cfg: JudgeConfig) -> str | None:
    """The thinking level to ask for, or None for off/unset."""
    level = (cfg.thinking_level or "").strip().lower()
    return None if not level or level in OFF else level


def token_cap(cfg: JudgeConfig) -> str:
    """The body's key that caps this judge's reply."""
    if cfg.endpoint == "responses":
        return "max_output_tokens"
    return get_provider(cfg.provider).token_cap


def call_params(
    cfg: JudgeConfig,
    system: str | None,
    user: str,
    json_mode: bool,
    *,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The JSON body of one call for this judge, its provider's parameters merged in (system
    None: no system message; max_tokens: another cap than the entry's, as the pre-flight's)."""
    provider = get_provider(cfg.provider)
    level = _thinking(cfg)
    if max_tokens is None:
        max_tokens = cfg.max_tokens or (THINKING_TOKENS if level else REPLY_TOKENS)
    if cfg.endpoint == "responses":
        kw: dict[str, Any] = {"model": cfg.name, "input": user}
        if system is not None:
            kw["instructions"] = system
        kw["max_output_tokens"] = max_tokens
        if level and provider.responses_reasoning:
            kw["reasoning"] = {"effort": level}
        else:
            kw["temperature"] = cfg.temperature
        if json_mode:
            kw["text"] = {"format": {"type": "json_object"}}
        return kw
    messages = [] if system is None else [{"role": "system", "content": system}]
    messages.append({"role": "user", "content": user})
    call = ChatCall({"model": cfg.name, "messages": messages}, max_tokens, cfg.temperature)
    provider.chat_thinking(call, level)
    kw = call.body
    kw[token_cap(cfg)] = call.max_tokens
    if call.temperature is not None:
        kw["temperature"] = call.temperature
    if json_mode:
        kw["response_format"] = {"type": "json_object"}
    kw.update(call.extra)
    return kw


def retry_after(headers: Any, default: float = 1.0) -> float:
    """Seconds to wait from retry-after-ms / retry-after (seconds or an HTTP date), 0..120."""
    try:
        if headers is not None and headers.get("retry-after-ms"):
            return min(120.0, max(0.0, float(headers["retry-after-ms"]) / 1000))
        value = headers.get("retry-after") if headers is not None else None
        if value:
            try:
                return min(120.0, max(0.0, float(value)))
            except ValueError:
                when = email.utils.parsedate_to_datetime(value).timestamp()
                return min(120.0, max(0.0, when - time.time()))
    except (TypeError, ValueError):
        pass  # an unreadable header: fall back to the default wait
    return default


def _reply_text(data: Any, endpoint: str) -> tuple[str | None, Tokens]:
    """(assistant text, tokens) of a chat or responses reply body; a body of an unforeseen
    shape gives no text (a blank reply) rather than an exception."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    counted = tokens_from_usage(data.get("usage"))
    tokens = Tokens() if counted is None else Tokens(**counted.model_dump(include=_IN_OUT))
    if endpoint == "responses":
        output = data.get("output")
        parts = [
            c.get("text") if isinstance(c.get("text"), str) else ""
            for item in (output if isinstance(output, list) else [])
            if isinstance(item, dict) and item.get("type") == "message"
            for c in (item.get("content") if isinstance(item.get("content"), list) else [])
            if isinstance(c, dict) and c.get("type") == "output_text"
        ]
        text = "".join(parts) if parts else data.get("output_text")
    else:
        choices = data.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        text = message.get("content") if isinstance(message, dict) else None
    return (text if isinstance(text, str) else None), tokens


class JudgeClient:
    """AsyncOpenAI clients (one per API key, used in turn) for one judge entry."""

    def __init__(self, cfg: JudgeConfig, timeout: float) -> None:
        from openai import AsyncOpenAI  # imported on first use: a cached re-run never needs it

        self.cfg = cfg
        self.timeout = timeout
        self.json_mode = True
        self._clients = [
            AsyncOpenAI(api_key=key, base_url=cfg.base_url, max_retries=0, timeout=timeout)
            for key in cfg.api_keys
        ]
        self._turn = itertools.cycle(self._clients)

    def scrub(self, text: str) -> str:
        """text with every API key of this judge replaced."""
        for key in self.cfg.api_keys:
            if key:
                text = text.replace(key, "[REDACTED]")
        return text

    async def complete(self, system: str, user: str) -> Completion:
        """One call; JudgeCallError on anything but a reply."""
        import openai

        json_mode = self.json_mode  # this call's, even if another call turns it off meanwhile
        body = call_params(self.cfg, system, user, json_mode)
        path = "/responses" if self.cfg.endpoint == "responses" else "/chat/completions"
        start = time.monotonic()
        try:
            # client.post, the SDK's documented way to send a body as is
            data: Any = await next(self._turn).post(path, cast_to=object, body=body)
            text, tokens = _reply_text(data, self.cfg.endpoint)
        except openai.APIError as e:
            raise self._call_error(e, json_mode) from None
        except (ValueError, TypeError, KeyError) as e:
            raise JudgeCallError("transient", f"unreadable reply: {self.scrub(str(e))}") from None
        return Completion(text, tokens, time.monotonic() - start)

    def _fatal(self, what: str, e: openai.APIError) -> JudgeCallError:
        """A fatal error naming the judge entry and where it came from (never a key)."""
        return JudgeCallError("fatal", f"{what}: {self.scrub(str(e.message))[:200]}")

    def _call_error(self, e: openai.APIError, json_mode: bool) -> JudgeCallError:
        """What the scheduler should do about an API error (its kind), in words without keys."""
        import openai

        name, source = self.cfg.name, self.cfg.source
        if isinstance(e, openai.RateLimitError):
            if e.code == "insufficient_quota":  # OpenAI's "no credit left": waiting won't help
                why = f"the judge account of {name} has no quota left (HTTP 429 insufficient_quota"
                return self._fatal(f"{why}, {source})", e)
            return JudgeCallError(
                "rate_limited", "HTTP 429 rate limited", retry_after(e.response.headers)
            )
        if isinstance(e, openai.BadRequestError):
            message = self.scrub(str(e.message))
            wants_format = json_mode and (
                "response_format" in message or e.param == "response_format"
            )
            return JudgeCallError(
                "format" if wants_format else "permanent", f"HTTP 400: {message[:300]}"
            )
        if isinstance(e, openai.AuthenticationError | openai.PermissionDeniedError):
            why = f"the judge refused the API key of {name} (HTTP {e.status_code}, {source})"
            return self._fatal(why, e)
        if isinstance(e, openai.NotFoundError):
            why = f"the judge endpoint {self.cfg.base_url} has no model {name!r} or no "
            return self._fatal(f"{why}{self.cfg.endpoint} API (HTTP 404)", e)
        if isinstance(e, openai.APIStatusError):
            if e.status_code == 402:  # DeepSeek's "insufficient balance": no call will pass
                return self._fatal(
                    f"the judge account of {name} cannot pay for calls (HTTP 402, {source})", e
                )
            transient = e.status_code >= 500 or e.status_code in (408, 409)
            message = f"HTTP {e.status_code}: {self.scrub(str(e.message))[:300]}"
            return JudgeCallError("transient" if transient else "permanent", message)
        if isinstance(e, openai.APITimeoutError):
            return JudgeCallError("transient", f"timed out after {self.timeout:g} s")
        if isinstance(e, openai.APIConnectionError):
            return JudgeCallError("transient", f"connection failed: {self.scrub(str(e))}")
        return JudgeCallError("transient", f"unreadable reply: {self.scrub(str(e))}")

    async def close(self) -> None:
        for client in self._clients:
            await client.close()


__all__ = [
    "OFF",
    "Completion",
    "JudgeCallError",
    "JudgeClient",
    "call_params",
    "retry_after",
    "token_cap",
]
