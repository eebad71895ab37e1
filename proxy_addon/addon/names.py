"""The names a request carries or is sent to, and the URLs it is matched under (docs/security.md,
the proxy's rule 1).

A request names its host in up to five places: the Host header (each one, each comma part),
HTTP/2's :authority, the absolute-form URL or CONNECT target the proxy connects to (regular
mode), and the TLS SNI. It is matched under every one of them, each with and without its port;
in transparent mode the connection's original destination is an IP the proxy connects to, not a
name the request gives.
"""

from __future__ import annotations

import functools
import socket
from typing import NamedTuple

from mitmproxy import http

from proxy_addon.matching.urls import DEFAULT_PORTS, canonical_host, split_authority, url_path

__all__ = [
    "Addressing",
    "Name",
    "address_literal",
    "addressing",
    "candidate_origins",
    "candidate_urls",
    "default_port",
    "url_host",
]


_V4_MAPPED = bytes(10) + b"\xff\xff"


def address_literal(host: str) -> str | None:
    """The IP address a host string denotes without DNS, as getaddrinfo reads it (also the
    decimal, octal and hex IPv4 forms), unmapped from ::ffff:a.b.c.d; else None."""
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not bare or (bare[-1].isalpha() and ":" not in bare and bare[:2].lower() != "0x"):
        return None  # a DNS name: its last label is no number (the common case, decided first)
    if ":" in bare:
        try:
            packed = socket.inet_pton(socket.AF_INET6, bare.split("%", 1)[0])
        except OSError:
            return None
        if packed[:12] != _V4_MAPPED:
            return socket.inet_ntop(socket.AF_INET6, packed)
        return socket.inet_ntoa(packed[12:])
    try:  # inet_aton takes 3232235777, 0300.0250.1.1, 0xc0a80101 as getaddrinfo does
        return socket.inet_ntoa(socket.inet_aton(bare))
    except OSError:
        return None


class Name(NamedTuple):
    """One host name a request gives, canonical (lower-case, IDNA, no trailing dot)."""

    host: str
    port: int | None
    source: str
    """Where it was read: Host, :authority, target (CONNECT or absolute-form), SNI."""

    def __str__(self) -> str:
        shown = self.host if self.port is None else f"{self.host}:{self.port}"
        return f"{self.source} {shown}"


class Addressing(NamedTuple):
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


def _reading(
    authority: str, hosts: tuple[bytes, ...], host: str, port: int, named: bool, sni: str
) -> tuple[tuple[Name, ...], tuple[str, int]]:
    """The names a request gives and its destination (host canonical), read once for all."""
    destination = (url_host(host), port)
    found: list[Name | None] = [_name(authority, ":authority")] if authority else []
    for value in hosts:
        text = value.decode("utf-8", "surrogateescape")
        found += (_name(part, "Host") for part in text.split(","))
    named_target = Name(destination[0], port, "target") if named else None
    found += [named_target, _name(sni, "SNI") if sni else None]
    # one name per (host, port), the first place it was given: the rest say nothing new
    unique = {(n.host, n.port): n for n in reversed(found) if n is not None}
    return tuple(reversed(unique.values())), destination


_cached_reading = functools.lru_cache(maxsize=1024)(_reading)
"""A proxy sees the same few names on every request; long ones (a forged 1 MB Host) are not
kept, so the cache stays small."""
_CACHED_UP_TO = 512


def addressing(flow: http.HTTPFlow) -> Addressing:
    """The names of a mitmproxy flow's request and its destination (request.host and port:
    the CONNECT target, the absolute-form host, or the transparent original destination)."""
    req = flow.request
    authority = req.authority if req.is_http2 or req.is_http3 else ""
    hosts = tuple(v for k, v in req.headers.fields if k.lower() == b"host")
    mode = flow.client_conn.proxy_mode
    host = req.host
    named = bool(host) and (mode is None or mode.type_name not in _TRANSPARENT)
    sni = flow.client_conn.sni or ""
    size = len(authority) + len(host) + len(sni) + sum(map(len, hosts))
    read = _cached_reading if size <= _CACHED_UP_TO else _reading
    names, destination = read(authority, hosts, host, req.port, named, sni)
    return Addressing(req.scheme, names, destination, req.path)


def candidate_urls(
    scheme: str, names: tuple[Name, ...], extra: tuple[str, ...], port: int, target: str
) -> tuple[str, ...]:
    """Every origin the request names, with its port and without, then the extra hosts (on the
    destination port and without); each + target. The first is the URL the log records."""
    path = url_path(target)
    return tuple(origin + path for origin in candidate_origins(scheme, names, extra, port))


def candidate_origins(
    scheme: str, names: tuple[Name, ...], extra: tuple[str, ...], port: int
) -> tuple[str, ...]:
    """candidate_urls without the target: `scheme://host[:port]` of each."""
    scheme = scheme.lower()
    # Names are canonical already: only the default port is left out.
    default = DEFAULT_PORTS.get(scheme)
    hosts = [(n.host, n.port) for n in names] + [(h, port) for h in extra]
    origins: list[str] = []
    for host, given in hosts:
        with_port = f"{scheme}://{host}:{given}" if given not in (None, default) else None
        origins += [with_port, f"{scheme}://{host}"] if with_port else [f"{scheme}://{host}"]
    return tuple(dict.fromkeys(origins))


def default_port(scheme: str) -> int | None:
    """The port a Host header without one means."""
    return DEFAULT_PORTS.get(scheme.lower())
