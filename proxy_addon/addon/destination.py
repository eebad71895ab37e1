"""Where a request goes and whether it may (docs/security.md, the proxy's rules 2 and 3).

A request is forwarded only where all its names lead: routed names to the one route they share,
others to the addresses DNS gives them, which must include the address the proxy connects to,
on the port the names give. A request naming no host, or whose names disagree with its
destination, is refused. So is a destination that is loopback, link-local, cloud metadata or
private (proxy_addon.addon.private), unless clawbench_allow_private, a route or a model host
names it. A request whose names all agree with a destination that does not resolve is refused
too, and marked `unresolved`: it can go nowhere, and if it is the commit the addon blocks and
credits it all the same (a block needs no connection).
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterable
from typing import Any, NamedTuple

from proxy_addon.addon.names import (
    Addressing,
    Name,
    address_literal,
    candidate_origins,
    candidate_urls,
    default_port,
    url_host,
)
from proxy_addon.addon.private import AllowList, private_kind
from proxy_addon.matching.urls import url_path

__all__ = ["Destinations", "Placement", "Resolver", "Route"]


class Route(NamedTuple):
    """clawbench_route's target for a host: where its requests go instead."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


DECIDED_FOR = 1.0
"""Seconds a decision on the same names and destination is reused (a browser sends dozens of
requests a second to one host; the addresses behind names change far more slowly)."""
DECIDED_SIZE = 1024


class Resolver:
    """Host → addresses, as getaddrinfo gives them (the proxy's own resolver), kept a while."""

    def __init__(self, ttl: float = 30.0, negative_ttl: float = 5.0, size: int = 4096) -> None:
        self.ttl, self.negative_ttl, self.size = ttl, negative_ttl, size
        self._known: dict[str, tuple[float, frozenset[str]]] = {}

    def known(self, host: str) -> frozenset[str] | None:
        """The addresses of host, None if not resolved lately (an IP literal is its own)."""
        literal = address_literal(host)
        if literal is not None:
            return frozenset((literal,))
        hit = self._known.get(host)
        return hit[1] if hit is not None and hit[0] > time.monotonic() else None

    async def resolve(self, hosts: Iterable[str]) -> None:
        """Look hosts up at once (the event loop's resolver threads)."""
        wanted = sorted(set(hosts))
        answers = await asyncio.gather(*(self._lookup(h) for h in wanted))
        if len(self._known) + len(wanted) > self.size:
            self._known.clear()
        now = time.monotonic()
        for host, found in zip(wanted, answers, strict=True):
            self._known[host] = (now + (self.ttl if found else self.negative_ttl), found)

    @staticmethod
    async def _lookup(host: str) -> frozenset[str]:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(
                host.strip("[]"), None, type=socket.SOCK_STREAM
            )
        except (OSError, UnicodeError):
            return frozenset()
        return frozenset(a for info in infos if (a := address_literal(str(info[4][0]))))


class Placement(NamedTuple):
    """The decision on where one request goes: refused (why), routed, or to its addresses."""

    urls: tuple[str, ...]
    """The URLs it is matched under; the first is the one the log records."""
    refused: str | None = None
    route: Route | None = None
    unresolved: bool = False
    """Refused only because its destination's name has no address (every name agrees with it)."""


class Unresolved(NamedTuple):
    """The refusal of a request whose names agree with a destination that has no address."""

    why: str


def _via(route: Route | None) -> str:
    return f"is routed to {route}" if route else "has no route"


def _shown(addresses: Iterable[str]) -> str:
    return ", ".join(sorted(addresses)) or "no address"


class Destinations:
    """Routes, the allow list and the resolver: the placement of each request."""

    def __init__(
        self,
        routes: dict[str, Route],
        allow: AllowList,
        pattern_hosts: tuple[str, ...],
        resolver: Resolver,
        model_hosts: frozenset[tuple[str, int | None]] = frozenset(),
    ) -> None:
        self.routes, self.allow, self.resolver = routes, allow, resolver
        self.model_hosts = model_hosts
        self._decided: dict[tuple[Any, ...], tuple[float, Any]] = {}
        self.pattern_hosts = pattern_hosts
        self._route_ips = {r: _now(r.host) for r in set(routes.values())}
        self.route_addresses = frozenset(
            (ip, r.port) for r, ips in self._route_ips.items() for ip in ips
        )

    def route_for(self, host: str) -> Route | None:
        return self.routes.get(host.strip("[]")) or self.routes.get("*")

    def operator_named(self, host: str, port: int) -> bool:
        """Whether the operator named this destination: a model host (clawbench_model_hosts),
        where the proxy sends the agent's model calls, wherever it is."""
        name = url_host(host)
        return (name, port) in self.model_hosts or (name, None) in self.model_hosts

    def connection_refusal(
        self, address: tuple[str, int] | None, peer: tuple[str, int] | None = None
    ) -> str | None:
        """Why the proxy may not open a connection to address (host, port), or use one that
        reached peer; None if it may (a name is judged by the address it reaches)."""
        if address is None or self.operator_named(*address[:2]):
            return None
        host, port = peer[:2] if peer else address[:2]
        ip = address_literal(str(host))
        return self.allowed(ip, port) if ip else None

    def allowed(self, address: str, port: int) -> str | None:
        """None if the proxy may connect there, else why not."""
        kind = private_kind(address)
        if kind is None or (address, port) in self.route_addresses:
            return None
        if self.allow.allows(address, port):
            return None
        return f"{address} is {kind} (allow it with clawbench_allow_private)"

    def place(self, a: Addressing) -> Placement | None:
        """Where the request goes, or why it may not; None when that needs a host the resolver
        does not know yet (settle() looks it up first)."""
        port = a.destination[1]
        if not a.names:  # logged under the address it was sent to
            urls = candidate_urls(a.scheme, (), a.destination[:1], port, a.path)[:1]
            return Placement(urls, refused="it names no host (no Host, :authority, target, SNI)")
        key = (a.scheme, a.names, a.destination)
        now = time.monotonic()
        hit = self._decided.get(key)
        if hit is not None and now - hit[0] < DECIDED_FOR:
            refused, route, origins = hit[1]
        elif self._unresolved(a):
            return None
        else:
            refused, route, extra = self._decide(a)
            origins = candidate_origins(a.scheme, a.names, extra, port)
            if len(self._decided) >= DECIDED_SIZE:
                self._decided.clear()
            self._decided[key] = (now, (refused, route, origins))
        path = url_path(a.path)
        urls = tuple(origin + path for origin in origins)
        if isinstance(refused, Unresolved):
            return Placement(urls, refused.why, route, unresolved=True)
        return Placement(urls, refused, route)

    async def settle(self, a: Addressing) -> Placement:
        """place(), the hosts it needs looked up first."""
        placed = self.place(a)
        if placed is None:
            await self.resolver.resolve(self._unresolved(a))
            placed = self.place(a)
        # Every host it needs is known now (for the resolver's TTL, far longer than this).
        assert placed is not None
        return placed

    def _unresolved(self, a: Addressing) -> set[str]:
        """Hosts whose addresses the decision needs and the resolver does not know yet."""
        if any(self.route_for(n.host) for n in a.names):
            return set()
        dest = a.destination[0]
        hosts = {dest, *(n.host for n in a.names if n.host != dest)}
        if all(address_literal(n.host) for n in a.names):
            hosts.update(h for h in self.pattern_hosts if self.route_for(h) is None)
        return {h for h in hosts if self.resolver.known(h) is None}

    def _decide(
        self, a: Addressing
    ) -> tuple[str | Unresolved | None, Route | None, tuple[str, ...]]:
        """(why refused, the route, the pattern's hosts it is also matched under)."""
        routes = [(n, self.route_for(n.host)) for n in a.names]
        if any(r for _, r in routes):
            return *self._routed(routes), ()
        dest = self.resolver.known(a.destination[0]) or frozenset()
        why = self._refusal(a, dest)
        if why is not None or not all(address_literal(n.host) for n in a.names):
            return why, None, ()
        port = a.destination[1]
        return None, None, tuple(h for h in self.pattern_hosts if self._leads(h, dest, port))

    def _refusal(self, a: Addressing, dest: frozenset[str]) -> str | Unresolved | None:
        dest_host, dest_port = a.destination
        for name in a.names:
            why = self._disagrees(name, a.scheme, dest_host, dest_port, dest)
            if why:
                return why
        if not dest:  # every name agrees with it: a commit is still blocked and credited
            return Unresolved(f"its destination {dest_host} has no address")
        for address in sorted(dest):
            why = self.allowed(address, dest_port)
            if why:
                return f"its destination {why}"
        return None

    def _routed(self, routes: list[tuple[Name, Route | None]]) -> tuple[str | None, Route | None]:
        """(why refused, None) when routed names disagree, else (None, the route)."""
        (first, target), *rest = routes
        for name, other in rest:
            if other != target:
                why = f"its names disagree: {first} {_via(target)}, {name} {_via(other)}"
                return why, None
        return None, target

    def _disagrees(
        self, name: Name, scheme: str, dest_host: str, dest_port: int, dest: frozenset[str]
    ) -> str | None:
        port = name.port
        if port is None:
            port = default_port(scheme) if name.source in ("Host", ":authority") else dest_port
        if port != dest_port:
            return f"{name} names port {port}, but it goes to port {dest_port}"
        if name.host == dest_host:
            return None
        leads = self.resolver.known(name.host) or frozenset()
        if leads & dest:
            return None
        return f"{name} leads to {_shown(leads)}, but it goes to {dest_host} ({_shown(dest)})"

    def _leads(self, host: str, dest: frozenset[str], port: int) -> bool:
        route = self.route_for(host)
        if route is not None:
            return route.port == port and bool(self._route_ips[route] & dest)
        return bool((self.resolver.known(host) or frozenset()) & dest)


def _now(host: str) -> frozenset[str]:
    """Addresses of an operator's route target, resolved once when the options are read."""
    literal = address_literal(host)
    if literal is not None:
        return frozenset((literal,))
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return frozenset()
    return frozenset(a for info in infos if (a := address_literal(str(info[4][0]))))
