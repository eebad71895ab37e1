"""The traps in an eval_schema that a curator needs to see (clawbench-tasks lint).

Errors are schemas that can never intercept the intended request, or that credit requests the
task did not ask for; warnings are legal but fragile. Every rule is judged on the canonical URL
the proxy matches (docs/formats.md, "Matching") and on the reference's filter semantics.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from proxy_addon.matching.urls import canonical_url
from proxy_addon.tasks.model import Task
from proxy_addon.tasks.patterns import example_url, names_host, top_level_branches, wildcards
from proxy_addon.tasks.validation import Finding, load_checked

__all__ = ["RULES", "lint_file", "lint_task"]

RULES: dict[str, tuple[str, str]] = {
    "invalid": ("error", "the task does not load or its regex does not compile"),
    "any-host-branch": ("error", "a top-level | branch names no host, so it matches on any site"),
    "never-canonical": ("error", "the pattern matches only URLs the proxy never sees (canonical)"),
    "anchor-start": ("error", "^ anchors the pattern, but a URL starts with its scheme"),
    "params-not-string": ("error", "a params filter value that no query value can equal"),
    "null-filter": ("error", "a null filter value, which also holds where the key is missing"),
    "body-on-get": ("error", "a body filter on a GET, which carries no body"),
    "no-host": ("warning", "the pattern names no host, so it matches that path on any site"),
    "wildcard-query": ("warning", ".* / .+ before the query can run into the query string"),
    "dollar-query": ("warning", "$ anchors the end, so any query string breaks the match"),
    "get-commit": ("warning", "a GET commit without params: a page view or prefetch can fire it"),
    "body-not-string": ("warning", "a non-string body value: never equals a form or query value"),
    "body-nested": ("warning", "an object/array body value must equal the request's whole value"),
    "placeholder": ("warning", "log-only task: never intercepts, so the run ends by time limit"),
    "no-example": ("warning", "lint found no URL the pattern matches; check it with `match`"),
}


def _finding(path: Path, field: str, rule: str, message: str, fix: str = "") -> Finding:
    return Finding(str(path), field, message, fix, RULES[rule][0], rule)  # type: ignore[arg-type]


def _short(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _as_sent(value: Any) -> str:
    """A scalar as a form or query string carries it: JSON's true/false, str() of a number."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _branch_example(branch: str) -> str | None:
    try:
        return example_url(branch)
    except re.error:  # a branch that only compiles with the others (a back-reference)
        return None


def _anchored_wrong(branch: str) -> bool:
    # "^(" may open a lookahead before the scheme; only a plain ^ + non-scheme text is certain.
    return branch.startswith("^") and not branch.startswith(("^(", "^http", "^[hH]"))


def _branch_findings(branch: str, index: int, url: str, hosted: bool, path: Path) -> list[Finding]:
    field = "eval_schema.url_pattern"
    out: list[Finding] = []
    if not hosted:
        out.append(
            _finding(
                path,
                field,
                "any-host-branch",
                f"top-level alternative {index + 1} {branch!r} names no host, so it matches "
                f"on any site (e.g. {url})",
                "wrap the alternatives in (?:...) after the host, or give each its host",
            )
        )
    try:
        canonical = canonical_url(url)
    except ValueError:
        canonical = None
    if canonical != url:
        out.append(
            _finding(
                path,
                field,
                "never-canonical",
                f"{branch!r} matches {url} but not the URL the proxy sees ({canonical}): "
                "hosts are lower-case, without default port or trailing dot, dot segments resolved",
                "write the URL as a browser sends it",
            )
        )
        return out
    if ("$" in branch or r"\Z" in branch) and "?" not in url:
        probe = url + "?utm_source=newsletter"
        if not re.search(branch, probe):
            out.append(
                _finding(
                    path,
                    field,
                    "dollar-query",
                    f"{branch!r} stops matching once a query string is added ({probe})",
                    r"end with (?:\?|$) instead of $",
                )
            )
    for w in wildcards(branch):
        tail = w.tail.rstrip("$")
        if w.after_query or not tail.strip(")"):
            continue
        out.append(
            _finding(
                path,
                field,
                "wildcard-query",
                f"{w.text!r} at offset {w.offset} of {branch!r} can run into the query string, "
                f"so {tail!r} may match inside a query value",
                "use [^?#]* (or [^/?#]+ for one path segment) instead",
            )
        )
    return out


def _url_findings(pattern: str, path: Path) -> list[Finding]:
    field = "eval_schema.url_pattern"
    branches = top_level_branches(pattern)
    examples = [_branch_example(b) for b in branches]
    hosted = [bool(u and names_host(u)) for u in examples]
    out: list[Finding] = []
    for i, (branch, url) in enumerate(zip(branches, examples, strict=True)):
        if _anchored_wrong(branch):
            out.append(
                _finding(
                    path,
                    field,
                    "anchor-start",
                    f"{branch!r} is anchored with ^ but does not start with the scheme, and "
                    "every URL does (https://...), so it never matches",
                    "drop the ^ or start with ^https://",
                )
            )
        elif url is None:
            out.append(
                _finding(
                    path,
                    field,
                    "no-example",
                    f"found no URL that {branch!r} matches, so its traps were not checked",
                    "try one with `clawbench-tasks match`",
                )
            )
        else:
            out += _branch_findings(branch, i, url, hosted[i] or not any(hosted), path)
    if not any(hosted) and all(examples):
        out.append(
            _finding(
                path,
                field,
                "no-host",
                f"{pattern!r} names no host, so it matches that path on any site the agent visits",
                "start the pattern with the host, e.g. shop\\.example\\.com/...",
            )
        )
    return out


def _filter_findings(schema_field: str, values: dict[str, Any], path: Path) -> list[Finding]:
    out: list[Finding] = []
    for key, value in values.items():
        field = f"eval_schema.{schema_field}.{key}"
        if value is None:
            out.append(
                _finding(
                    path,
                    field,
                    "null-filter",
                    "null matches any request that lacks the key (actual.get(key) == None)",
                    "give the value the request must carry",
                )
            )
        elif isinstance(value, str):
            continue
        elif schema_field == "params":
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                continue  # a repeated query key parses to a list of strings
            out.append(
                _finding(
                    path,
                    field,
                    "params-not-string",
                    f"{_short(value)} can never equal a query value (always a string, or a "
                    "list of strings for a repeated key)",
                    f"write it as a string: {_short(_as_sent(value))}"
                    if not isinstance(value, (dict, list))
                    else "use a string",
                )
            )
        elif isinstance(value, (dict, list)):
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                continue  # a repeated form key, or a JSON array of strings
            out.append(
                _finding(
                    path,
                    field,
                    "body-nested",
                    f"{_short(value)} must equal the request's whole value; one extra or "
                    "reordered item breaks the match",
                    "filter on a top-level string key instead",
                )
            )
        else:
            out.append(
                _finding(
                    path,
                    field,
                    "body-not-string",
                    f"{_short(value)} never matches a form, multipart or text body (their values "
                    "are strings), only a JSON body with an equal value (and 1 == true there)",
                    f"use {_short(_as_sent(value))} if the site posts a form",
                )
            )
    return out


def lint_task(task: Task, path: Path) -> list[Finding]:
    """The traps in one loaded task's eval_schema."""
    schema = task.eval_schema
    if schema.is_placeholder:
        why = "empty url_pattern" if not schema.url_pattern else "placeholder url_pattern"
        return [
            _finding(
                path,
                "eval_schema.url_pattern",
                "placeholder",
                f"{why}: log only, never intercepts",
                "write the commit request's pattern",
            )
        ]
    out = _url_findings(schema.url_pattern, path)
    if schema.method == "GET" and not schema.params:
        out.append(
            _finding(
                path,
                "eval_schema.method",
                "get-commit",
                "a GET commit with no params filter: a page view, link prefetch or "
                "reload of that URL is credited as the commit",
                "add a params filter the commit alone carries, or use the POST it sends",
            )
        )
    if schema.body and schema.method == "GET":
        out.append(
            _finding(
                path,
                "eval_schema.body",
                "body-on-get",
                "browsers send no body with GET, so the filter never holds",
                "use params for a GET, or the method that carries the body",
            )
        )
    out += _filter_findings("body", schema.body or {}, path)
    out += _filter_findings("params", schema.params or {}, path)
    return out


def lint_file(path: Path) -> list[Finding]:
    """Lint one task file; every reason it does not load (its regex among them) is one
    `invalid` error."""
    task, problems = load_checked(path)
    if task is None:
        return [_finding(Path(p.path), p.field, "invalid", p.message, p.fix) for p in problems]
    return lint_task(task, path)
