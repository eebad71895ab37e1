"""The matching proof on the reference corpus: for every task that can intercept, a request the
task describes matches, and the near variants (another method, a filter value off by one
character, a filter key missing) do not; log-only tasks never match.

Request URLs come from patterns.example_url (built from the pattern's parse tree) and are
checked here with a plain re.search and for canonical form before use; query parameters and
bodies are built from the task's own filters.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import pytest

from proxy_addon.matching import HttpRequest, Matcher, canonical_url, parse_body
from proxy_addon.tasks import Task, load_task
from proxy_addon.tasks.model import METHODS, PLACEHOLDER
from proxy_addon.tasks.patterns import example_url

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
SUBMIT_ORIGIN = "http://127.0.0.1:7878"  # where a host-less claw-eval pattern is submitted


def _tasks(corpus: Path) -> list[tuple[Path, Task]]:
    return [(p, load_task(p)) for p in sorted(corpus.glob("*/*/task.json"))]


def _off_by_one(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str) and value:
        return value[:-1] + chr(ord(value[-1]) + 1)
    return f"{value}x"


def _url(task: Task, params: dict[str, Any] | None) -> str:
    """A canonical URL the pattern matches, carrying the params filter's values (if any)."""
    url = example_url(task.eval_schema.url_pattern, origin=SUBMIT_ORIGIN)
    assert url is not None, "no example URL"
    if params is None:
        return url
    base, _, query = url.partition("?")
    # The example's own query pairs, minus every key the filter names (kept or dropped here).
    names = set(task.eval_schema.params or {})
    rest = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k not in names]
    pairs = [(k, v) for k, v in params.items() if not isinstance(v, list)]
    pairs += [(k, item) for k, v in params.items() if isinstance(v, list) for item in v]
    return f"{base}?{urlencode(pairs + rest)}" if pairs or rest else base


def _decide(task: Task, method: str, url: str, raw: bytes | None, ctype: str | None) -> bool:
    parsed = parse_body(raw, ctype)
    assert parsed.error is None
    result = Matcher(task.eval_schema).match(HttpRequest(method, url, parsed.value, parsed.error))
    assert result.match or result.reasons
    return result.match


def _bodies(body: dict[str, Any]) -> Iterator[tuple[str, bytes, str]]:
    """The ways a site may send a body carrying the filter's values."""
    full = {**body, "clientMutationId": "7"}
    yield "json", json.dumps(full).encode(), JSON
    yield "batched", json.dumps([{"operationName": "Track"}, full]).encode(), JSON
    if all(isinstance(v, str) for v in body.values()):
        yield "form", urlencode(full).encode(), FORM


def _failures(path: Path, task: Task) -> Iterator[str]:
    schema = task.eval_schema
    params = schema.params or None
    url = _url(task, params)
    if not re.search(schema.url_pattern, url) or canonical_url(url) != url:
        yield f"{path}: example {url} is not a canonical URL the pattern matches"
        return
    bodies = list(_bodies(schema.body)) if schema.body else [("none", None, None)]
    for kind, raw, ctype in bodies:
        if not _decide(task, schema.method, url, raw, ctype):
            yield f"{path}: the {kind} request does not match: {schema.method} {url} {raw!r}"
        for other in METHODS:
            if other != schema.method and _decide(task, other, url, raw, ctype):
                yield f"{path}: matches with method {other}"
    for key, value in (schema.body or {}).items():
        kind, raw, ctype = bodies[0]
        for variant, body in (
            ("off by one", {**schema.body, key: _off_by_one(value)}),  # type: ignore[dict-item]
            ("missing", {k: v for k, v in schema.body.items() if k != key}),  # type: ignore[union-attr]
        ):
            if _decide(task, schema.method, url, json.dumps(body).encode(), JSON):
                yield f"{path}: matches with body key {key!r} {variant}"
    for key, value in (params or {}).items():
        for variant, changed in (
            ("off by one", {**params, key: _off_by_one(value)}),  # type: ignore[dict-item]
            ("missing", {k: v for k, v in params.items() if k != key}),  # type: ignore[union-attr]
        ):
            raw = bodies[0][1]
            if _decide(task, schema.method, _url(task, changed), raw, bodies[0][2]):
                yield f"{path}: matches with query key {key!r} {variant}"


def test_every_interceptable_reference_task_matches_exactly(reference_corpus: Path) -> None:
    tasks = [(p, t) for p, t in _tasks(reference_corpus) if not t.eval_schema.is_placeholder]
    failures = [f for path, task in tasks for f in _failures(path, task)]
    assert not failures, "\n".join(failures)
    # breadth of the proof: all corpora, and every task with a body or params filter
    corpora = Counter(p.parent.parent.name for p, _ in tasks)
    assert set(corpora) == {"v1", "v1-lite", "v2", "claw-eval", "environmental-observation"}
    assert len(tasks) >= 40
    filtered = [p for p, t in tasks if t.eval_schema.body or t.eval_schema.params]
    assert len(filtered) == 30  # 18 body filters, 12 params filters


def test_reference_quirks_are_kept(reference_corpus: Path) -> None:
    resy = load_task(reference_corpus / "v1" / "873-daily-life-food-resy")
    url = "https://api.resy.com/3/details"
    # {"commit": 1}: a form's "1" is not 1; JSON's true is (Python equality, as the reference)
    assert not _decide(resy, "POST", url, b"commit=1", FORM)
    assert _decide(resy, "POST", url, b'{"commit": 1, "config_id": "x"}', JSON)
    assert _decide(resy, "POST", url, b'{"commit": true}', JSON)
    assert not _decide(resy, "POST", url, b'{"commit": "1"}', JSON)
    # a form body labelled JSON (or anything) is still parsed as a form
    mail = load_task(reference_corpus / "v1" / "120-office-secretary-tasks-email-mgmt-purelymail")
    mail_url = "https://inbox.purelymail.com/?_task=mail&_action=send"
    assert _decide(mail, "POST", mail_url, b"_token=t&_action=send&_to=a%40b.c", "text/plain")
    assert not _decide(mail, "POST", mail_url, b"_token=t&_action=draft", FORM)


@pytest.mark.parametrize("suffix", ["/", "/checkout", f"/{PLACEHOLDER}", f"/?q={PLACEHOLDER}"])
def test_placeholder_tasks_never_match(reference_corpus: Path, suffix: str) -> None:
    placeholders = [(p, t) for p, t in _tasks(reference_corpus) if t.eval_schema.is_placeholder]
    assert len(placeholders) == 90
    for path, task in placeholders:
        sites = task.metadata.sites_involved if task.metadata else []
        host = sites[0] if sites else "example.com"
        url = canonical_url(f"https://{host}{suffix}")
        for body in (None, b'{"a": 1}', b"a=1"):
            result = Matcher(task.eval_schema).match(
                HttpRequest(task.eval_schema.method, url, parse_body(body).value)
            )
            assert not result.match, path
