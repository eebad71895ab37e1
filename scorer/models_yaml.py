"""The judge's model entry: models.yaml in the reference's format, ${ENV} expansion, the default.

An entry is `name: {base_url, api_type, api_key | api_keys, thinking_level?, temperature?,
max_tokens?, price_per_million_tokens?}`; the entry name is the model id sent to the API. Only the
entry the judge uses is validated, so a models.yaml shared with agent runs may hold entries we
never read. `price_per_million_tokens` {input, output, cached_input?} (USD) prices an agent
model's token usage in the scorer's summaries; read_prices reads it without the entry's keys.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from scorer.judge.providers import api_types, openai_base_url, provider_for

DEFAULT_JUDGE = "deepseek-v4-pro"
"""The judge used unless another is named (docs/formats.md, "The judge's calls")."""
DEFAULT_BASE_URL = "https://api.deepseek.com"
API_TYPES = api_types()
"""Every api_type a judge entry may name (the OpenAI ones and the providers')."""
PRICE_EXAMPLE = "price_per_million_tokens: {input: 1.25, output: 10, cached_input: 0.125}"
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def add_models_yaml_option(p: argparse.ArgumentParser) -> None:
    """The scorer's --models-yaml option (clawbench-score and its calibrate command)."""
    p.add_argument(
        "--models-yaml",
        type=Path,
        metavar="FILE",
        help=f"models.yaml (the reference's format; default: none, only {DEFAULT_JUDGE} built in)",
    )


class ConfigError(ValueError):
    """A judge configuration problem; the message names the file, entry and key."""


class JudgeKeyMissing(ConfigError):
    """The built-in judge's key is not set. The message offers what every command accepts
    (the key, another judge); a command that can score without a judge adds its own way."""


class Price(BaseModel):
    """USD per million tokens. cached_input: for input tokens served from a prompt cache
    (default: the input price)."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)


class ModelEntry(BaseModel):
    """One models.yaml entry; any other key is an error naming the entry and the key."""

    model_config = ConfigDict(extra="forbid", strict=False)

    base_url: str
    api_type: str
    api_key: str | None = None
    api_keys: list[str] | None = None
    thinking_level: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    price_per_million_tokens: Price | None = None


_ENTRY_KEYS = ", ".join(ModelEntry.model_fields)


def _field_error(e: ValidationError, where: str, name: str, keys: str) -> ConfigError:
    """The first problem of an entry, naming the file, the entry and the key."""
    first = e.errors(include_url=False)[0]
    key = ".".join(str(p) for p in first["loc"])
    if first["type"] == "extra_forbidden":
        return ConfigError(f"{where}: entry {name!r} key {key!r}: unknown key (allowed: {keys})")
    return ConfigError(f"{where}: entry {name!r} key {key!r}: {first['msg']}")


@dataclass(frozen=True)
class JudgeConfig:
    """A resolved judge: where to call, how, and with which parameters (keys never printed)."""

    name: str
    base_url: str
    api_type: str
    provider: str  # a registered provider's name (scorer.judge.providers): its extras
    thinking_level: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    source: str = "built-in"
    env_vars: tuple[str, ...] = ()  # the environment variables the entry needs
    param_env_vars: tuple[str, ...] = ()  # those of them that feed cache_params (not keys)
    api_keys: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def endpoint(self) -> str:
        """'responses' for openai-responses, else 'chat' (chat completions)."""
        return "responses" if self.api_type == "openai-responses" else "chat"

    def cache_params(self) -> dict[str, Any]:
        """What changes a verdict: model and parameters (not the URL, never a key)."""
        return {
            "model": self.name,
            "api_type": self.api_type,
            "provider": self.provider,
            "thinking_level": self.thinking_level,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }


def _expand(value: Any, where: str, env: Mapping[str, str]) -> Any:
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            if m.group(1) not in env:
                raise ConfigError(f"{where}: environment variable {m.group(1)} is not set")
            return env[m.group(1)]

        return _ENV_REF.sub(sub, value)
    if isinstance(value, list):
        return [_expand(v, f"{where}[{i}]", env) for i, v in enumerate(value)]
    return value


def read_models_yaml(path: Path) -> dict[str, Any]:
    """The raw name → entry mapping of a models.yaml; ConfigError names the file on a problem."""
    import yaml  # only when a file is named: the default judge needs no YAML

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"{path}: not found (pass --models-yaml FILE)") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: cannot read YAML: {e}") from e
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of model name → entry")
    return data


def entry_config(
    name: str, raw: Any, where: str, env: Mapping[str, str] | None = None
) -> JudgeConfig:
    """Validate one entry (after ${ENV} expansion) into a JudgeConfig."""
    env = os.environ if env is None else env
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: entry {name!r} must be a mapping")
    expanded = {k: _expand(v, f"{where}: entry {name!r} key {k!r}", env) for k, v in raw.items()}
    try:
        entry = ModelEntry.model_validate(expanded)
    except ValidationError as e:
        raise _field_error(e, where, name, _ENTRY_KEYS) from e
    if entry.api_type not in API_TYPES:
        raise ConfigError(
            f"{where}: entry {name!r} api_type {entry.api_type!r} cannot judge "
            f"(use one of {', '.join(API_TYPES)})"
        )
    url = urlsplit(entry.base_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ConfigError(
            f"{where}: entry {name!r} key 'base_url': {entry.base_url!r} is not an http(s) URL "
            "(e.g. https://api.deepseek.com)"
        )
    keys = tuple(k for k in (entry.api_keys or ([entry.api_key] if entry.api_key else [])) if k)
    if not keys:
        raise ConfigError(f"{where}: entry {name!r} has no api_key or api_keys")
    base = openai_base_url(entry.api_type, entry.base_url)

    def referenced(items: Any) -> set[str]:
        return {n for v in items for n in _ENV_REF.findall(json.dumps(v, default=str))}

    names = referenced(raw.values())
    params = referenced(v for k, v in raw.items() if k not in ("api_key", "api_keys"))
    return JudgeConfig(
        name=name,
        base_url=base,
        api_type=entry.api_type,
        provider=provider_for(entry.api_type, base).name,
        thinking_level=entry.thinking_level,
        temperature=0.0 if entry.temperature is None else entry.temperature,
        max_tokens=entry.max_tokens,
        source=where,
        env_vars=tuple(sorted(names)),
        param_env_vars=tuple(sorted(params)),
        api_keys=keys,
    )


class _PriceOnly(BaseModel):
    """An entry read for its price alone: its other keys are the judge's or the agent's."""

    model_config = ConfigDict(extra="ignore")

    price_per_million_tokens: Price | None = None


def read_prices(models_yaml: Path) -> dict[str, Price]:
    """Every entry's price_per_million_tokens (entries without one left out), checked without
    the rest of the entry, so pricing needs no API key; ConfigError names the entry and key."""
    prices: dict[str, Price] = {}
    for name, raw in read_models_yaml(models_yaml).items():
        if not isinstance(raw, dict):
            continue  # not an entry the scorer prices; whoever uses it reports it
        try:
            price = _PriceOnly.model_validate(raw).price_per_million_tokens
        except ValidationError as e:
            problem = _field_error(e, str(models_yaml), str(name), "input, output, cached_input")
            raise ConfigError(f"{problem} (USD per million tokens, e.g. {PRICE_EXAMPLE})") from e
        if price is not None:
            prices[str(name)] = price
    return prices


def default_judge(env: Mapping[str, str] | None = None) -> JudgeConfig:
    """The built-in deepseek-v4-pro: key from DEEPSEEK_API_KEY, thinking off, temperature 0."""
    env = os.environ if env is None else env
    key = env.get("DEEPSEEK_API_KEY", "")
    if not key:
        raise JudgeKeyMissing(
            f"judge {DEFAULT_JUDGE}: DEEPSEEK_API_KEY is not set; set it, or name another judge "
            "with --judge-model and --models-yaml"
        )
    return JudgeConfig(
        name=DEFAULT_JUDGE,
        base_url=env.get("DEEPSEEK_BASE_URL", DEFAULT_BASE_URL).rstrip("/"),
        api_type="openai-completions",
        provider="deepseek",  # our entry: its extras hold wherever DEEPSEEK_BASE_URL points
        thinking_level="off",
        temperature=0.0,
        source="built-in",
        env_vars=("DEEPSEEK_API_KEY",),
        api_keys=(key,),
    )


def resolve_judge(
    name: str, models_yaml: Path | None, env: Mapping[str, str] | None = None
) -> JudgeConfig:
    """The judge named: its models.yaml entry, else the built-in default; else ConfigError
    naming the file, the entry or key at fault and the fix."""
    entries = read_models_yaml(models_yaml) if models_yaml else {}
    if name in entries:
        return entry_config(name, entries[name], str(models_yaml), env)
    if name == DEFAULT_JUDGE:
        return default_judge(env)
    if models_yaml is None:
        raise ConfigError(
            f"judge model {name!r} not found: only {DEFAULT_JUDGE} is built in; pass "
            f"--models-yaml FILE with an entry named {name!r} (base_url, api_type, api_key)"
        )
    known = ", ".join(sorted(map(str, entries))) or "none"
    raise ConfigError(
        f"judge model {name!r} not found in {models_yaml} (entries: {known}); add an entry "
        f"named {name!r} (base_url, api_type, api_key) or name one of those with --judge-model"
    )


__all__ = [
    "API_TYPES",
    "DEFAULT_JUDGE",
    "ConfigError",
    "JudgeConfig",
    "JudgeKeyMissing",
    "ModelEntry",
    "Price",
    "default_judge",
    "entry_config",
    "openai_base_url",
    "read_models_yaml",
    "read_prices",
    "resolve_judge",
]
