"""Server equivalence (docs/formats.md, "Matching"), table-tested on the matcher: what mainstream
servers route to the commit handler is a match that names how; what they do not stays a miss."""

from __future__ import annotations

from typing import Any

import pytest

from proxy_addon.matching import HttpRequest, Matcher
from proxy_addon.matching.equivalence import decoded_separators
from proxy_addon.tasks import EvalSchema

URL = "https://shop.test/api/cart"


def _matcher(method: str = "PUT", body: Any = None, params: Any = None) -> Matcher:
    schema = EvalSchema(url_pattern=r"shop\.test/api/cart", method=method, body=body, params=params)
    return Matcher(schema)


@pytest.mark.parametrize(
    ("method", "headers", "body", "query", "named"),
    [
        ("POST", {"X-HTTP-Method-Override": "PUT"}, None, "", "x-http-method-override: PUT"),
        ("POST", {"x-method-override": " put "}, None, "", "x-method-override: PUT"),
        ("POST", {"X-HTTP-Method": "PUT"}, None, "", "x-http-method: PUT"),
        ("POST", {}, {"_method": "put", "item": "mug"}, "", "_method=PUT in the body"),
        ("POST", {}, {"_method": ["x", "PUT"]}, "", "_method=PUT in the body"),
        ("POST", {}, None, "_method=PUT", "_method=PUT in the query"),
        # only a POST is overridden, and only to the commit's method
        ("GET", {"X-HTTP-Method-Override": "PUT"}, None, "", None),
        ("PATCH", {}, {"_method": "PUT"}, "", None),
        ("POST", {"X-HTTP-Method-Override": "PATCH"}, None, "", None),
        ("POST", {"X-Override": "PUT"}, None, "", None),
        ("POST", {}, {"_method": 1}, "", None),
    ],
)
def test_method_override(
    method: str, headers: dict[str, str], body: Any, query: str, named: str | None
) -> None:
    url = f"{URL}?{query}" if query else URL
    result = _matcher().match(HttpRequest(method, url, body, None, headers, "form"))
    assert result.match is (named is not None)
    assert result.equivalence == (f"method override: {named}" if named else None)


def test_head_is_a_get_and_nothing_else() -> None:
    get = _matcher("GET")
    assert get.match(HttpRequest("HEAD", URL)).equivalence == "HEAD for GET"
    assert not _matcher("POST").match(HttpRequest("HEAD", URL)).match


@pytest.mark.parametrize(
    ("body", "query", "kind", "named"),
    [
        ({"item": ["mug", "cup"]}, "", "form", "body.item sent 2 times, the first one read"),
        ({"item": ["cup", "pen", "mug"]}, "", "multipart",
         "body.item sent 3 times, the last one read"),
        ({"item": ["cup", "mug", "pen"]}, "", "form", None),  # neither end: no server reads it
        ({"item": ["mug", "cup"]}, "", "json", None),  # a JSON array is one value, not a repeat
        ({"qty": "1"}, "item=mug", "form", "body.item read from the query"),
        (None, "item=mug", None, "body.item read from the query"),
        # both parts carry it: servers disagree on which wins (Flask the query, Rails and PHP
        # the body), so the body, which the filter names, decides
        ({"item": "cup"}, "item=mug", "form", None),
        ({"qty": "1"}, "item=cup&item=mug", "form",
         "query.item sent 2 times, the last one read; body.item read from the query"),
        ([{"item": "mug"}], "", "json", ""),  # a batch: the reference's rule holds it already
        ({"qty": "1"}, "other=mug", "form", None),
    ],
)  # fmt: skip
def test_a_body_field_as_servers_read_it(
    body: Any, query: str, kind: str | None, named: str | None
) -> None:
    url = f"{URL}?{query}" if query else URL
    result = _matcher(body={"item": "mug"}).match(HttpRequest("PUT", url, body, None, {}, kind))
    assert result.match is (named is not None)
    assert result.equivalence == (named or None)


def test_a_params_field_may_come_from_the_body() -> None:
    m = _matcher("POST", params={"step": "pay"})
    moved = m.match(HttpRequest("POST", URL, {"step": "pay"}, None, {}, "json"))
    assert moved.match and moved.equivalence == "params.step read from the body"
    assert not m.match(HttpRequest("POST", URL, {"step": "review"}, None, {}, "json")).match


def test_equivalences_combine_and_reasons_stay_for_a_miss() -> None:
    m = _matcher(body={"item": "mug"})
    both = m.match(HttpRequest("POST", f"{URL}?item=mug", None, None, {"X-HTTP-Method": "PUT"}))
    assert both.equivalence == "method override: x-http-method: PUT; body.item read from the query"
    miss = m.match(HttpRequest("POST", URL, {"item": "cup"}, None, {}, "form"))
    assert miss.reasons == (
        "method: expected PUT, got POST",
        'body: key \'item\' expected "mug", got "cup"',
    )


@pytest.mark.parametrize(
    ("url", "read"),
    [
        ("https://a.test/api%2Fcheckout?x=%2F", "https://a.test/api/checkout?x=%2F"),
        ("https://a.test/api%2fcheckout", "https://a.test/api/checkout"),
        ("https://a.test/x%2F..%2Fapi/checkout", "https://a.test/api/checkout"),
        ("https://a.test/api/checkout?next=%2F", None),  # the query is not the path
        ("https://a.test/api/checkout", None),
        ("https://a.test", None),
    ],
)
def test_decoded_separators(url: str, read: str | None) -> None:
    assert decoded_separators(url) == read
