"""The one matcher (docs/formats.md, "Matching"): filter semantics, method, placeholders,
fail-closed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from proxy_addon.matching import HttpRequest, Matcher, parse_body
from proxy_addon.matching.matcher import filter_mismatch
from proxy_addon.tasks import EvalSchema
from proxy_addon.tasks.model import PLACEHOLDER

GRAPHQL = "https://psl.petfinder.com/graphql"


@pytest.mark.parametrize(
    ("expected", "actual", "holds"),
    [
        # an empty / None filter always holds, even against nothing
        (None, None, True),
        ({}, None, True),
        ({}, "anything", True),
        # a falsy actual never matches a non-empty filter
        ({"a": "1"}, None, False),
        ({"a": "1"}, {}, False),
        ({"a": "1"}, [], False),
        ({"a": "1"}, "", False),
        ({"a": "1"}, 0, False),
        # non-dict actual never matches
        ({"a": "1"}, "a=1", False),
        ({"a": "1"}, 1, False),
        ({"a": "1"}, True, False),
        # every expected key must be equal; extra actual keys are fine
        ({"a": "1"}, {"a": "1", "b": "2"}, True),
        ({"a": "1", "b": "2"}, {"a": "1", "b": "3"}, False),
        ({"a": "1", "b": "2"}, {"a": "1"}, False),
        # a list actual matches if any element does (batched GraphQL), also nested
        ({"operationName": "B"}, [{"operationName": "A"}, {"operationName": "B"}], True),
        ({"operationName": "C"}, [{"operationName": "A"}, {"operationName": "B"}], False),
        ({"operationName": "B"}, [[{"operationName": "B"}]], True),
        ({"operationName": "B"}, ["x", None, {"operationName": "B"}], True),
        # no type coercion: a number never equals a form string, nor a string a number
        ({"commit": 1}, {"commit": "1"}, False),
        ({"commit": "1"}, {"commit": 1}, False),
        ({"commit": 1}, {"commit": 1}, True),
        # ... but Python equality is the reference's: True == 1 and 1 == 1.0
        ({"commit": 1}, {"commit": True}, True),
        ({"commit": True}, {"commit": 1}, True),
        ({"commit": 1}, {"commit": 1.0}, True),
        ({"commit": 0}, {"commit": False}, True),
        # nested values must be equal as wholes
        ({"v": {"id": 7}}, {"v": {"id": 7}}, True),
        ({"v": {"id": 7}}, {"v": {"id": 7, "x": 1}}, False),
        ({"tags": ["a", "b"]}, {"tags": ["a", "b"]}, True),
        ({"tags": ["a", "b"]}, {"tags": ["b", "a"]}, False),
        # a None expectation holds where the key is missing (actual.get(k) == None)
        ({"x": None}, {"y": "1"}, True),
        ({"x": None}, {"x": ""}, False),
        # case matters
        ({"a": "Send"}, {"a": "send"}, False),
        ({"A": "send"}, {"a": "send"}, False),
    ],
)
def test_filter_semantics(expected: dict[str, Any] | None, actual: Any, holds: bool) -> None:
    assert (filter_mismatch(expected, actual, "body") is None) is holds


def test_form_body_never_matches_a_numeric_filter() -> None:
    # resy's {"commit": 1}: a form post commit=1 parses to {"commit": "1"} and does not match.
    m = Matcher(
        EvalSchema(url_pattern=r"api\.resy\.com/3/details", method="POST", body={"commit": 1})
    )
    url = "https://api.resy.com/3/details"
    form = parse_body(b"commit=1&struct_data=x", "application/x-www-form-urlencoded")
    result = m.match(HttpRequest("POST", url, form.value))
    assert not result.match
    assert result.reasons == (
        "body: key 'commit' expected 1, got \"1\" (a number never equals a string)",
    )
    as_json = parse_body(b'{"commit": 1, "struct_data": "x"}', "application/json")
    assert m.match(HttpRequest("POST", url, as_json.value)).match


@pytest.mark.parametrize(
    ("want", "got", "ok"),
    [
        ("POST", "POST", True),
        ("POST", "post", False),
        ("POST", "PUT", False),
        ("GET", "POST", False),
        ("POST", "HEAD", False),
        ("PUT", "PUT", True),
        ("PATCH", "PATCH", True),
        ("DELETE", "DELETE", True),
    ],
)
def test_method_is_exact(want: str, got: str, ok: bool) -> None:
    m = Matcher(EvalSchema(url_pattern="shop", method=want))  # type: ignore[arg-type]
    result = m.match(HttpRequest(got, "https://shop.test/x"))
    assert result.match is ok
    assert result.method_matched is ok
    assert result.url_matched and result.equivalence is None
    if not ok:
        assert result.reasons == (f"method: expected {want}, got {got}",)


@pytest.mark.parametrize("pattern", ["", PLACEHOLDER, f"shop\\.test/{PLACEHOLDER}"])
@pytest.mark.parametrize(
    "url", ["https://shop.test/", f"https://shop.test/{PLACEHOLDER}", "http://127.0.0.1:7878/x"]
)
def test_placeholder_and_empty_pattern_never_match(pattern: str, url: str) -> None:
    m = Matcher(EvalSchema(url_pattern=pattern, method="POST"))
    assert m.log_only
    result = m.match(HttpRequest("POST", url, {"a": "1"}))
    assert not result.match
    assert not result.near_miss
    assert result.reasons == ("url: log-only task (placeholder or empty url_pattern)",)


def test_url_is_searched_case_sensitively_without_anchors() -> None:
    m = Matcher(EvalSchema(url_pattern=r"shop\.test/checkout", method="POST"))
    assert m.match(HttpRequest("POST", "https://www.shop.test/checkout/confirm?x=1")).match
    result = m.match(HttpRequest("POST", "https://shop.test/Checkout"))
    assert not result.match
    assert result.same_host and result.near_miss and not result.url_matched
    assert result.reasons == (
        "url: pattern 'shop\\.test/checkout' not found in 'https://shop.test/Checkout'",
    )
    other = m.match(HttpRequest("POST", "https://elsewhere.test/"))
    assert not other.same_host and not other.near_miss and other.reasons
    # explain=False (the proxy's hot path): same decision, the unshown reason left out
    quiet = m.match(HttpRequest("POST", "https://elsewhere.test/"), explain=False)
    assert (quiet.match, quiet.near_miss, quiet.reasons) == (False, False, ())
    near = m.match(HttpRequest("POST", "https://shop.test/Checkout"), explain=False)
    assert near == result


def _schema(**kw: Any) -> Matcher:
    return Matcher(EvalSchema(url_pattern=r"psl\.petfinder\.com/graphql", method="POST", **kw))


def test_reasons_name_each_failing_rule_and_the_first_differing_key() -> None:
    m = _schema(body={"operationName": "CreateAdoptionInquiry", "n": "2"}, params={"v": "1"})
    result = m.match(HttpRequest("GET", GRAPHQL + "?v=2", {"operationName": "Other", "n": "3"}))
    assert not result.match
    assert result.url_matched and not result.method_matched and result.near_miss
    assert result.reasons == (
        "method: expected POST, got GET",
        'body: key \'operationName\' expected "CreateAdoptionInquiry", got "Other"',
        'params: key \'v\' expected "1", got "2"',
    )


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (None, 'body: expected {"operationName": "X"}, got nothing (empty)'),
        ({}, 'body: expected {"operationName": "X"}, got an object (empty)'),
        ("a b", 'body: expected an object with {"operationName": "X"}, got a string'),
        ({"query": "q"}, "body: key 'operationName' missing (expected \"X\")"),
        (
            [{"operationName": "A"}, {"operationName": "B"}],
            "body: no element of the list matches; first: "
            'body[0]: key \'operationName\' expected "X", got "A"',
        ),
    ],
)
def test_body_reasons(body: Any, reason: str) -> None:
    result = _schema(body={"operationName": "X"}).match(HttpRequest("POST", GRAPHQL, body))
    assert result.reasons == (reason,)


def test_params_come_from_the_query_with_blanks_dropped() -> None:
    m = Matcher(EvalSchema(url_pattern=r"news\.test/subscribe", method="GET", params={"list": "w"}))
    assert m.match(HttpRequest("GET", "https://news.test/subscribe?list=w&email=")).match
    assert not m.match(HttpRequest("GET", "https://news.test/subscribe?list=")).match
    result = m.match(HttpRequest("GET", "https://news.test/subscribe"))
    assert result.reasons == ('params: expected {"list": "w"}, got an object (empty)',)
    # a repeated key is a list, which the exact rule never equals to one value; servers read
    # its first (Flask, Go) or last (Django, Rails) value: the server equivalence names which
    first = m.match(HttpRequest("GET", "https://news.test/subscribe?list=w&list=d"))
    assert first.match and first.equivalence == "params.list sent 2 times, the first one read"
    last = m.match(HttpRequest("GET", "https://news.test/subscribe?list=d&list=x&list=w"))
    assert last.match and last.equivalence == "params.list sent 3 times, the last one read"
    assert not m.match(HttpRequest("GET", "https://news.test/subscribe?list=d&list=w&list=x")).match


@pytest.mark.parametrize(
    ("method", "query", "body_filter", "unverified", "match"),
    [
        # URL + method (+ params) match, a body filter exists, the body is unevaluable: blocked
        ("POST", "?v=1", {"operationName": "X"}, True, True),
        # no body filter: the body does not matter, so it is an ordinary match
        ("POST", "?v=1", None, False, True),
        # the method fails, and no body can change that (only a POST's _method can)
        ("GET", "?v=1", {"operationName": "X"}, False, False),
        ("PUT", "?v=2", None, False, False),
        # params fail in the query, but a server may read them from the unread body: blocked
        ("POST", "?v=2", {"operationName": "X"}, True, True),
        ("POST", "?v=2", None, True, True),
    ],
)
def test_unevaluable_body_fails_closed_only_where_it_matters(
    method: str, query: str, body_filter: dict[str, Any] | None, unverified: bool, match: bool
) -> None:
    m = _schema(body=body_filter, params={"v": "1"})
    req = HttpRequest(method, GRAPHQL + query, None, "decoded body exceeds 100 bytes")
    result = m.match(req)
    assert result.match is match
    assert result.body_unverified is unverified
    if unverified:
        assert result.reasons == (
            "body: unverified (decoded body exceeds 100 bytes); blocked to fail closed",
        )
        assert result.to_json()["body_unverified"] is True
    else:
        assert "body_unverified" not in result.to_json()


def test_url_only_schema_matches_anything_on_the_url() -> None:
    m = Matcher(EvalSchema(url_pattern=r"shop\.test/api/checkout", method="POST"))
    for body in (None, "", [], {"x": 1}, "raw"):
        assert m.match(HttpRequest("POST", "https://shop.test/api/checkout", body)).match


def test_match_result_json() -> None:
    m = _schema(body={"operationName": "X"})
    result = m.match(HttpRequest("POST", GRAPHQL, [{"operationName": "X"}]))
    assert result.to_json() == {"match": True, "reasons": []}
    assert json.loads(json.dumps(result.to_json())) == {"match": True, "reasons": []}


def test_hosts_with_brackets_do_not_break_the_matcher() -> None:
    # A Host header such as "shop.test]" reaches the URL as is; urlsplit() would raise on it,
    # and a raising matcher would let the request through.
    m = Matcher(EvalSchema(url_pattern=r"shop\.test", method="POST", params={"a": "1"}))
    assert m.match(HttpRequest("POST", "https://shop.test]/x?a=1")).match
    other = Matcher(EvalSchema(url_pattern=r"elsewhere", method="POST"))
    assert not other.match(HttpRequest("POST", "https://[shop.test/x")).match


def test_deeply_nested_lists_do_not_overflow() -> None:
    deep: Any = {"operationName": "X"}
    for _ in range(5000):
        deep = [deep]
    assert filter_mismatch({"operationName": "X"}, deep, "body") is None
    assert filter_mismatch({"operationName": "Y"}, deep, "body") is not None


def test_a_pattern_that_does_not_compile_is_a_schema_error() -> None:
    """The one check: the task model refuses the pattern, naming the field and the fix."""
    with pytest.raises(ValidationError) as info:
        EvalSchema(url_pattern="shop(", method="POST")
    (error,) = info.value.errors(include_url=False)
    assert error["loc"] == ("url_pattern",) and error["type"] == "url_pattern_invalid"
    assert error["msg"] == (
        "regex does not compile: missing ), unterminated subpattern at position 4 "
        r"(escape literal ( ) [ ] ? + * with a backslash)"
    )


@pytest.mark.parametrize(
    "pattern", ["", "__PLACEHOLDER_WILL_NOT_MATCH__", "(__PLACEHOLDER_WILL_NOT_MATCH__"]
)
def test_a_log_only_pattern_is_never_compiled(pattern: str) -> None:
    assert EvalSchema(url_pattern=pattern, method="POST").is_placeholder


SENT = ("sess-5ec12e7", "key-a91b3c", "pw-77d0e1", "csrf-0bb4f2")
"""Secret values a request carries; no reason may quote any of them (docs/formats.md, "Secrets")."""


@pytest.mark.parametrize(
    ("schema", "url", "body", "reason"),
    [
        # a secret-keyed body value that differs: the key and the expected value, never the sent
        (
            {"body": {"session_id": "sess-want"}},
            GRAPHQL,
            {"session_id": "sess-5ec12e7"},
            'body: key \'session_id\' expected "sess-want", got "[REDACTED]"',
        ),
        # the same for a secret-keyed query value
        (
            {"params": {"api_key": "key-want"}},
            GRAPHQL + "?api_key=key-a91b3c&v=1",
            None,
            'params: key \'api_key\' expected "key-want", got "[REDACTED]"',
        ),
        # the kind hint stays: it says nothing of the value
        (
            {"body": {"X-Session": 1}},
            GRAPHQL,
            {"X-Session": "sess-5ec12e7"},
            "body: key 'X-Session' expected 1, got \"[REDACTED]\" (a number never equals a string)",
        ),
        # an ordinary key whose sent value holds a secret deeper down
        (
            {"body": {"user": {"name": "a"}}},
            GRAPHQL,
            {"user": {"name": "b", "password": "pw-77d0e1"}},
            'body: key \'user\' expected {"name": "a"}, '
            'got {"name": "b", "password": "[REDACTED]"}',
        ),
        # a batched body: the first element's reason, redacted the same way
        (
            {"body": {"csrf_token": "csrf-want"}},
            GRAPHQL,
            [{"csrf_token": "csrf-0bb4f2"}],
            "body: no element of the list matches; first: "
            'body[0]: key \'csrf_token\' expected "csrf-want", got "[REDACTED]"',
        ),
        # a URL that does not match: quoted with its secret query values redacted
        (
            {},
            "https://psl.petfinder.com/other?api_key=key-a91b3c&token=sess-5ec12e7",
            None,
            "url: pattern 'psl\\.petfinder\\.com/graphql' not found in "
            "'https://psl.petfinder.com/other?api_key=%5BREDACTED%5D&token=%5BREDACTED%5D'",
        ),
    ],
)
def test_reasons_never_quote_a_secret_sent(
    schema: dict[str, Any], url: str, body: Any, reason: str
) -> None:
    result = _schema(**schema).match(HttpRequest("POST", url, body))
    assert not result.match and result.near_miss
    assert result.reasons == (reason,)
    assert not [s for s in SENT if any(s in r for r in result.reasons)]


def test_a_value_too_deep_to_redact_is_described_not_quoted() -> None:
    deep: Any = "x"
    for _ in range(100_000):
        deep = {"a": deep}
    result = _schema(body={"v": "1"}).match(HttpRequest("POST", GRAPHQL, {"v": deep}))
    hint = "(a string never equals an object)"
    assert result.reasons == (f"body: key 'v' expected \"1\", got an object {hint}",)
