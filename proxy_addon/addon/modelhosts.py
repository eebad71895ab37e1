"""Which requests are the agent's model calls: the clawbench_model_hosts option and the rule.

A request is a model call when the host it names (Host or :authority, else its absolute-form or
CONNECT target) is a model host. The proxy then delivers it to that name, whatever address the
connection was opened to, so a request that names a model host to slip past the matcher can only
ever reach the model host (docs/security.md, the proxy's rule 2: a request goes only where its
names lead).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

from proxy_addon.matching.urls import DEFAULT_PORTS, canonical_host, split_authority

ModelHost = tuple[str, int | None]
"""(canonical host, port); port None: any port."""

OPTION = "clawbench_model_hosts"
HELP = (
    "The agent's model API hosts, HOST[:PORT] or a base URL (https://api.openai.com/v1: its "
    "host and port). Requests to them are LLM calls: never matched as a commit, logged as one "
    "compact line (no bodies), streamed to the agent as they arrive, and their token usage is "
    "totalled in usage.json. Without a port, any port of HOST."
)


def _authority(text: str) -> ModelHost | None:
    """'host[:port]' → (canonical host, port or None); None when it is no plain authority."""
    text = text.strip()
    if not text or "@" in text or any(c in text for c in "/?#\\ \t"):
        return None
    host, port = split_authority(text)
    after_host = text[len(host) :]
    if after_host and (port is None or after_host != f":{port}"):
        return None  # a port that is not a number in range, or something after the host
    if ":" in host and not host.startswith("["):
        try:  # a bare IPv6 address, as a Host header never carries it
            host = f"[{ipaddress.IPv6Address(host)}]"
        except ValueError:
            return None
    name = canonical_host(host)
    return (name, port) if name else None


def parse_model_hosts(specs: Sequence[str]) -> frozenset[ModelHost]:
    """The option's values → model hosts; ValueError names a value that is neither form."""
    hosts: set[ModelHost] = set()
    for spec in specs:
        if not spec.strip():
            continue
        if "://" in spec:
            parts = urlsplit(spec.strip())
            scheme = parts.scheme.lower()
            found = _authority(parts.netloc) if scheme in ("http", "https") else None
            if found is not None:
                found = (found[0], found[1] or DEFAULT_PORTS[scheme])
        else:
            found = _authority(spec)
        if found is None:
            raise ValueError(
                f"{OPTION} {spec!r}: use HOST[:PORT] or a base URL such as "
                "https://api.example.com/v1"
            )
        hosts.add(found)
    return frozenset(hosts)


def request_host(
    scheme: str, host_header: str | None, host: str, port: int
) -> tuple[str, int] | None:
    """(canonical host, port) a request names: Host/:authority, else its target; None when the
    Host header is malformed (such a request is never a model call)."""
    if host_header:
        found = _authority(host_header)
        if found is None:
            return None
        name, given = found
        return name, given or DEFAULT_PORTS.get(scheme.lower(), port)
    name = canonical_host(host)
    return (name, port) if name else None


def is_model_host(hosts: frozenset[ModelHost], name: str, port: int) -> bool:
    """Whether (name, port) is one of hosts (a host given without a port takes any port)."""
    return (name, port) in hosts or (name, None) in hosts


__all__ = ["HELP", "OPTION", "ModelHost", "is_model_host", "parse_model_hosts", "request_host"]
