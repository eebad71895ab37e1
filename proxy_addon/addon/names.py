"""The names a request carries or is sent to, and the URLs it is matched under (SPEC 3).

A request names its host in up to five places: the Host header (each one, each comma part),
HTTP/2's :authority, the absolute-form URL or CONNECT target the proxy connects to (regular
mode), and the TLS SNI. It is matched under every one of them, each with and without its port;
in transparent mode the connection's original destination is an IP the proxy connects to, not a
name the request gives.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass

from mitmproxy import http

from proxy_addon.matching.urls import (
    DEFAULT_PORTS,
    canonical_host,
    split_authority,
    url_origin,
    url_path,
)

__all__ = [
    "Addressing",
    "Name",
    "address_literal",
    "addressing",
    "candidate_urls",
    "default_port",
    "url_host",
]


def address_literal(host: str) -> str | None:
    """The IP address a host string denotes without DNS, as getaddrinfo reads it (also the
    decimal, octal and hex IPv4 forms), unmapped from ::ffff:a.b.c.d; else None."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        ip = ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        if not bare or (bare[-1].isalpha() and not bare.lower().startswith("0x")):
            return None
        try:  # inet_aton takes 3232235777, 0300.0250.1.1, 0xc0a80101 as getaddrinfo does
            ip = ipaddress.IPv4Address(socket.inet_aton(bare))
        except OSError:
            return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return str(ip)


@dataclass(frozen=True, slots=True)
class Name:
    """One host name a request gives, canonical (lower-case, IDNA, no trailing dot)."""

    host: str
    port: int | None
    source: str
    """Where it was read: Host, :authority, target (CONNECT or absolute-form), SNI."""

    def __str__(self) -> str:
        shown = self.host if self.port is None else f"{self.host}:{self.port}"
        return f"{self.source} {shown}"


@dataclass(frozen=True, slots=True)
class Addressing:
    """What a request names and where the proxy would send it (before any route)."""

    scheme: str
    names: tuple[Name, ...]
    destination: tuple[str, int]
    path: str


_TRANSPARENT = frozenset({"transparent", "local", "wireguard", "tun"})
"""Modes whose request.host is the connection's original destination, not a name it gave."""


def url_host(host: str) -> str:
    """A host as a URL writes it: canonical, an IPv6 address in brackets."""
    host = canonical_host(host)
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _name(authority: str, source: str) -> Name | None:
    host, port = split_authority(authority)
    host = url_host(host)
    return Name(host, port, source) if host else None


def addressing(flow: http.HTTPFlow) -> Addressing:
    """The names of a mitmproxy flow's request and its destination (request.host and port:
    the CONNECT target, the absolute-form host, or the transparent original destination)."""
    req = flow.request
    found: list[Name | None] = []
    if req.is_http2 or req.is_http3:
        found.append(_name(req.authority, ":authority"))
    for value in req.headers.get_all("host"):
        found += (_name(part, "Host") for part in value.split(","))
    mode = flow.client_conn.proxy_mode
    if req.host and (mode is None or mode.type_name not in _TRANSPARENT):
        found.append(Name(url_host(req.host), req.port, "target"))
    if flow.client_conn.sni:
        found.append(_name(flow.client_conn.sni, "SNI"))
    names = tuple(dict.fromkeys(n for n in found if n is not None))
    return Addressing(req.scheme, names, (url_host(req.host), req.port), req.path)


def candidate_urls(
    scheme: str, names: tuple[Name, ...], extra: tuple[str, ...], port: int, target: str
) -> tuple[str, ...]:
    """Every origin the request names, with its port and without, then the extra hosts (on the
    destination port and without); each + target. The first is the URL the log records."""
    origins: list[str] = []
    for name in names:
        origins.append(url_origin(scheme, name.host, name.port))
        origins.append(url_origin(scheme, name.host, None))
    for host in extra:
        origins.append(url_origin(scheme, host, port))
        origins.append(url_origin(scheme, host, None))
    path = url_path(target)
    return tuple(origin + path for origin in dict.fromkeys(origins))


def default_port(scheme: str) -> int | None:
    """The port a Host header without one means."""
    return DEFAULT_PORTS.get(scheme.lower())
