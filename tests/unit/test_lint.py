"""clawbench-tasks lint: each trap found where it is, and nowhere else."""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest

from proxy_addon.tasks import parse_task
from proxy_addon.tasks.cli import main
from proxy_addon.tasks.lint import RULES, lint_file, lint_task
from proxy_addon.tasks.model import PLACEHOLDER
from proxy_addon.tasks.patterns import example_url, top_level_branches, wildcards

TASK = Path("corpus/t/task.json")


def lint(pattern: str, method: str = "POST", **filters: Any) -> list[tuple[str, str, str]]:
    schema = {"url_pattern": pattern, "method": method, **filters}
    task = parse_task({"instruction": "x", "eval_schema": schema, "time_limit": 5})
    return [(f.severity, f.rule, f.field) for f in lint_task(task, TASK)]


URL = "eval_schema.url_pattern"


@pytest.mark.parametrize(
    ("pattern", "method", "filters", "found"),
    [
        # clean patterns
        (r"^https://shop\.test/api/checkout(?:\?|$)", "POST", {}, []),
        (r"shop\.test/api/checkout", "POST", {}, []),
        (r"taskrabbit\.(com|ca)/(api/v\d+/jobs|book/\d+/confirm)", "POST", {}, []),
        (r"a\.com/x|b\.com/y", "POST", {}, []),
        (r"shop\.test/p/[^/?#]+/buy", "POST", {}, []),
        (r"127\.0\.0\.1:7878/api/task-submit", "POST", {}, []),
        (r"news\.test/subscribe\?", "GET", {"params": {"list": "w", "tags": ["a", "b"]}}, []),
        (r"api\.test/graphql", "POST", {"body": {"operationName": "X", "ids": ["1"]}}, []),
        # a top-level | whose branch names no host matches on any site
        (r"a\.com/x|/checkout", "POST", {}, [("error", "any-host-branch", URL)]),
        (r"a\.com/x|api/v\d+/orders", "POST", {}, [("error", "any-host-branch", URL)]),
        # no host at all
        (r"/api/task-submit", "POST", {}, [("warning", "no-host", URL)]),
        # .* / .+ before the query can run into it; after a literal ? it is in the query anyway
        (r"shop\.test.*/checkout", "POST", {}, [("warning", "wildcard-query", URL)]),
        (r"shop\.test/u/.+/save", "POST", {}, [("warning", "wildcard-query", URL)]),
        (r"shop\.test/search\?.*q=mug", "POST", {}, []),
        (r"shop\.test/checkout.*", "POST", {}, []),
        # $ at the end fails once a query string is present
        (r"github\.com/repositories$", "POST", {}, [("warning", "dollar-query", URL)]),
        (r"shop\.test/x/?$", "POST", {}, [("warning", "dollar-query", URL)]),
        (r"shop\.test/x(?:\?|$)", "POST", {}, []),
        (r"^https://shop\.test/x\?a=1$", "POST", {}, []),
        # patterns that only non-canonical URLs satisfy never match what the proxy sees
        (r"Shop\.test/checkout", "POST", {}, [("error", "never-canonical", URL)]),
        (r"https://shop\.test:443/checkout", "POST", {}, [("error", "never-canonical", URL)]),
        (r"shop\.test/a/\./checkout", "POST", {}, [("error", "never-canonical", URL)]),
        (r"(?i)Shop\.test/checkout", "POST", {}, []),
        # ^ without the scheme after it
        (r"^shop\.test/checkout", "POST", {}, [("error", "anchor-start", URL)]),
        (r"^https?://shop\.test/checkout", "POST", {}, []),
        # GET commits
        (r"shop\.test/finalize", "GET", {}, [("warning", "get-commit", "eval_schema.method")]),
        # filter values
        (
            r"api\.resy\.com/3/details",
            "POST",
            {"body": {"commit": 1}},
            [("warning", "body-not-string", "eval_schema.body.commit")],
        ),
        (
            r"shop\.test/x",
            "POST",
            {"body": {"v": {"id": 7}}},
            [("warning", "body-nested", "eval_schema.body.v")],
        ),
        (
            r"shop\.test/x\?",
            "GET",
            {"params": {"page": 2}},
            [("error", "params-not-string", "eval_schema.params.page")],
        ),
        (
            r"shop\.test/x",
            "POST",
            {"body": {"a": None}},
            [("error", "null-filter", "eval_schema.body.a")],
        ),
        (
            r"shop\.test/x\?",
            "GET",
            {"body": {"a": "1"}, "params": {"b": "2"}},
            [("error", "body-on-get", "eval_schema.body")],
        ),
        # log-only tasks
        ("", "POST", {}, [("warning", "placeholder", URL)]),
        (PLACEHOLDER, "GET", {}, [("warning", "placeholder", URL)]),
    ],
)
def test_rules(pattern: str, method: str, filters: dict[str, Any], found: list[Any]) -> None:
    assert lint(pattern, method, **filters) == found


def test_every_rule_has_a_severity_and_a_reason() -> None:
    assert set(RULES) >= {"any-host-branch", "wildcard-query", "dollar-query", "get-commit"}
    for severity, why in RULES.values():
        assert severity in ("error", "warning") and why


def test_messages_say_where_and_why() -> None:
    task = parse_task(
        {
            "instruction": "x",
            "eval_schema": {"url_pattern": r"a\.com/x|/checkout", "method": "POST"},
            "time_limit": 5,
        }
    )
    (finding,) = lint_task(task, TASK)
    assert finding.path == str(TASK)
    assert "alternative 2 '/checkout' names no host" in finding.message
    assert "https://example.test/checkout" in finding.message
    assert finding.fix


@pytest.mark.parametrize(
    ("method", "filters", "fix"),
    [
        # the spelling a form or query string carries: JSON's for booleans, str() for numbers
        ("POST", {"body": {"v": True}}, 'use "true" if the site posts a form'),
        ("POST", {"body": {"v": False}}, 'use "false" if the site posts a form'),
        ("POST", {"body": {"v": 1}}, 'use "1" if the site posts a form'),
        ("POST", {"body": {"v": 2.5}}, 'use "2.5" if the site posts a form'),
        ("GET", {"params": {"v": True}}, 'write it as a string: "true"'),
        ("GET", {"params": {"v": 2}}, 'write it as a string: "2"'),
        ("GET", {"params": {"v": {"a": 1}}}, "use a string"),
    ],
)
def test_filter_value_fixes_use_the_spelling_sent(
    method: str, filters: dict[str, Any], fix: str
) -> None:
    schema = {"url_pattern": r"shop\.test/x\?", "method": method, **filters}
    task = parse_task({"instruction": "x", "eval_schema": schema, "time_limit": 5})
    field = f"eval_schema.{next(iter(filters))}.v"
    (finding,) = [f for f in lint_task(task, TASK) if f.field == field]
    assert finding.fix == fix


def test_lint_file_reports_tasks_that_do_not_load(tmp_path: Path) -> None:
    bad = tmp_path / "task.json"
    bad.write_text(json.dumps({"instruction": "x", "eval_schema": {}, "time_limit": 5}))
    findings = lint_file(bad)
    assert {(f.rule, f.severity) for f in findings} == {("invalid", "error")}
    assert {f.field for f in findings} == {"eval_schema.url_pattern", "eval_schema.method"}
    bad.write_text(
        json.dumps(
            {
                "instruction": "x",
                "eval_schema": {"url_pattern": "a(", "method": "POST"},
                "time_limit": 5,
            }
        )
    )
    (finding,) = lint_file(bad)
    assert finding.rule == "invalid" and "does not compile" in finding.message


@pytest.mark.parametrize(
    ("pattern", "branches"),
    [
        (r"a|b", ["a", "b"]),
        (r"(a|b)c", ["(a|b)c"]),
        (r"[|]x|\|y", ["[|]x", r"\|y"]),
        (r"a\.com/x|/checkout", [r"a\.com/x", "/checkout"]),
        (r"(?:x|(y|z))|w", ["(?:x|(y|z))", "w"]),
    ],
)
def test_top_level_branches(pattern: str, branches: list[str]) -> None:
    assert top_level_branches(pattern) == branches


def test_wildcards_skip_lookarounds_and_classes() -> None:
    found = wildcards(r"^(?=.*x)a\.com[.*]/.+/b\?.*c")
    assert [(w.text, w.after_query) for w in found] == [(".+", False), (".*", True)]


@pytest.mark.parametrize(
    "pattern",
    [
        r"shop\.test/api/v\d+/orders/[0-9a-f-]+",
        r"^https://a\.test/x\?(?:p=1|q=2)(?:&(?:p=1|q=2))*$",
        r"(?:www\.)?shop\.test/(cart|checkout)/?$",
        r"trakt\.tv.*(sync/ratings)",
        r"x{3,5}\.test/[A-Z]{2}",
    ],
)
def test_example_urls_really_match(pattern: str) -> None:
    import re

    url = example_url(pattern)
    assert url is not None and re.search(pattern, url)


def test_reference_corpus_findings(
    reference_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    findings = [f for p in sorted(reference_corpus.glob("*/*/task.json")) for f in lint_file(p)]
    by_rule = collections.Counter(f.rule for f in findings)
    # the reference ships 90 log-only tasks, and no schema that lint calls an error
    assert by_rule["placeholder"] == 90
    assert not [f for f in findings if f.severity == "error"]
    # resy's {"commit": 1}: never matches a form body
    resy = [f for f in findings if "873-daily-life-food-resy" in f.path]
    assert [(f.rule, f.field) for f in resy] == [("body-not-string", "eval_schema.body.commit")]
    # the claw-eval corpus's "/api/task-submit" names no host (19 tasks)
    no_host = {Path(f.path).parent.name for f in findings if f.rule == "no-host"}
    assert len(no_host) == 19 and all(n.startswith("ce-") for n in no_host)
    # GET commits without params, "$" that a query breaks, ".*" that runs into the query
    rules_of = collections.defaultdict(set)
    for f in findings:
        rules_of[Path(f.path).parent.name].add(f.rule)
    assert "get-commit" in rules_of["v2-1033-education-learning-registration-khanacademy"]
    assert "get-commit" not in rules_of["v2-1134-chapter-finder-redcross"]  # it has params
    assert "dollar-query" in rules_of["179-dev-tech-github-ops-github"]
    assert "dollar-query" in rules_of["epa_daily_ozone_archive"]
    assert "wildcard-query" in rules_of["737-home-services-maintenance-kitchen-remodel-lowes"]
    assert "wildcard-query" in rules_of["v2-1097-beauty-personal-care-shopping-theordinary"]
    assert not rules_of["nasa_power_daily_solar_temperature"]
    # the CLI agrees, exits 0 (warnings only) and prints one line per finding plus a summary
    assert main(["lint", str(reference_corpus)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(findings) + 1
    assert (
        lines[-1] == f"lint: 332 task file(s), 0 error(s) in 0 file(s), {len(findings)} warning(s)"
    )
    resy_line = next(line for line in lines if "873-daily-life-food-resy" in line)
    assert resy_line.startswith(f"{reference_corpus}/v1/873-daily-life-food-resy/task.json: ")
    assert (
        ": eval_schema.body.commit: warning[body-not-string]: 1 never matches a form" in resy_line
    )


def test_lint_json_and_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schema = {"url_pattern": r"a\.com/x|/checkout", "method": "GET"}
    task = tmp_path / "t" / "task.json"
    task.parent.mkdir()
    task.write_text(json.dumps({"instruction": "x", "eval_schema": schema, "time_limit": 5}))
    assert main(["lint", "--json", str(tmp_path)]) == 1  # an error: exit 1
    doc = json.loads(capsys.readouterr().out)
    assert (doc["files"], doc["errors"], doc["warnings"]) == (1, 1, 1)
    assert [(f["severity"], f["rule"]) for f in doc["findings"]] == [
        ("error", "any-host-branch"),
        ("warning", "get-commit"),
    ]
    assert doc["findings"][0]["path"] == str(task)
