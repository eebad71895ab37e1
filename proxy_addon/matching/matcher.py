"""The one matcher (docs/formats.md, "Matching"), shared by the live addon and the offline scorer.

A request matches iff re.search(url_pattern, canonical_url) and method == eval_schema.method and the
body filter and the params filter hold, with the reference's filter semantics. A body the filter
cannot be checked against (too large, undecodable, a bomb) fails closed: it is blocked and credited
as body_unverified. A no-match says why, rule by rule, and never quotes a secret the request carried
(docs/formats.md, "Secrets"): reasons reach requests.jsonl, rescore-summary.json and the CLI.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from proxy_addon.matching.bodies import parse_query
from proxy_addon.matching.equivalence import (
    decoded_separators,
    filter_equivalence,
    method_equivalence,
    repeatable,
)
from proxy_addon.matching.redact import REDACTED, is_secret_key, redact_fields, redact_url
from proxy_addon.matching.urls import reads_otherwise, server_equivalent
from proxy_addon.tasks.model import EvalSchema

_HOST_IN_PATTERN = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)+", re.IGNORECASE)


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _sent(key: str, value: Any) -> str:
    """A value the request carried, as a reason may quote it: secret-keyed values redacted."""
    if isinstance(key, str) and is_secret_key(key):
        return _short(REDACTED)
    try:
        return _short(redact_fields(value))
    except RecursionError:  # nested too deep to redact: say what it is, not what it holds
        return _kind(value)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "a number"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), f"a {type(value).__name__}"
    )


def _one_mismatch(expected: dict[str, Any], actual: Any, what: str) -> str | None:
    if not actual:
        return f"{what}: expected {_short(expected)}, got {_kind(actual)} (empty)"
    if not isinstance(actual, dict):
        return f"{what}: expected an object with {_short(expected)}, got {_kind(actual)}"
    for key, want in expected.items():
        got = actual.get(key)
        if got != want:
            if key not in actual:
                return f"{what}: key {key!r} missing (expected {_short(want)})"
            hint = ""
            if isinstance(want, str) != isinstance(got, str):
                hint = f" ({_kind(want)} never equals {_kind(got)})"
            return f"{what}: key {key!r} expected {_short(want)}, got {_sent(key, got)}{hint}"
    return None


def _where(what: str, path: tuple[int, ...]) -> str:
    return what + "".join(f"[{i}]" for i in path)


def filter_mismatch(expected: dict[str, Any] | None, actual: Any, what: str) -> str | None:
    """Why actual fails the filter, or None if it holds (the reference's _const_fields_match)."""
    if not expected:
        return None
    if not isinstance(actual, list) or not actual:
        return _one_mismatch(expected, actual, what)
    # Any element of a (nested) list may match. Walked with a stack, depth-first in order, so
    # that no nesting depth can overflow the interpreter's recursion limit.
    first: tuple[Any, tuple[int, ...]] | None = None
    stack: list[tuple[Any, tuple[int, ...]]] = [(actual, ())]
    while stack:
        item, path = stack.pop()
        if isinstance(item, list) and item:
            stack.extend((item[i], (*path, i)) for i in range(len(item) - 1, -1, -1))
            continue
        if item and isinstance(item, dict) and all(item.get(k) == v for k, v in expected.items()):
            return None
        first = first or (item, path)
    assert first is not None
    why = _one_mismatch(expected, first[0], _where(what, first[1]))
    return f"{what}: no element of the list matches; first: {why}"


def _url_host(url: str) -> str:
    # By hand: urlsplit() raises on a stray bracket, and a raising matcher lets requests through.
    authority = url.partition("://")[2].split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1]
    if authority.startswith("["):
        return authority.split("]", 1)[0][1:].lower()
    return authority.split(":", 1)[0].lower()


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """The matcher's view of one request: canonical URL, exact method, parsed body; its headers
    (for a method override) and the body's kind (a form repeats a field as a list; None: not
    known, e.g. a recorded body) count only for server equivalence."""

    method: str
    url: str
    body: Any = None
    body_error: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body_kind: str | None = None

    @property
    def query(self) -> dict[str, Any]:
        """The parsed query string (blanks dropped, as the reference does)."""
        return parse_query(self.url.partition("?")[2].partition("#")[0])


@dataclass(frozen=True, slots=True)
class MatchResult:
    match: bool
    reasons: tuple[str, ...] = ()
    url_matched: bool = False
    method_matched: bool = False
    body_unverified: bool = False
    same_host: bool = False
    equivalence: str | None = None
    """How servers route it to the commit although the exact rule misses it (docs/formats.md,
    "Matching")."""

    @property
    def near_miss(self) -> bool:
        """Not a match, but close: the URL matched, or the host is the pattern's host."""
        return not self.match and (self.url_matched or self.same_host)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"match": self.match, "reasons": list(self.reasons)}
        if self.body_unverified:
            out["body_unverified"] = True
        if self.equivalence:
            out["equivalence"] = self.equivalence
        return out


_NO_MATCH = MatchResult(False)
"""The proxy's commonest answer (another host, not explained), built once."""


@dataclass(slots=True)
class Matcher:
    """A compiled eval_schema (EvalSchema has checked that url_pattern compiles)."""

    schema: EvalSchema
    _regex: re.Pattern[str] | None = field(init=False, default=None)
    _hosts: tuple[str, ...] = field(init=False, default=())
    _subdomains: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        if not self.schema.is_placeholder:
            self._regex = re.compile(self.schema.url_pattern)
            literal = self.schema.url_pattern.replace("\\.", ".")
            self._hosts = tuple(h.lower() for h in _HOST_IN_PATTERN.findall(literal))
            self._subdomains = tuple("." + h for h in self._hosts)

    @property
    def hosts(self) -> tuple[str, ...]:
        """The host names the pattern spells out (lower-case), e.g. ('shop.example',)."""
        return self._hosts

    @property
    def log_only(self) -> bool:
        return self._regex is None

    @property
    def needs_body(self) -> bool:
        return bool(self.schema.body)

    def url_matches(self, url: str) -> bool:
        """url_pattern found in the URL, or in the URL as servers route it (server_equivalent):
        a script's //api/checkout or /api/%63heckout reaches the same handler, so it matches."""
        regex = self._regex
        if regex is None:
            return False
        if regex.search(url) is not None:
            return True
        routed = server_equivalent(url)
        return routed is not None and regex.search(routed) is not None

    def url_matches_decoded(self, url: str) -> bool:
        """url_matches once %2F in the path is read as / (a named equivalence in match())."""
        decoded = decoded_separators(url)
        return decoded is not None and self.url_matches(decoded)

    def matching_urls(self, urls: Iterable[str]) -> list[str]:
        """Those of urls that url_matches or url_matches_decoded holds for, in order: the URLs
        under which match() may find one request a match (usually none of its candidates)."""
        regex = self._regex
        if regex is None:
            return []
        return [
            url
            for url in urls
            if regex.search(url) is not None
            or (reads_otherwise(url) and (self.url_matches(url) or self.url_matches_decoded(url)))
        ]

    def _same_host(self, url: str) -> bool:
        if not self._hosts:
            return False
        host = _url_host(url)
        return host in self._hosts or host.endswith(self._subdomains)

    def match(self, req: HttpRequest, *, explain: bool = True) -> MatchResult:
        """Decide one request; every rule that fails is named in reasons, and a rule met only
        as servers read the request is named in equivalence.

        explain=False leaves out the reason of a URL mismatch on another host (the proxy's hot
        path: such a request is no near miss, so nothing would show the reason).
        """
        if self._regex is None:
            return MatchResult(False, ("url: log-only task (placeholder or empty url_pattern)",))
        notes: list[str] = []
        if not self.url_matches(req.url):
            if not self.url_matches_decoded(req.url):
                return self.url_miss(req.url, explain=explain)
            notes.append("%2F in the path read as /")
        query = req.query
        body = None if req.body_error is not None else req.body
        repeats = (repeatable(req.body_kind), True)
        checks = [self._method(req, body, query)]
        if self.schema.body and req.body_error is None:
            checks.append(self._fields("body", self.schema.body, body, query, repeats))
        if self.schema.params:
            checks.append(self._fields("params", self.schema.params, query, body, repeats[::-1]))
        notes += [note for note, _ in checks if note]
        reasons = [why for _, why in checks if why]
        method_ok = not any(r.startswith("method:") for r in reasons)
        unverified = req.body_error is not None and self._body_may_decide(req, reasons)
        if unverified:
            reasons = [f"body: unverified ({req.body_error}); blocked to fail closed"]
        return MatchResult(
            not reasons or unverified,
            tuple(reasons),
            url_matched=True,
            method_matched=method_ok,
            body_unverified=unverified,
            same_host=True,
            equivalence="; ".join(notes) or None,
        )

    def url_miss(self, url: str, *, explain: bool = True) -> MatchResult:
        """The verdict on a request whose URL does not match (the URL alone decides it)."""
        same_host = self._same_host(url)
        if not (explain or same_host):
            return _NO_MATCH
        return MatchResult(
            False,
            (f"url: pattern '{self.schema.url_pattern}' not found in '{redact_url(url)}'",),
            same_host=same_host,
        )

    def _method(self, req: HttpRequest, body: Any, query: Any) -> tuple[str | None, str | None]:
        """(equivalence, None) or (None, why not) when the method is not the commit's."""
        want = self.schema.method
        if not want or req.method == want:
            return None, None
        note = method_equivalence(req.method, want, req.headers, body, query)
        return (note, None) if note else (None, f"method: expected {want}, got {req.method}")

    @staticmethod
    def _fields(
        where: str, expected: dict[str, Any], fields: Any, other: Any, repeats: tuple[bool, bool]
    ) -> tuple[str | None, str | None]:
        """(None, None) if the filter holds, (equivalence, None) as servers read the request,
        else (None, why not)."""
        why = filter_mismatch(expected, fields, where)
        if why is None:
            return None, None
        note = filter_equivalence(expected, where, fields, other, repeats)
        return (note, None) if note else (None, why)

    def _body_may_decide(self, req: HttpRequest, reasons: list[str]) -> bool:
        """Whether an unreadable body may hold what the rest misses: the body filter, params
        moved into it, a POST's _method field. Then the request fails closed."""
        for why in reasons:
            if why.startswith("method:") and req.method != "POST":
                return False
            if not why.startswith(("method:", "params:")):
                return False
        return bool(self.schema.body) or bool(reasons)


__all__ = [
    "HttpRequest",
    "MatchResult",
    "Matcher",
    "filter_mismatch",
]
