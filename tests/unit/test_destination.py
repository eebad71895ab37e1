"""Where a request goes (docs/security.md, the proxy's rules 1 and 2) and whether it may (rule 3):
the pure parts, table-tested. Names resolve through the machine's own resolver: `localhost` is
127.0.0.1 (and ::1), `*.invalid` never resolves (RFC 6761)."""

from __future__ import annotations

import asyncio

import pytest

from proxy_addon.addon.destination import Destinations, Placement, Resolver, Route
from proxy_addon.addon.names import Addressing, Name, address_literal
from proxy_addon.addon.private import AllowList, private_kind

SHOP_ROUTE = Route("http", "127.0.0.1", 8080)


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),  # decimal
        ("0x7f000001", "127.0.0.1"),  # hex
        ("0177.0.0.1", "127.0.0.1"),  # octal
        ("127.1", "127.0.0.1"),
        ("[::1]", "::1"),
        ("[::ffff:169.254.169.254]", "169.254.169.254"),  # v4-mapped
        ("::ffff:10.0.0.1", "10.0.0.1"),
        ("[fe80::1%eth0]", "fe80::1"),
        ("shop.example", None),
        ("localhost", None),
        ("cafe", None),
        ("1e5", None),
        ("", None),
    ],
)
def test_address_literal_reads_an_address_as_getaddrinfo_does(host: str, address: str) -> None:
    assert address_literal(host) == address


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("93.184.215.14", None),
        ("2606:4700::6810:84e5", None),
        ("127.0.0.1", "loopback"),
        ("127.9.9.9", "loopback"),
        ("::1", "loopback"),
        ("169.254.169.254", "cloud metadata"),
        ("fd00:ec2::254", "cloud metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "private"),  # CGNAT
        ("fd12:3456::1", "private"),  # ULA
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "private"),  # reserved (Python counts it private)
        ("64:ff9b::7f00:1", "loopback (127.0.0.1 inside 64:ff9b::7f00:1)"),  # NAT64
        ("2002:a9fe:a9fe::", "cloud metadata (169.254.169.254 inside 2002:a9fe:a9fe::)"),  # 6to4
    ],
)
def test_private_kind(address: str, kind: str | None) -> None:
    assert private_kind(address) == kind


def test_allow_list_takes_networks_with_or_without_a_port() -> None:
    allow = AllowList(["10.0.0.0/8", "127.0.0.1:7878", "[::1]:7878", "fd00:cb::/32", "[fe80::]"])
    assert allow.allows("10.200.3.4", 443) and allow.allows("10.0.0.1", 1)
    assert allow.allows("127.0.0.1", 7878) and not allow.allows("127.0.0.1", 8080)
    assert allow.allows("::1", 7878) and not allow.allows("::1", 80)
    assert allow.allows("fd00:cb:1::5", 80) and allow.allows("fe80::", 9)
    assert not allow.allows("169.254.169.254", 80)


@pytest.mark.parametrize("spec", ["shop.example", "10.0.0.0/33", "127.0.0.1:http", "[::1]:0", ""])
def test_allow_list_refuses_what_it_cannot_read(spec: str) -> None:
    with pytest.raises(ValueError, match="clawbench_allow_private"):
        AllowList([spec])


def _destinations(
    routes: dict[str, Route] | None = None, allow: tuple[str, ...] = (), pattern=("shop.test",)
) -> Destinations:
    return Destinations(routes or {}, AllowList(allow), pattern, Resolver())


def _place(dest: Destinations, a: Addressing) -> Placement:
    return asyncio.run(dest.settle(a))


def _a(dest: tuple[str, int], *names: tuple[str, int | None, str], scheme: str = "http"):
    return Addressing(scheme, tuple(Name(*n) for n in names), dest, "/api/checkout")


LOOPBACK = ("127.0.0.0/8", "[::1]")


@pytest.mark.parametrize(
    ("addressing", "refused"),
    [
        # one name, the one it goes to: nothing to disagree about
        (_a(("localhost", 8080), ("localhost", 8080, "target")), None),
        # Host is another name for the same place
        (_a(("127.0.0.1", 8080), ("localhost", 8080, "Host"), ("127.0.0.1", 8080, "target")), None),
        # Host names a host that leads nowhere: refused
        (
            _a(("127.0.0.1", 8080), ("shop.invalid", 8080, "Host"), ("127.0.0.1", 8080, "target")),
            "Host shop.invalid:8080 leads to no address, but it goes to 127.0.0.1 (127.0.0.1)",
        ),
        # the port trick: Host says 8443, the request goes to 443
        (
            _a(("localhost", 443), ("localhost", 8443, "Host"), ("localhost", 443, "target"),
               scheme="https"),
            "Host localhost:8443 names port 8443, but it goes to port 443",
        ),
        # a Host without a port means the scheme's
        (
            _a(("127.0.0.1", 8080), ("localhost", None, "Host"), ("127.0.0.1", 8080, "target")),
            "Host localhost names port 80, but it goes to port 8080",
        ),
        # SNI has no port: the destination's
        (_a(("127.0.0.1", 443), ("localhost", None, "SNI"), scheme="https"), None),
        # transparent: the original destination is no name; no Host, no SNI: refused
        (_a(("127.0.0.1", 80)), "it names no host (no Host, :authority, target, SNI)"),
        (
            _a(("127.0.0.1", 80), ("shop.invalid", None, "Host")),
            "Host shop.invalid leads to no address, but it goes to 127.0.0.1 (127.0.0.1)",
        ),
    ],
)  # fmt: skip
def test_names_must_lead_where_the_request_goes(addressing: Addressing, refused: str) -> None:
    place = _place(_destinations(allow=LOOPBACK), addressing)
    assert place.refused == refused
    assert place.route is None


def test_a_request_waits_for_lookups_only_until_its_names_are_decided() -> None:
    dest = _destinations(allow=LOOPBACK)
    a = _a(("127.0.0.1", 8080), ("localhost", 8080, "Host"), ("127.0.0.1", 8080, "target"))
    assert dest.place(a) is None  # the Host must be looked up before a decision
    assert asyncio.run(dest.settle(a)).refused is None
    placed = dest.place(a)  # decided: the next request on these names goes at once
    assert placed is not None and placed.refused is None
    routed = _destinations({"shop.test": SHOP_ROUTE})
    assert routed.place(_a(("shop.test", 443), ("shop.test", 443, "target"))) is not None
    nameless = dest.place(_a(("127.0.0.1", 80)))
    assert nameless is not None and nameless.refused is not None


def test_private_destinations_are_refused_unless_allowed() -> None:
    plain = _destinations()
    a = _a(("localhost", 8080), ("localhost", 8080, "target"))
    assert _place(plain, a).refused in (
        "its destination 127.0.0.1 is loopback (allow it with clawbench_allow_private)",
        "its destination ::1 is loopback (allow it with clawbench_allow_private)",
    )
    metadata = _a(("169.254.169.254", 80), ("169.254.169.254", 80, "target"))
    assert _place(plain, metadata).refused == (
        "its destination 169.254.169.254 is cloud metadata (allow it with clawbench_allow_private)"
    )
    assert _place(_destinations(allow=LOOPBACK), a).refused is None
    only_other_port = _destinations(allow=("127.0.0.1:7878", "[::1]:7878"))
    assert _place(only_other_port, a).refused is not None
    submit = _a(("127.0.0.1", 7878), ("127.0.0.1", 7878, "Host"))
    assert _place(only_other_port, submit).refused is None


def test_routed_names_must_share_their_route() -> None:
    routes = {"shop.test": SHOP_ROUTE, "cdn.test": Route("http", "127.0.0.1", 9090)}
    dest = _destinations(routes)
    same = _a(("shop.test", 443), ("shop.test", 8443, "Host"), ("shop.test", 443, "target"))
    assert _place(dest, same).route == SHOP_ROUTE  # routes ignore ports: both go there
    mixed = _a(("shop.test", 443), ("cdn.test", None, "Host"), ("shop.test", 443, "target"))
    assert _place(dest, mixed).refused == (
        "its names disagree: Host cdn.test is routed to http://127.0.0.1:9090, "
        "target shop.test:443 is routed to http://127.0.0.1:8080"
    )
    half = _a(("shop.test", 443), ("other.test", None, "Host"), ("shop.test", 443, "target"))
    assert _place(dest, half).refused == (
        "its names disagree: Host other.test has no route, "
        "target shop.test:443 is routed to http://127.0.0.1:8080"
    )
    catch_all = _destinations({**routes, "*": Route("http", "127.0.0.1", 9)})
    assert _place(catch_all, half).refused is not None  # other.test goes to *, shop elsewhere


def test_an_address_only_request_is_matched_under_the_pattern_hosts_that_lead_there() -> None:
    """CONNECT <the shop's address> without a name: matched as the shop (docs/security.md, the
    proxy's rule 1)."""
    dest = _destinations({"shop.test": SHOP_ROUTE}, pattern=("shop.test", "cdn.test"))
    place = _place(dest, _a(("127.0.0.1", 8080), ("127.0.0.1", 8080, "target")))
    assert place.refused is None  # a route's target is a destination the operator named
    assert place.urls == (
        "http://127.0.0.1:8080/api/checkout",
        "http://127.0.0.1/api/checkout",
        "http://shop.test:8080/api/checkout",
        "http://shop.test/api/checkout",
    )
    decimal = _a(("2130706433", 8080), ("2130706433", 8080, "target"))
    assert "http://shop.test/api/checkout" in _place(dest, decimal).urls
    elsewhere = _a(("127.0.0.1", 9999), ("127.0.0.1", 9999, "target"))
    assert _place(_destinations({"shop.test": SHOP_ROUTE}, LOOPBACK), elsewhere).urls == (
        "http://127.0.0.1:9999/api/checkout",
        "http://127.0.0.1/api/checkout",
    )


def test_a_destination_without_address_is_refused_and_marked_unresolved() -> None:
    """The addon credits a commit refused only for this (a block needs no connection)."""
    dest = _destinations(allow=LOOPBACK)
    alone = _place(dest, _a(("shop.invalid", 443), ("shop.invalid", 443, "target"),
                            ("shop.invalid", None, "SNI"), scheme="https"))  # fmt: skip
    assert alone.refused == "its destination shop.invalid has no address" and alone.unresolved
    assert alone.urls[0] == "https://shop.invalid/api/checkout"
    other = _place(dest, _a(("shop.invalid", 443), ("shop.invalid", 443, "target"),
                            ("localhost", None, "SNI"), scheme="https"))  # fmt: skip
    assert other.refused is not None and not other.unresolved
    port = _place(dest, _a(("shop.invalid", 443), ("shop.invalid", 8443, "Host"), scheme="https"))
    assert port.refused is not None and not port.unresolved
