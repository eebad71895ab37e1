"""Totality: parsing, canonicalisation and matching never raise, whatever a client sends."""

from __future__ import annotations

import gzip
import zlib
from typing import Any
from urllib.parse import parse_qs, quote, unquote_plus

import brotli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy_addon.addon.names import Name, candidate_urls, url_host
from proxy_addon.addon.requestlog import see_request
from proxy_addon.matching import (
    HttpRequest,
    Matcher,
    MatchResult,
    ParsedBody,
    canonical_url,
    parse_body,
    parse_query,
    redact_fields,
    redact_headers,
    redact_url,
)
from proxy_addon.matching.redact import REDACTED, is_secret_key
from proxy_addon.matching.urls import build_url, request_url, server_equivalent
from proxy_addon.tasks import EvalSchema

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

text = st.text(st.characters(codec="utf-8"), max_size=60)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=20,
)
content_types = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "application/json",
            "application/x-www-form-urlencoded",
            "text/plain;charset=UTF-8",
            "multipart/form-data; boundary=XyZ",
            "multipart/form-data",
            'multipart/form-data; boundary="a b"',
            "MULTIPART/FORM-DATA; BOUNDARY=XyZ",
        ]
    ),
    st.text(max_size=40),
    st.binary(max_size=40).map(lambda b: b.decode("utf-8", "surrogateescape")),
)
encodings = st.one_of(
    st.none(),
    st.sampled_from(["gzip", "deflate", "br", "zstd", "identity", "gzip, br", "x-gzip", ","]),
    st.text(max_size=20),
)


def _multipart(fields: list[tuple[str, bytes, bool]]) -> bytes:
    out = b""
    for name, content, is_file in fields:
        disp = f'form-data; name="{name}"' + ('; filename="f.bin"' if is_file else "")
        out += f"--XyZ\r\nContent-Disposition: {disp}\r\n\r\n".encode() + content + b"\r\n"
    return out + b"--XyZ--\r\n"


raw_bodies = st.one_of(
    st.binary(max_size=300),
    text.map(str.encode),
    json_values.map(lambda v: repr(v).encode()),
    st.lists(st.tuples(text, st.binary(max_size=40), st.booleans()), max_size=4).map(_multipart),
    st.binary(max_size=200).map(gzip.compress),
    st.binary(max_size=200).map(zlib.compress),
    st.binary(max_size=200).map(brotli.compress),
    st.binary(max_size=200).map(lambda b: gzip.compress(b)[: len(b) // 2]),
)


@SETTINGS
@given(raw=st.one_of(st.none(), raw_bodies), ctype=content_types, enc=encodings)
def test_parse_body_never_raises(raw: bytes | None, ctype: str | None, enc: str | None) -> None:
    parsed = parse_body(raw, ctype, enc, limit=4096)
    assert isinstance(parsed, ParsedBody)
    assert parsed.size == len(raw or b"")
    assert (parsed.error is not None) == (parsed.kind == "unevaluable")
    # whatever came out is safe for the recursive consumers downstream
    redact_fields(parsed.value)


@SETTINGS
@given(query=st.text(max_size=200))
def test_parse_query_never_raises(query: str) -> None:
    out = parse_query(query)
    assert isinstance(out, dict)
    assert all(v != "" for v in out.values())


hosts = st.one_of(
    st.from_regex(r"\A[a-zA-Z0-9]([a-zA-Z0-9-]{0,10}[a-zA-Z0-9])?(\.[a-zA-Z]{2,6}){1,3}\.?\Z"),
    st.sampled_from(["bücher.example", "BÜCHER.Example.", "xn--bcher-kva.example", "[::1]"]),
    st.from_regex(r"\A\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\Z"),
)
path_chars = st.sampled_from([*"abcXYZ019-._~/%+:@!$&'()*,;=", "%2e", "%2E", "..", "."])
paths = st.lists(path_chars, max_size=30).map(lambda cs: "/" + "".join(cs))
# Valid URLs: printable ASCII, no spaces (a browser percent-encodes those before sending).
url_text = st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="#")
queries = st.one_of(st.none(), st.text(url_text, max_size=40))


@SETTINGS
@given(
    scheme=st.sampled_from(["http", "https", "HTTPS", "Http"]),
    host=hosts,
    port=st.one_of(st.none(), st.integers(0, 65535)),
    path=paths,
    query=queries,
    fragment=st.one_of(st.none(), st.text(max_size=10)),
)
def test_canonical_url_never_raises_on_valid_absolute_urls(
    scheme: str, host: str, port: int | None, path: str, query: str | None, fragment: str | None
) -> None:
    url = f"{scheme}://{host}{'' if port is None else f':{port}'}{path}"
    url += "" if query is None else f"?{query}"
    url += "" if fragment is None else f"#{fragment}"
    out = canonical_url(url)
    assert out.startswith(("http://", "https://"))
    assert "#" not in out
    assert canonical_url(out) == out  # idempotent
    if query is not None:
        assert out.endswith("?" + query)  # the raw query is kept as sent


@SETTINGS
@given(host=hosts, path=paths, query=queries)
def test_the_routed_url_is_canonical_and_keeps_the_query(
    host: str, path: str, query: str | None
) -> None:
    url = canonical_url(f"https://{host}{path}" + ("" if query is None else f"?{query}"))
    routed = server_equivalent(url)
    if routed is None:
        return
    assert routed != url and "//" not in routed.split("://", 1)[1].split("?", 1)[0]
    assert server_equivalent(routed) is None  # idempotent: merged and decoded once for all
    assert canonical_url(routed) == routed
    if query is not None:
        assert routed.endswith("?" + query)


@SETTINGS
@given(
    host_header=st.one_of(st.none(), st.text(max_size=30)),
    peer=st.text(max_size=20),
    port=st.integers(0, 65535),
    target=st.text(max_size=60),
)
def test_request_url_never_raises(
    host_header: str | None, peer: str, port: int, target: str
) -> None:
    assert isinstance(request_url("https", host_header, peer, port, target), str)


filters = st.one_of(
    st.none(), st.dictionaries(st.sampled_from(["a", "b", "op"]), json_values, max_size=3)
)
schemas = st.builds(
    EvalSchema,
    url_pattern=st.sampled_from(
        ["", "shop", r"shop\.test/api", "__PLACEHOLDER_WILL_NOT_MATCH__", "^https?://"]
    ),
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    body=filters,
    params=filters,
)


urls = st.one_of(
    st.text(max_size=80), st.builds("https://shop.test/api{}".format, st.text(max_size=40))
)


@SETTINGS
@given(
    schema=schemas,
    method=st.text(max_size=8),
    url=urls,
    body=json_values,
    body_error=st.one_of(st.none(), text),
)
def test_matcher_never_raises(
    schema: EvalSchema, method: str, url: str, body: Any, body_error: str | None
) -> None:
    result = Matcher(schema).match(HttpRequest(method, url, body, body_error))
    assert isinstance(result, MatchResult)
    assert result.match or result.reasons  # a no-match always says why
    if result.body_unverified:
        assert result.match and schema.body


@SETTINGS
@given(
    headers=st.lists(st.tuples(st.text(max_size=20), st.text(max_size=40)), max_size=6),
    url=st.text(max_size=80),
)
def test_redaction_never_raises(headers: list[tuple[str, str]], url: str) -> None:
    redact_headers(headers)
    assert redact_url(url).partition("?")[0] == url.partition("?")[0]


@SETTINGS
@given(
    schema=schemas,
    method=st.text(max_size=8),
    url=urls,
)
def test_the_quiet_matcher_decides_the_same(schema: EvalSchema, method: str, url: str) -> None:
    m = Matcher(schema)
    loud, quiet = (
        m.match(HttpRequest(method, url)),
        m.match(HttpRequest(method, url), explain=False),
    )
    assert (quiet.match, quiet.near_miss, quiet.url_matched) == (
        loud.match,
        loud.near_miss,
        loud.url_matched,
    )
    if quiet.near_miss or quiet.url_matched:
        assert quiet == loud  # whatever is shown is the same


@SETTINGS
@given(
    scheme=st.sampled_from(["http", "https", "HTTPS"]),
    hosts=st.lists(
        st.tuples(
            st.one_of(st.text(max_size=20), st.sampled_from(["shop.test", "10.0.0.1", "::1"])),
            st.one_of(st.none(), st.integers(min_value=1, max_value=65535)),
        ),
        max_size=4,
    ),
    port=st.integers(min_value=1, max_value=65535),
    target=st.sampled_from(["/", "/a/./b?x=1", "/p#f"]),
)
def test_candidate_urls_are_the_names_with_and_without_port(
    scheme: str, hosts: list[tuple[str, int | None]], port: int, target: str
) -> None:
    names = tuple(Name(url_host(h), p, "Host") for h, p in hosts if url_host(h))
    urls = candidate_urls(scheme, names, (), port, target)
    assert len(set(urls)) == len(urls) <= 2 * len(names)
    if names:
        assert urls[0] == build_url(scheme, names[0].host, names[0].port, target)
        assert build_url(scheme, names[0].host, None, target) in urls


@SETTINGS
@given(
    query=st.lists(st.sampled_from([*"ab=&+%;#é ", "%41", "%zz", "=="]), max_size=30).map("".join)
)
def test_parse_query_is_parse_qs_with_single_values_unwrapped(query: str) -> None:
    # parse_query skips parse_qs when there is no escape to decode; both ways must agree
    expected = {k: v[0] if len(v) == 1 else v for k, v in parse_qs(query).items()}
    assert parse_query(query) == expected


queries = st.lists(
    st.sampled_from([*"ab=&+%#é ", "%41", "%zz", "==", "token", "Cookie", "api_key", "%74oken"]),
    max_size=30,
).map("".join)


def _every_pair_rebuilt(url: str) -> str:
    """redact_url spelled out: each pair with a secret-looking key gets its value replaced."""
    base, sep, rest = url.partition("?")
    if not sep:
        return url
    query, hsep, frag = rest.partition("#")
    parts = []
    for pair in query.split("&"):
        key, eq, _ = pair.partition("=")
        parts.append(
            f"{key}={quote(REDACTED)}" if eq and is_secret_key(unquote_plus(key)) else pair
        )
    return f"{base}?{'&'.join(parts)}{hsep}{frag}"


@SETTINGS
@given(query=queries)
def test_redact_url_replaces_secret_pairs_and_nothing_else(query: str) -> None:
    url = f"http://shop.test/p?{query}"
    secret = any(
        eq and is_secret_key(unquote_plus(key))
        for key, eq, _ in (p.partition("=") for p in query.partition("#")[0].split("&"))
    )
    assert redact_url(url) == _every_pair_rebuilt(url)
    assert (redact_url(url) == url) is not secret


@SETTINGS
@given(query=queries)
def test_the_logged_query_is_the_redacted_parse(query: str) -> None:
    url = f"http://shop.test/p?{query}"
    seen = see_request(url, "GET", [(b"Host", b"shop.test")], "HTTP/1.1", 0)
    assert seen.url == redact_url(url)
    assert seen.query == redact_fields(parse_query(query.partition("#")[0]))
