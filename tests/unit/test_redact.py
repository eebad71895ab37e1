"""Secret redaction (docs/formats.md, "Secrets"): headers, body and query fields at any depth, URL
queries."""

from __future__ import annotations

from typing import Any

import pytest

from proxy_addon.matching import redact_command, redact_fields, redact_headers, redact_url
from proxy_addon.matching.redact import REDACTED, is_secret_key


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "authorization",
        "Proxy-Authorization",
        "Cookie",
        "Set-Cookie",
        "X-API-Key",
        "x-api-key",
        "X-CSRF-Token",
        # anything matching token|secret|password|passwd|csrf|session|api[-_]?key
        "X-Auth-Token",
        "X-Client-Secret",
        "X-Password",
        "X-Passwd",
        "X-XSRF-CSRF",
        "X-Session-Id",
        "X-Apikey",
        "Api_Key",
    ],
)
def test_secret_headers_are_redacted(name: str) -> None:
    assert redact_headers([(name, "s3cr3t"), ("Accept", "text/html")]) == {
        name: REDACTED,
        "Accept": "text/html",
    }


@pytest.mark.parametrize(
    "name", ["Accept", "Content-Type", "User-Agent", "Host", "Origin", "X-Request-Id", "Keyboard"]
)
def test_ordinary_headers_are_kept(name: str) -> None:
    assert redact_headers([(name, "value")]) == {name: "value"}


def test_repeated_headers_are_joined_and_still_redacted() -> None:
    pairs = [("Cookie", "a=1"), ("Cookie", "b=2"), ("Accept", "a"), ("Accept", "b")]
    assert redact_headers(pairs) == {"Cookie": REDACTED, "Accept": "a, b"}


def test_referer_query_secrets_are_redacted() -> None:
    # A Referer carries the previous page's URL, query secrets included.
    out = redact_headers([("Referer", "https://shop.test/reset?token=abc&step=2")])
    assert out == {"Referer": "https://shop.test/reset?token=%5BREDACTED%5D&step=2"}


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        ("password", True),
        ("new_password", True),
        ("PASSWD", True),
        ("csrf_token", True),
        ("authenticity_token", True),
        ("client_secret", True),
        ("sessionId", True),
        ("api_key", True),
        ("api-key", True),
        ("apikey", True),
        ("X-Api-Key", True),
        # the secret header names, as body or query keys too
        ("authorization", True),
        ("Cookie", True),
        ("set-cookie", True),
        ("Proxy-Authorization", True),
        ("author", False),
        ("authority", False),
        # auth as a word of its own, and the header's name inside another key
        ("auth", True),
        ("basic_auth", True),
        ("X-Auth", True),
        ("x_authorization", True),
        ("email", False),
        ("operationName", False),
        ("api", False),
        ("keyword", False),
        ("passage", False),
    ],
)
def test_is_secret_key(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("OPENAI_API_KEY=sk-123 agent run", "OPENAI_API_KEY=[REDACTED] agent run"),
        ("agent --api-key sk-1 --model x", "agent --api-key [REDACTED] --model x"),
        ("agent --token=abc", "agent --token=[REDACTED]"),
        ("curl https://shop.test/a?b=c", "curl https://shop.test/a?b=c"),
        # the words a body key is redacted for count on a command line too
        ("agent --session s-1 --csrf=c-2", "agent --session [REDACTED] --csrf=[REDACTED]"),
        ("AUTH=u:pw BASIC_AUTH=x agent", "AUTH=[REDACTED] BASIC_AUTH=[REDACTED] agent"),
        ("AUTHORIZATION=Bearer-1 agent --author me", "AUTHORIZATION=[REDACTED] agent --author me"),
    ],
)
def test_redact_command(command: str, expected: str) -> None:
    """An agent command line as run-meta.json's sandbox block keeps it."""
    assert redact_command(command) == expected


@pytest.mark.parametrize(
    ("value", "redacted"),
    [
        ({"email": "a@b.c", "password": "pw"}, {"email": "a@b.c", "password": REDACTED}),
        # at any depth, through lists (batched GraphQL) and nested objects
        (
            {"variables": {"input": {"sessionToken": "t", "name": "Alex"}}},
            {"variables": {"input": {"sessionToken": REDACTED, "name": "Alex"}}},
        ),
        (
            [{"operationName": "Login", "variables": {"password": "pw"}}],
            [{"operationName": "Login", "variables": {"password": REDACTED}}],
        ),
        # a secret key's whole value goes, whatever its shape
        ({"api_key": {"id": "k", "v": [1, 2]}}, {"api_key": REDACTED}),
        ({"csrf": ["a", "b"]}, {"csrf": REDACTED}),
        # a field named like a secret header
        ({"Cookie": "sid=1", "item": "mug"}, {"Cookie": REDACTED, "item": "mug"}),
        # values that merely look secret under ordinary keys are kept; non-containers pass
        ({"note": "my password is hunter2"}, {"note": "my password is hunter2"}),
        ("password=hunter2", "password=hunter2"),
        (None, None),
        (7, 7),
        # multipart file parts are kept as their summary
        (
            {"resume": {"filename": "cv.pdf", "size": 3, "sha256": "ab"}},
            {"resume": {"filename": "cv.pdf", "size": 3, "sha256": "ab"}},
        ),
    ],
)
def test_redact_fields(value: Any, redacted: Any) -> None:
    assert redact_fields(value) == redacted


def test_redact_fields_does_not_modify_its_input() -> None:
    body = {"password": "pw", "inner": {"token": "t"}}
    redact_fields(body)
    assert body == {"password": "pw", "inner": {"token": "t"}}


@pytest.mark.parametrize(
    ("url", "redacted"),
    [
        ("https://shop.test/cart", "https://shop.test/cart"),
        ("https://shop.test/cart?sku=MUG&qty=2", "https://shop.test/cart?sku=MUG&qty=2"),
        (
            "https://shop.test/cb?code=1&access_token=abc&state=x",
            "https://shop.test/cb?code=1&access_token=%5BREDACTED%5D&state=x",
        ),
        (
            "https://api.test/v1?api_key=k1&apikey=k2&session=s&q=token",
            "https://api.test/v1?api_key=%5BREDACTED%5D&apikey=%5BREDACTED%5D"
            "&session=%5BREDACTED%5D&q=token",
        ),
        # a percent-encoded or plus-spelled key is still that key
        (
            "https://a.test/?api%5Fkey=k&pass%77ord=p",
            "https://a.test/?api%5Fkey=%5BREDACTED%5D&pass%77ord=%5BREDACTED%5D",
        ),
        ("https://a.test/?my+token=k", "https://a.test/?my+token=%5BREDACTED%5D"),
        # repeated secret keys, bare keys, the fragment
        (
            "https://a.test/?token=1&token=2&password#top",
            "https://a.test/?token=%5BREDACTED%5D&token=%5BREDACTED%5D&password#top",
        ),
        # a secret-looking path is not a query
        ("https://a.test/password/reset?x=1", "https://a.test/password/reset?x=1"),
    ],
)
def test_redact_url(url: str, redacted: str) -> None:
    assert redact_url(url) == redacted
