"""Our own corpus, test-cases/clawbench-demo: clean, complete, and its documented requests decide
as documented (correct and wrong payloads intercepted, the variants not)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proxy_addon.matching import HttpRequest, Matcher, MatchResult, canonical_url, parse_body
from proxy_addon.tasks import Task, load_task
from proxy_addon.tasks.cli import main
from proxy_addon.tasks.model import METHODS

CORPUS = Path(__file__).resolve().parents[2] / "test-cases" / "clawbench-demo"
DOC: dict[str, Any] = json.loads((CORPUS / "requests.json").read_text())["tasks"]
README = (CORPUS.parent / "README.md").read_text()
SLUGS = sorted(p.parent.name for p in CORPUS.glob("*/task.json"))
BOUNDARY = "----ClawbenchDemoBoundary1a2b3c"


def _multipart(task_dir: Path, spec: dict[str, Any]) -> bytes:
    out = b""
    for name, value in spec["fields"].items():
        out += f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
        out += value.encode() + b"\r\n"
    for name, f in spec["files"].items():
        content = (task_dir / f["from"]).read_bytes() if f["from"] else b""
        disp = f'form-data; name="{name}"; filename="{f["filename"]}"'
        out += f"--{BOUNDARY}\r\nContent-Disposition: {disp}\r\n".encode()
        out += f"Content-Type: {f['content_type']}\r\n\r\n".encode() + content + b"\r\n"
    return out + f"--{BOUNDARY}--\r\n".encode()


def decide(slug: str, req: dict[str, Any], method: str | None = None) -> MatchResult:
    """The documented request as raw bytes, through the proxy's own parsing and matcher."""
    ctype = req.get("content_type")
    if "multipart" in req:
        raw: bytes | None = _multipart(CORPUS / slug, req["multipart"])
        ctype = f"{ctype}; boundary={BOUNDARY}"
    else:
        raw = req["body"].encode() if req.get("body") is not None else None
    parsed = parse_body(raw, ctype)
    assert parsed.error is None
    task = load_task(CORPUS / slug)
    url = canonical_url(req["url"])
    assert url == req["url"], "document canonical URLs, as a browser sends them"
    return Matcher(task.eval_schema).match(
        HttpRequest(method or req["method"], url, parsed.value, parsed.error)
    )


def test_corpus_shape() -> None:
    assert len(SLUGS) >= 10
    assert set(SLUGS) == set(DOC)
    tasks = {slug: load_task(CORPUS / slug) for slug in SLUGS}
    hosts = {slug: DOC[slug]["host"] for slug in SLUGS}
    assert sum(h.endswith(".clawbench.test") for h in hosts.values()) >= 8
    methods = {t.eval_schema.method for t in tasks.values()}
    assert {"GET", "POST", "PUT", "PATCH", "DELETE"} <= methods
    assert any(t.time_limit == 1 for t in tasks.values())
    claw = [t for t in tasks.values() if t.metadata and t.metadata.metaclass == "claw-eval"]
    assert len(claw) == 1
    assert claw[0].eval_schema.url_pattern == r"127\.0\.0\.1:7878/api/task-submit"
    assert claw[0].eval_schema.method == "POST"
    assert "http://127.0.0.1:7878/submit" in claw[0].instruction
    assert claw[0].judge_context and claw[0].judge_context.rubric
    assert claw[0].judge_context.reference_solution
    kinds = {json.dumps(DOC[s]["correct"].get("content_type")) for s in SLUGS}
    assert {'"application/json"', '"application/x-www-form-urlencoded"'} <= kinds
    assert any(
        "multipart" in DOC[s]["correct"] and DOC[s]["correct"]["multipart"]["files"] for s in SLUGS
    )
    assert any(t.eval_schema.body for t in tasks.values())
    assert any(t.eval_schema.params and t.eval_schema.method == "GET" for t in tasks.values())


@pytest.mark.parametrize("slug", SLUGS)
def test_task_metadata_is_complete(slug: str) -> None:
    task: Task = load_task(CORPUS / slug)
    assert task.metadata is not None
    assert task.metadata.task_id >= 990001
    assert task.metadata.sites_involved and task.metadata.description
    assert task.judge_context is not None and task.judge_context.rubric
    assert slug[:3].isdigit() and slug[3] == "-"
    for item in task.extra_info:
        assert (CORPUS / slug / item.path).is_file()


def test_validate_and_lint_are_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(CORPUS.parent)]) == 0
    assert main(["lint", str(CORPUS.parent)]) == 0
    lines = capsys.readouterr().out.splitlines()
    n = len(SLUGS)
    assert lines == [  # no finding lines at all, only the two summaries
        f"validate: {n} task file(s), 0 error(s) in 0 file(s), 0 warning(s)",
        f"lint: {n} task file(s), 0 error(s) in 0 file(s), 0 warning(s)",
    ]


@pytest.mark.parametrize("slug", SLUGS)
def test_correct_request_matches(slug: str) -> None:
    result = decide(slug, DOC[slug]["correct"])
    assert result.match, result.reasons
    for extra in DOC[slug].get("also_match", []):
        assert decide(slug, extra).match, extra["why"]


@pytest.mark.parametrize("slug", SLUGS)
def test_wrong_payload_is_intercepted_for_the_judge(slug: str) -> None:
    # The demo shows a judge mismatch with it, so Stage 1 must still intercept it.
    result = decide(slug, DOC[slug]["wrong"])
    assert result.match, result.reasons
    assert DOC[slug]["wrong"]["why"]


@pytest.mark.parametrize("slug", SLUGS)
def test_variants_do_not_match(slug: str) -> None:
    doc = DOC[slug]
    want = doc["correct"]["method"]
    for other in METHODS:
        if other != want:
            result = decide(slug, doc["correct"], method=other)
            assert not result.match
            assert result.reasons[0] == f"method: expected {want}, got {other}"
    assert doc["no_match"], "document at least one request that must pass through"
    for variant in doc["no_match"]:
        result = decide(slug, variant)
        assert not result.match, variant["why"]


@pytest.mark.parametrize("slug", SLUGS)
def test_filter_variants_do_not_match(slug: str) -> None:
    # Each filter key, changed by one character or dropped, breaks the match; derived from the
    # correct request so that every filter of the corpus is covered, not just documented ones.
    task = load_task(CORPUS / slug)
    correct = DOC[slug]["correct"]
    for key in task.eval_schema.params or {}:
        url = correct["url"]
        value = task.eval_schema.params[key]  # type: ignore[index]
        pair = f"{key}={value}"
        assert pair in url
        for changed in (
            url.replace(pair, f"{pair[:-1]}{chr(ord(pair[-1]) + 1)}"),
            url.replace(pair, ""),
        ):
            assert not decide(
                slug, {**correct, "url": changed.replace("?&", "?").rstrip("&")}
            ).match
    for key, value in (task.eval_schema.body or {}).items():
        off_value = value[:-1] + chr(ord(value[-1]) + 1)
        if "multipart" in correct:
            spec = correct["multipart"]
            off = {**correct, "multipart": {**spec, "fields": {**spec["fields"], key: off_value}}}
            fields = {k: v for k, v in spec["fields"].items() if k != key}
            gone = {**correct, "multipart": {**spec, "fields": fields}}
        else:
            body = json.loads(correct["body"])
            off = {**correct, "body": json.dumps({**body, key: off_value})}
            gone = {**correct, "body": json.dumps({k: v for k, v in body.items() if k != key})}
        assert not decide(slug, off).match
        result = decide(slug, gone)
        assert result.reasons == (f"body: key {key!r} missing (expected {json.dumps(value)})",)


@pytest.mark.parametrize("slug", SLUGS)
def test_readme_documents_the_task(slug: str) -> None:
    doc = DOC[slug]
    section = README.split(f"### {slug}", 1)[1].split("\n### ", 1)[0]
    assert f"`{doc['host']}`" in section
    assert f"`{doc['start']}`" in section
    for req in (doc["correct"], doc["wrong"]):
        assert f"{req['method']} {req['url']}" in section
        if req.get("body"):
            assert req["body"] in section
    assert doc["wrong"]["why"] in section
