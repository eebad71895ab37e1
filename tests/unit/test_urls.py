"""Canonical URLs (docs/formats.md, "Matching"): what url_pattern is matched against."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proxy_addon.matching import (
    HttpRequest,
    Matcher,
    canonical_host,
    canonical_url,
    split_authority,
)
from proxy_addon.matching.urls import remove_dot_segments, request_url, server_equivalent
from proxy_addon.tasks import EvalSchema


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        # scheme and host lower-cased, path and query left as sent
        ("HTTPS://WWW.Shop.COM/Cart/Add?SKU=AbC", "https://www.shop.com/Cart/Add?SKU=AbC"),
        # IDNA host (punycode), upper-case non-ASCII folded first
        ("https://bücher.example/kasse", "https://xn--bcher-kva.example/kasse"),
        ("https://BÜCHER.example/kasse", "https://xn--bcher-kva.example/kasse"),
        # trailing dot dropped
        ("https://shop.com./checkout", "https://shop.com/checkout"),
        # default ports dropped, others kept
        ("https://shop.com:443/checkout", "https://shop.com/checkout"),
        ("http://shop.com:80/checkout", "http://shop.com/checkout"),
        ("https://shop.com:8443/checkout", "https://shop.com:8443/checkout"),
        ("http://shop.com:443/checkout", "http://shop.com:443/checkout"),
        ("http://127.0.0.1:7878/api/task-submit", "http://127.0.0.1:7878/api/task-submit"),
        # dot segments resolved, %2e read as a dot (either case), partial dots kept
        ("https://shop.com/v2/./save", "https://shop.com/v2/save"),
        ("https://shop.com/v2/x/../save", "https://shop.com/v2/save"),
        ("https://shop.com/v2/%2e/save", "https://shop.com/v2/save"),
        ("https://shop.com/v2/x/%2E%2e/save", "https://shop.com/v2/save"),
        ("https://shop.com/v2/x/.%2e/save", "https://shop.com/v2/save"),
        ("https://shop.com/../../save", "https://shop.com/save"),
        ("https://shop.com/a/b/..", "https://shop.com/a/"),
        ("https://shop.com/a/.", "https://shop.com/a/"),
        ("https://shop.com/a/..b/.c/%2ex", "https://shop.com/a/..b/.c/%2ex"),
        # empty path becomes /
        ("https://shop.com", "https://shop.com/"),
        ("https://shop.com?q=1", "https://shop.com/?q=1"),
        # raw query kept byte for byte (no re-encoding, no reordering, blanks kept)
        ("https://shop.com/s?b=2&a=%2F&c=&a=x+y", "https://shop.com/s?b=2&a=%2F&c=&a=x+y"),
        ("https://shop.com/s?", "https://shop.com/s?"),
        ("https://shop.com/s?a=./../b", "https://shop.com/s?a=./../b"),
        # fragment dropped, with or without a query
        ("https://shop.com/p#reviews", "https://shop.com/p"),
        ("https://shop.com/p?x=1#reviews", "https://shop.com/p?x=1"),
        ("https://shop.com/p#frag?x=1", "https://shop.com/p"),
        # credentials are not part of what is matched
        ("https://user:pw@Shop.com/p", "https://shop.com/p"),
        # IPv6 literal kept in brackets, port rules still apply
        ("https://[::1]:443/p", "https://[::1]/p"),
        ("http://[::1]:8080/p", "http://[::1]:8080/p"),
    ],
)
def test_canonical_url(raw: str, canonical: str) -> None:
    assert canonical_url(raw) == canonical


@pytest.mark.parametrize("raw", ["shop.com/checkout", "/checkout", "", "https://", "mailto:x"])
def test_canonical_url_rejects_non_absolute(raw: str) -> None:
    with pytest.raises(ValueError, match="not an absolute URL"):
        canonical_url(raw)


def test_canonical_url_is_idempotent() -> None:
    url = canonical_url("HTTPS://Shop.COM.:443/a/./b/../c?x=1#f")
    assert url == "https://shop.com/a/c?x=1"
    assert canonical_url(url) == url


@pytest.mark.parametrize(
    ("scheme", "host_header", "peer", "port", "target", "url"),
    [
        # the Host header names the site, never the IP the client connected to
        ("https", "WWW.Shop.com", "93.184.216.34", 443, "/cart", "https://www.shop.com/cart"),
        ("https", "shop.com:8443", "10.0.0.1", 443, "/cart", "https://shop.com:8443/cart"),
        ("https", "shop.com:443", "10.0.0.1", 8443, "/cart", "https://shop.com/cart"),
        ("http", "shop.com.", "10.0.0.1", 80, "/a/../cart?x=1", "http://shop.com/cart?x=1"),
        ("https", "bücher.example", "10.0.0.1", 443, "/", "https://xn--bcher-kva.example/"),
        # no (or an empty) Host header: fall back to the peer
        ("https", None, "10.0.0.1", 443, "/cart", "https://10.0.0.1/cart"),
        ("https", "", "10.0.0.1", 8443, "/cart", "https://10.0.0.1:8443/cart"),
        # a raw fragment in the request target is not part of the URL (nor is what follows it)
        ("https", "shop.com", "10.0.0.1", 443, "/p#frag?x=1", "https://shop.com/p"),
        ("https", "shop.com", "10.0.0.1", 443, "/p?x=1#frag", "https://shop.com/p?x=1"),
        # origin-form target without a leading slash (asterisk-form and the like)
        ("https", "shop.com", "10.0.0.1", 443, "", "https://shop.com/"),
    ],
)
def test_request_url(
    scheme: str, host_header: str | None, peer: str, port: int, target: str, url: str
) -> None:
    assert request_url(scheme, host_header, peer, port, target) == url


@pytest.mark.parametrize(
    ("authority", "parts"),
    [
        ("shop.com", ("shop.com", None)),
        ("shop.com:8080", ("shop.com", 8080)),
        ("shop.com:", ("shop.com", None)),
        ("u:p@shop.com:81", ("shop.com", 81)),
        ("[::1]:443", ("[::1]", 443)),
        ("[::1]", ("[::1]", None)),
        ("shop.com:99999", ("shop.com", None)),
    ],
)
def test_split_authority(authority: str, parts: tuple[str, int | None]) -> None:
    assert split_authority(authority) == parts


@pytest.mark.parametrize(
    ("path", "resolved"),
    [
        ("/a/b/c/./../../g", "/a/g"),
        ("/mid/content=5/../6", "/mid/6"),
        ("/..", "/"),
        ("/a//b", "/a//b"),
        ("/plain/path", "/plain/path"),
    ],
)
def test_remove_dot_segments(path: str, resolved: str) -> None:
    assert remove_dot_segments(path) == resolved


def test_canonical_url_with_host_header() -> None:
    # The CLI's --header host:... works like the proxy: the Host header wins over the URL's host.
    assert (
        canonical_url("https://93.184.216.34/cart?x=1", host_header="Shop.COM")
        == "https://shop.com/cart?x=1"
    )


@pytest.mark.parametrize(
    ("url", "routed"),
    [
        ("https://a.test//api/checkout", "https://a.test/api/checkout"),
        ("https://a.test/api///checkout?q=//x", "https://a.test/api/checkout?q=//x"),
        ("https://a.test/api/%63heckout?x=%63", "https://a.test/api/checkout?x=%63"),
        ("https://a.test/x%7Ey%41%5a%30%2D%5F%60", "https://a.test/x~yAZ0-_%60"),
        ("https://a.test/%2e%2e//api", "https://a.test/api"),
        ("https://a.test/a/b?q=//x", None),  # the query is not the path
        ("https://a.test/a%2Fb", None),  # an encoded slash is not a separator
        ("https://a.test/a%20b", None),  # a space is not unreserved
        ("https://a.test/", None),
        ("https://a.test", None),
    ],
)
def test_server_equivalent(url: str, routed: str | None) -> None:
    assert server_equivalent(url) == routed


def test_the_matcher_matches_what_a_server_routes_to_the_pattern() -> None:
    m = Matcher(EvalSchema(url_pattern=r"^https://shop\.test/api/checkout$", method="POST"))
    for path in ("/api/checkout", "//api/checkout", "/api/%63heckout", "/api//checkout"):
        assert m.match(HttpRequest("POST", f"https://shop.test{path}")).match, path
    for path in ("/api/checkouts", "/api/check%20out", "/api%2Fcheckouts"):
        assert not m.match(HttpRequest("POST", f"https://shop.test{path}")).match, path
    # WSGI's PATH_INFO, Go's URL.Path and nginx read %2F as /: a named equivalence
    for path in ("/api%2Fcheckout", "/api%2fcheckout", "/x%2F..%2Fapi/checkout"):
        result = m.match(HttpRequest("POST", f"https://shop.test{path}"))
        assert result.match and result.equivalence == "%2F in the path read as /", path


@pytest.mark.parametrize(
    ("host", "canonical"),
    [("shop.test\r.", "shop.test"), ("0\r.", "0"), ("Shop.Test . .", "shop.test"), ("a..", "a")],
)
def test_whitespace_a_stripped_dot_leaves_bare_is_stripped_too(host: str, canonical: str) -> None:
    assert canonical_host(host) == canonical


@given(st.text(max_size=20))
def test_canonical_host_is_idempotent(host: str) -> None:
    # the matcher canonicalises names the proxy already canonicalised: both must agree
    once = canonical_host(host)
    assert canonical_host(once) == once
