"""What a url_pattern can match: example URLs and the shape of the source (for the linter).

Examples come from the pattern's own parse tree (the `re` module's parser; private, but the one
that compiles the pattern, so it cannot disagree with it). Every example is checked with
re.search before it is returned, so a wrong guess costs an example, never a false claim.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any

from proxy_addon.matching.urls import canonical_url

__all__ = ["Wildcard", "example_url", "examples", "host_of", "top_level_branches", "wildcards"]

_WIDTH = 6
"""Alternatives kept per node: enough to get past lookarounds, small enough to stay instant."""
_CANDIDATES = "xa1A0-_~.!*'(),;:@=+$/&?%"
"""Characters tried for classes and wildcards, URL-safe and unremarkable ones first."""
_CATEGORY = {
    sre.CATEGORY_DIGIT: str.isdigit,
    sre.CATEGORY_NOT_DIGIT: lambda c: not c.isdigit(),
    sre.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
    sre.CATEGORY_NOT_WORD: lambda c: not (c.isalnum() or c == "_"),
    sre.CATEGORY_SPACE: str.isspace,
    sre.CATEGORY_NOT_SPACE: lambda c: not c.isspace(),
}
_HOST = re.compile(r"^(?:[a-z0-9-]+\.)+[a-z]{2,}\.?$|^\d{1,3}(?:\.\d{1,3}){3}$|^localhost$|^\[")


def _in_class(items: list[tuple[Any, Any]], ch: str) -> bool:
    negate = bool(items) and items[0][0] is sre.NEGATE
    hit = False
    for op, av in items:
        if op is sre.LITERAL:
            hit = hit or ord(ch) == av
        elif op is sre.RANGE:
            hit = hit or av[0] <= ord(ch) <= av[1]
        elif op is sre.CATEGORY:
            hit = hit or _CATEGORY.get(av, lambda c: False)(ch)
    return hit != negate


def _chars(ok: Any) -> list[str]:
    found = [c for c in _CANDIDATES if ok(c)]
    return found[:2] or [c for c in map(chr, range(33, 127)) if ok(c)][:1]


def _interleave(groups: list[list[str]]) -> list[str]:
    out: list[str] = []
    for row in itertools.zip_longest(*groups):
        out.extend(x for x in row if x is not None and x not in out)
    return out[:_WIDTH]


def _node(op: Any, av: Any) -> list[str]:
    if op is sre.LITERAL:
        return [chr(av)]
    if op is sre.NOT_LITERAL:
        return _chars(lambda c: ord(c) != av)
    if op is sre.ANY:
        return ["x"]
    if op is sre.IN:
        return _chars(lambda c: _in_class(av, c))
    if op is sre.BRANCH:
        return _interleave([_seq(branch) for branch in av[1]])
    if op is sre.SUBPATTERN:
        return _seq(av[3])
    if op is sre.ATOMIC_GROUP:
        return _seq(av)
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
        low, high, item = av
        inner = _seq(item)
        counts = [low] if high == low else [low, low + 1]
        return _interleave([[s * n for s in inner] for n in counts])
    # AT (anchors), ASSERT / ASSERT_NOT (lookarounds), group references: consume nothing here;
    # the final re.search keeps only the examples that really match.
    return [""]


def _is_wildcard(op: Any, av: Any) -> bool:
    return op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and list(av[2]) == [(sre.ANY, None)]


def _fill(low: int, before: str, after: str) -> list[str]:
    # What a `.*` / `.+` most plausibly stood for in a URL, judged by its neighbours.
    if re.match(r"\w+=", after):
        # "graphql.*op=X": a query parameter, the first or a later one
        fills = ["&", "?"] if "?" in before else ["?", "/", "&"]
    elif before.endswith("/") and after.startswith("/"):
        fills = ["x"]  # "people/.+/services": one path segment
    elif before.endswith("/") or after.startswith("/"):
        fills = ["", "x"]
    else:
        fills = ["/", "", "x/"]  # "shop\.com.*Cart-Add": the rest of the host, then a path
    return [f for f in fills if len(f) >= low] or ["x" * low]


def _seq(items: Any) -> list[str]:
    items = list(items)
    options = [_node(op, av) for op, av in items]
    for i, (op, av) in enumerate(items):
        if _is_wildcard(op, av):
            before = "".join(o[0] for o in options[:i] if o)
            after = "".join(o[0] for o in options[i + 1 :] if o)
            options[i] = _fill(av[0], before, after)
    combos = itertools.islice(itertools.product(*options), _WIDTH * 4)
    return _interleave([["".join(c) for c in combos]])


def examples(pattern: str) -> list[str]:
    """Strings built from the pattern's parse tree (not yet checked; may be empty)."""
    try:
        return _seq(sre_parse.parse(pattern).data)
    except (re.error, RecursionError, TypeError, ValueError):
        return []


def _as_url(text: str, origin: str) -> str:
    if text.startswith(("http://", "https://")):
        return text
    return origin + text if text.startswith("/") or not text else "https://" + text


def example_url(pattern: str, origin: str = "https://example.test") -> str | None:
    """A canonical absolute URL that re.search(pattern, url) finds, or None if none was found.

    Pattern text that starts with a path is put after `origin`; anything else after https://.
    A matching URL that is not canonical is returned only if no canonical one matches.
    """
    regex = re.compile(pattern)
    fallback = None
    for text in examples(pattern):
        url = _as_url(text, origin)
        try:
            canonical = canonical_url(url)
        except ValueError:
            canonical = None
        if canonical and regex.search(canonical):
            return canonical
        if regex.search(url):
            fallback = fallback or url
    return fallback


def host_of(url: str) -> str:
    """The host of an absolute URL, by hand (no exceptions)."""
    authority = url.partition("://")[2].split("/", 1)[0].split("?", 1)[0]
    return authority.rsplit("@", 1)[-1].rsplit(":", 1)[0] if "]" not in authority else authority


def names_host(url: str) -> bool:
    """True if the URL's host is a real-looking name (not the placeholder origin)."""
    host = host_of(url).lower()
    return host != "example.test" and bool(_HOST.match(host))


@dataclass(frozen=True, slots=True)
class Wildcard:
    text: str  # ".*", ".+", ".{2,}" ...
    offset: int  # in the pattern
    after_query: bool  # a literal '?' comes before it: it is in the query by design
    tail: str  # the pattern text that follows it


def _scan(pattern: str) -> Iterator[tuple[int, str, int, bool]]:
    """(offset, token, depth, in_lookaround) for each top-level token; classes are one token."""
    i, depth, looks = 0, 0, [False]
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            yield i, pattern[i : i + 2], depth, any(looks)
            i += 2
            continue
        if c == "[":
            j = i + 1
            if pattern[j : j + 1] == "^":
                j += 1
            if pattern[j : j + 1] == "]":
                j += 1
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            yield i, pattern[i : j + 1], depth, any(looks)
            i = j + 1
            continue
        if c == "(":
            looks.append(pattern.startswith(("(?=", "(?!", "(?<=", "(?<!"), i))
            yield i, c, depth, any(looks)
            depth += 1
        elif c == ")":
            depth = max(depth - 1, 0)
            yield i, c, depth, any(looks)
            if len(looks) > 1:
                looks.pop()
        else:
            yield i, c, depth, any(looks)
        i += 1


def top_level_branches(pattern: str) -> list[str]:
    """The pattern split at its top-level '|' (the alternatives re.search tries anywhere)."""
    cuts = [off for off, tok, depth, _ in _scan(pattern) if tok == "|" and depth == 0]
    bounds = [-1, *cuts, len(pattern)]
    return [pattern[a + 1 : b] for a, b in itertools.pairwise(bounds)]


_QUANT = re.compile(r"\*\??|\+\??|\{\d+,\}\??")


def wildcards(branch: str) -> list[Wildcard]:
    """Unbounded `.` repeats outside lookarounds (`.*`, `.+`, `.{n,}`), in order."""
    out: list[Wildcard] = []
    seen_query = False
    for off, tok, _, in_look in _scan(branch):
        if in_look:
            continue
        if tok in ("\\?", "[?]"):
            seen_query = True
        if tok == "." and (m := _QUANT.match(branch, off + 1)):
            end = m.end()
            out.append(Wildcard(branch[off:end], off, seen_query, branch[end:]))
    return out
