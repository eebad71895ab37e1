"""Private destinations (docs/security.md, the proxy's rule 3): which addresses are not the public
internet, and the operator's list of those the proxy may reach anyway (clawbench_allow_private)."""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Sequence

__all__ = ["AllowList", "private_kind"]

_METADATA = frozenset(map(ipaddress.ip_address, ("169.254.169.254", "fd00:ec2::254")))
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_6TO4 = ipaddress.ip_network("2002::/16")


def _embedded(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for on the wire (mapped, NAT64, 6to4), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour


@functools.lru_cache(maxsize=1024)  # parsing an address costs more than the rest of a request
def private_kind(address: str) -> str | None:
    """Why a destination address is not the public internet, or None when it is."""
    ip = ipaddress.ip_address(address)
    inner = _embedded(ip)
    if inner is not None and (kind := private_kind(str(inner))):
        return f"{kind} ({inner} inside {ip})"
    if ip in _METADATA:
        return "cloud metadata"
    checks = (
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (ip.is_unspecified, "unspecified"),
        (ip.is_multicast, "multicast"),
        (ip.is_private or ip in _CGNAT, "private"),
        (not ip.is_global, "reserved"),
    )
    return next((kind for hit, kind in checks if hit), None)


class AllowList:
    """clawbench_allow_private: CIDR, CIDR:PORT or [IPv6 CIDR]:PORT entries."""

    def __init__(self, specs: Sequence[str]) -> None:
        self.entries: list[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, int | None]] = []
        for spec in specs:
            text, port = spec.strip(), None
            if text.startswith("["):
                text, _, rest = text[1:].partition("]")
                if rest:
                    port = int(rest[1:]) if rest.startswith(":") and rest[1:].isdigit() else -1
            elif text.count(":") == 1:
                text, _, rest = text.partition(":")
                port = int(rest) if rest.isdigit() else -1
            try:
                network = ipaddress.ip_network(text, strict=False)
            except ValueError:
                network = None
            if network is None or port == -1 or (port is not None and not 0 < port < 65536):
                raise ValueError(
                    f"clawbench_allow_private {spec!r}: use CIDR, CIDR:PORT or [IPV6-CIDR]:PORT, "
                    "e.g. 10.0.0.0/8 or 127.0.0.1:7878"
                )
            self.entries.append((network, port))

    def allows(self, address: str, port: int) -> bool:
        ip = ipaddress.ip_address(address)
        return any(ip in net and want in (None, port) for net, want in self.entries)
