"""Judge providers: which models.yaml entries are a provider's, and the parameters only it takes.

A provider is one module in this package that registers itself (`register(Provider(...))`), as
deepseek.py does; nothing else changes to add one. An entry is a provider's by its api_type
(`google-generative-ai`, `anthropic-messages`), else by its base_url's host; any other entry is
`generic` and gets no provider-specific parameter. The judge's client and its pre-flight build
their calls through the provider (`scorer.judge.client.call_params`).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

OPENAI_API_TYPES = ("openai-completions", "openai-responses")
"""The api_types every OpenAI-compatible endpoint speaks; providers may add their own."""


@dataclass
class ChatCall:
    """A chat completions body being built, for a provider to adjust to a thinking level."""

    body: dict[str, Any]
    max_tokens: int
    temperature: float | None
    extra: dict[str, Any] = field(default_factory=dict)
    """Provider-specific keys (what the openai SDK calls extra_body), merged in last."""


def _no_thinking(call: ChatCall, level: str | None) -> None:
    """A provider without a thinking parameter: the call goes as built."""


def _same(base_url: str) -> str:
    return base_url


@dataclass(frozen=True)
class Provider:
    """One judge provider."""

    name: str
    api_types: tuple[str, ...] = ()
    """api_types that are this provider's whatever the host (beyond OPENAI_API_TYPES)."""
    hosts: tuple[str, ...] = ()
    """base_url hosts that are this provider's: a host, or ".domain" for it and every host
    under it."""
    openai_base: Callable[[str], str] = _same
    """An entry of one of its api_types: its base_url → the OpenAI-compatible one."""
    chat_thinking: Callable[[ChatCall, str | None], None] = _no_thinking
    """Set a chat completions call's thinking (level None: off) and what it rules out."""
    token_cap: str = "max_tokens"
    """The chat completions key that caps the reply."""
    responses_reasoning: bool = False
    """Whether its responses endpoint takes reasoning.effort (else a temperature)."""

    def serves_host(self, host: str) -> bool:
        return any(host == h.lstrip(".") or (h[0] == "." and host.endswith(h)) for h in self.hosts)


GENERIC = Provider("generic")
"""Any OpenAI-compatible endpoint no provider claims: no provider-specific parameter."""
PROVIDERS: dict[str, Provider] = {GENERIC.name: GENERIC}


def register(provider: Provider) -> Provider:
    """Add a provider (a module of this package does, on import); a name used twice is an error."""
    if provider.name in PROVIDERS:
        raise ValueError(f"judge provider {provider.name!r} is registered twice")
    PROVIDERS[provider.name] = provider
    return provider


def get_provider(name: str) -> Provider:
    """The provider named; KeyError lists the known ones."""
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join(sorted(PROVIDERS))
        raise KeyError(f"no judge provider named {name!r} (known: {known})") from None


def provider_for(api_type: str, base_url: str) -> Provider:
    """The provider of an entry: by its api_type, else by its base_url's host, else generic."""
    host = (urlsplit(base_url).hostname or "").lower()
    for provider in PROVIDERS.values():
        if api_type in provider.api_types:
            return provider
    for provider in PROVIDERS.values():
        if provider.serves_host(host):
            return provider
    return GENERIC


def api_types() -> tuple[str, ...]:
    """Every api_type a judge can be called with."""
    return OPENAI_API_TYPES + tuple(t for p in PROVIDERS.values() for t in p.api_types)


def openai_base_url(api_type: str, base_url: str) -> str:
    """The OpenAI-compatible base URL for an entry (Gemini and Anthropic have their own)."""
    base = base_url.rstrip("/")
    for provider in PROVIDERS.values():
        if api_type in provider.api_types:
            return provider.openai_base(base)
    return base


def _register_all() -> None:
    """Import every module of this package: each registers its provider."""
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


_register_all()

__all__ = [
    "GENERIC",
    "OPENAI_API_TYPES",
    "PROVIDERS",
    "ChatCall",
    "Provider",
    "api_types",
    "get_provider",
    "openai_base_url",
    "provider_for",
    "register",
]
