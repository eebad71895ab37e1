"""The addon's own parts: its mitmproxy options (`options`), what a request names and where it
may go (`names`, `destination`, `private`), its evaluation against the matcher (`evaluation`),
the log lines and the interception record (`requestlog`, `runfiles`), the agent's model calls
(`modelhosts`, `modeltraffic`, `usage`), and a launcher that starts mitmdump with it."""

from __future__ import annotations

from proxy_addon.addon.launcher import ProxyProcess, ProxyStartError, proxy_argv, start_proxy
from proxy_addon.addon.modelapi import ENDPOINT_OPTION, KEY_OPTION, NAME_OPTION, key_fingerprint
from proxy_addon.addon.modelhosts import OPTION as MODEL_HOSTS_OPTION

__all__ = [
    "ENDPOINT_OPTION",
    "KEY_OPTION",
    "MODEL_HOSTS_OPTION",
    "NAME_OPTION",
    "ProxyProcess",
    "ProxyStartError",
    "key_fingerprint",
    "proxy_argv",
    "start_proxy",
]
