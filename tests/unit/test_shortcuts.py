"""The request hook's shortcuts give what the long way gives: each is pinned to it here.

A shortcut that decided wrongly would let a commit pass (a URL reading skipped), or write a
secret or an uncapped header (a check skipped); hypothesis looks for the input where they part.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy_addon.addon.caps import cap_headers
from proxy_addon.addon.requestlog import printable, see_request
from proxy_addon.matching import Matcher, redact_headers
from proxy_addon.matching.equivalence import decoded_separators
from proxy_addon.matching.urls import (
    path_span,
    reads_otherwise,
    remove_dot_segments,
    server_equivalent,
)
from proxy_addon.tasks import EvalSchema

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])

segments = st.sampled_from(["", ".", "..", "a", "b.c", ".d", "e.", "%2e", "%2E", "%2e%2E", ".%2e"])
paths = st.lists(segments, max_size=8).map("/".join)


def _rfc3986_remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 step by step (its input and output buffers), after reading each
    segment of dots written as %2e as those dots, as browsers do."""
    parts = path.split("/")
    dots = [re.sub("%2e", ".", p, flags=re.IGNORECASE) for p in parts]
    inp = "/".join(d if d in (".", "..") else p for p, d in zip(parts, dots, strict=True))
    out = ""
    while inp:
        if inp.startswith(("../", "./")):
            inp = inp[inp.index("/") + 1 :]
        elif inp.startswith("/./") or inp == "/.":
            inp = "/" + inp[3:]
        elif inp.startswith("/../") or inp == "/..":
            inp = "/" + inp[4:]
            out = out[: out.rfind("/")] if "/" in out else ""
        elif inp in (".", ".."):
            inp = ""
        else:
            end = inp.find("/", 1)
            end = len(inp) if end < 0 else end
            out, inp = out + inp[:end], inp[end:]
    return out


@SETTINGS
@given(path=paths)
def test_remove_dot_segments_is_the_rfc_algorithm(path: str) -> None:
    absolute = "/" + path
    assert remove_dot_segments(absolute) == _rfc3986_remove_dot_segments(absolute)


url_chars = st.sampled_from([*"ab0./:?=&-_", "%", "%2F", "%2f", "%63", "//", "#", "@", "[", "]"])
targets = st.one_of(
    st.lists(url_chars, max_size=24).map("".join),
    st.sampled_from(["/a%2Fb", "/a//b", "//a/b", "/%63heckout", "/a/%2e/b", "/a%2f..%2fb", "/a/b"]),
)
urls = st.builds(
    "{}://{}{}".format,
    st.sampled_from(["http", "https"]),
    st.lists(st.sampled_from([*"shop.test", "%", "/", "@", ":8080", "["]), max_size=12).map(
        "".join
    ),
    targets,
)


@SETTINGS
@given(url=urls)
def test_a_url_that_cannot_read_otherwise_has_nothing_servers_would_read_otherwise(
    url: str,
) -> None:
    if reads_otherwise(url):
        return
    span = path_span(url)
    path = url[span[0] : span[1]] if span else ""
    # what server_equivalent and decoded_separators rewrite: escapes, merged slashes
    assert "%" not in path and "//" not in path
    assert server_equivalent(url) is None and decoded_separators(url) is None


patterns = st.sampled_from(
    [
        r"shop\.test/api/checkout",
        r"^https://shop\.test/api/checkout$",
        r"/api/checkout",
        r"checkout\?",
        r"shop\.test:8080/",
        r"//",
        r"%2F",
        r"/a/b",
        r"^http://[^/]*/$",
        r"\.test/a",
        r"/checkout$",
        r"test/a/b",
    ]
)


@SETTINGS
@given(pattern=patterns, candidates=st.lists(urls, max_size=5))
def test_matching_urls_are_those_the_url_rule_holds_for(
    pattern: str, candidates: list[str]
) -> None:
    matcher = Matcher(EvalSchema(url_pattern=pattern, method="POST"))
    expected = [
        url for url in candidates if matcher.url_matches(url) or matcher.url_matches_decoded(url)
    ]
    assert matcher.matching_urls(candidates) == expected


header_names = st.sampled_from(
    ["Host", "Accept", "Cookie", "Referer", "X-Api-Key", "Content-Type", "X-\u00e9", "a" * 2100]
)
header_values = st.one_of(
    st.sampled_from(["", "x", "https://a.test/?token=1&b=2", "\u00e9t\u00e9", "v" * 2040]),
    st.binary(max_size=12).map(lambda b: b.decode("utf-8", "surrogateescape")),
    st.integers(2030, 2060).map("w".__mul__),
)
header_lists = st.one_of(
    st.lists(st.tuples(header_names, header_values), max_size=6),
    st.integers(60, 70).map(lambda n: [(f"X-H{i}", "v") for i in range(n)]),
)


@SETTINGS
@given(pairs=header_lists)
def test_recorded_headers_are_capped_and_printable_as_each_would_be(
    pairs: list[tuple[str, str]],
) -> None:
    fields = [
        (k.encode("utf-8", "surrogateescape"), v.encode("utf-8", "surrogateescape"))
        for k, v in pairs
    ]
    seen = see_request("https://shop.test/p", "GET", fields, "HTTP/1.1", 0)
    each = {printable(k): printable(v) for k, v in cap_headers(redact_headers(pairs)).items()}
    assert seen.headers == each
