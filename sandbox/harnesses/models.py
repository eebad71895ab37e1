"""--model NAME for a harness: a models.yaml entry (the judge's format and ${ENV} expansion)
resolved before any container starts, and the environment that hands it to the driver.

The key travels only in the container's config.json (root 0600) and from there in the agent's
environment; run-meta.json lists the variable names, never the values. The proxy is told what
the run's own model calls look like (their URL, model and a keyed hash of the key, never the
key), so that only they decide whether the model API failed the run (docs/formats.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from proxy_addon.addon import ENDPOINT_OPTION, KEY_OPTION, NAME_OPTION, key_fingerprint
from proxy_addon.addon import MODEL_HOSTS_OPTION as MODEL_HOSTS
from sandbox.harnesses import Harness
from sandbox.harnesses.claude_code import anthropic_base_url
from scorer.models_yaml import ConfigError, entry_config, read_models_yaml


class ModelUnavailable(ValueError):
    """--model does not resolve for this harness; the message names the file, entry and fix."""


@dataclass(frozen=True)
class AgentModel:
    """The model a harness drives: where, how, and the key (never printed)."""

    name: str
    base_url: str
    api_type: str
    api_key: str = field(repr=False)
    source: str = "models.yaml"
    """Where the entry comes from (the models.yaml's path), for messages."""

    @property
    def host(self) -> str:
        """host:port of the model API, for the proxy's clawbench_model_hosts."""
        url = urlsplit(self.base_url)
        port = url.port or (443 if url.scheme == "https" else 80)
        host = url.hostname or ""
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    @property
    def call_url(self) -> str:
        """The URL the harness's model calls go to (as its client builds it from base_url)."""
        if self.api_type == "anthropic-messages":
            return anthropic_base_url(self.base_url) + "/v1/messages"
        return self.base_url.rstrip("/") + "/chat/completions"

    def proxy_options(self) -> dict[str, list[str] | str]:
        """The proxy's model options: the host, and what the run's own calls look like."""
        return {
            MODEL_HOSTS: [self.host],
            ENDPOINT_OPTION: [self.call_url],
            NAME_OPTION: self.name,
            KEY_OPTION: key_fingerprint(self.api_key),
        }

    def env(self) -> dict[str, str]:
        """The driver's model variables."""
        return {
            "CLAWBENCH_AGENT_MODEL": self.name,
            "CLAWBENCH_AGENT_BASE_URL": self.base_url,
            "CLAWBENCH_AGENT_API_TYPE": self.api_type,
            "CLAWBENCH_AGENT_API_KEY": self.api_key,
        }


def resolve_agent_model(
    harness: Harness, name: str, models_yaml: Path | None, flag: str | None = None
) -> AgentModel:
    """The models.yaml entry `name`, checked against what the harness can call. `flag` is the
    calling command's option naming the model (default: --model, given with --harness)."""
    option = flag or "--model"
    given = option if flag else f"--harness {harness.name} --model"
    if models_yaml is None:
        raise ModelUnavailable(
            f"{given} {name}: give --models-yaml FILE with an entry "
            f"{name!r} (base_url, api_type, api_key)"
        )
    model = model_entry(name, models_yaml, option)
    if model.api_type not in harness.model_apis:
        raise ModelUnavailable(
            f"{models_yaml}: entry {name!r} api_type {model.api_type!r}: harness "
            f"{harness.name} calls {', '.join(harness.model_apis)}; use an entry of that type"
        )
    return model


def model_entry(name: str, models_yaml: Path, option: str = "--model") -> AgentModel:
    """The models.yaml entry `name` as an agent's model, whatever harness calls it (option: the
    flag that named it, for messages)."""
    try:
        entries = read_models_yaml(models_yaml)
        if name not in entries:
            known = ", ".join(sorted(map(str, entries))) or "none"
            raise ModelUnavailable(
                f"{models_yaml}: no entry {name!r} for {option} (entries: {known}); add one "
                "with base_url, api_type and api_key"
            )
        config = entry_config(name, entries[name], str(models_yaml))
    except ConfigError as e:
        raise ModelUnavailable(f"{option}: {e}") from e
    # base_url as the OpenAI client takes it (an Anthropic entry ends in /v1): each driver knows
    # its API's convention.
    key = config.api_keys[0]
    return AgentModel(name, config.base_url, config.api_type, key, str(models_yaml))


__all__ = ["AgentModel", "ModelUnavailable", "model_entry", "resolve_agent_model"]
