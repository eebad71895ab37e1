"""Bodies a real client may send that are odd but not wrong, through a real mitmdump + addon:
each is matched as the reference would, blocked or forwarded, and written as strict JSON."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from proxy_addon.matching import RAW_TEXT_CAP
from proxy_addon.records import Interception, LogLine
from proxy_addon.records.requestlog import is_request, parse_line
from tests.proxy.conftest import SHOP, Run, write_task

POST = r"shop\.clawbench\.test/api/post"
JSON = ["-H", "Content-Type: application/json"]


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_log(run: Run) -> list[LogLine]:
    """requests.jsonl's request lines read as strict JSON (no NaN/Infinity), each as its model."""
    lines = [parse_line(json.loads(x, parse_constant=_refuse)) for x in run.raw_log().splitlines()]
    return [line for line in lines if is_request(line)]


def strict_interception(run: Run) -> Interception:
    raw = (run.data / "interception.json").read_bytes()
    return Interception.model_validate(json.loads(raw, parse_constant=_refuse))


def _file(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return f"@{path}"


def test_lone_surrogates_and_nan_are_blocked_recorded_and_forwarded(launch, tmp_path) -> None:
    """JSON.stringify of a string cut mid-emoji sends "\\ud83d"; JSON.stringify never sends NaN,
    but Python's json (and so the reference) reads it. Neither may stop a write."""
    run = launch(write_task(tmp_path / "task", POST, body={"visibility": "public"}))
    near = b'{"text": "x", "visibility": "private \\ud83d", "n": NaN}'
    other = b'{"text": "x \\ud83d", "visibility": "public", "n": Infinity}'
    commit = b'{"text": "Great trip! \\ud83d", "visibility": "public", "n": NaN}'
    forwarded = [
        run.curl(*JSON, "--data-binary", _file(tmp_path, "near", near), f"https://{SHOP}/api/post"),
        run.curl(*JSON, "--data-binary", _file(tmp_path, "o", other), f"https://{SHOP}/api/else"),
    ]
    assert [r.status for r in forwarded] == ["200", "200"]
    blocked = run.curl(
        *JSON, "--data-binary", _file(tmp_path, "c", commit), f"https://{SHOP}/api/post"
    )
    assert blocked.code != 0 and blocked.status == "000"
    assert [r.body for r in run.upstream.requests] == [near, other]
    assert (run.data / ".stop-requested").exists()

    rec = strict_interception(run)
    assert rec.request.body == {"text": "Great trip! \ud83d", "visibility": "public", "n": "NaN"}
    log = strict_log(run)
    assert [e.matched for e in log] == [False, False, True]
    assert log[0].near_miss == ['body: key \'visibility\' expected "public", got "private \\ud83d"']
    assert log[1].body == {"text": "x \ud83d", "visibility": "public", "n": "Infinity"}
    assert log[2].body == rec.request.body


FORM = ["-H", "Content-Type: application/x-www-form-urlencoded; charset=windows-1252"]
ORDER = r"shop\.clawbench\.test/api/order"


def test_a_form_that_is_not_utf8_meets_its_filter_and_its_redaction(launch, tmp_path) -> None:
    """One windows-1252 byte used to make the whole form base64: the commit reached the live
    site and a password went to disk (base64 is no redaction)."""
    run = launch(write_task(tmp_path / "task", ORDER, body={"action": "submit"}))
    near = _file(tmp_path, "near", b"action=preview&password=Hunter2Secret&city=M\xfcnchen")
    commit = _file(tmp_path, "commit", b"action=submit&password=Hunter2Secret&note=caf\xe9")
    assert run.curl(*FORM, "--data-binary", near, f"https://{SHOP}/api/order").status == "200"
    blocked = run.curl(*FORM, "--data-binary", commit, f"https://{SHOP}/api/order")
    assert blocked.code != 0 and blocked.status == "000"
    assert [r.body[:14] for r in run.upstream.requests] == [b"action=preview"]

    rec = strict_interception(run)
    assert rec.request.body == {"action": "submit", "password": "[REDACTED]", "note": "caf\ufffd"}
    log = strict_log(run)
    assert [e.matched for e in log] == [False, True]
    assert log[0].body == {"action": "preview", "password": "[REDACTED]", "city": "M\ufffdnchen"}
    assert log[0].near_miss == ['body: key \'action\' expected "submit", got "preview"']
    for path in run.data.iterdir():
        assert b"Hunter2Secret" not in path.read_bytes()
        assert b"SHVudGVyMlNlY3JldA" not in path.read_bytes()  # nor in base64


def test_json_with_an_integer_python_cannot_read_fails_closed(launch, tmp_path) -> None:
    """json.loads refuses integers of > 4300 digits; such a body used to be form-parsed, miss
    the filter and be forwarded. The body cannot be checked, so it is blocked, unverified."""
    run = launch(write_task(tmp_path / "task", ORDER, body={"action": "add"}))
    body = _file(tmp_path, "big", b'{"action": "add", "trace": ' + b"1" * 5000 + b"}")
    blocked = run.curl(*JSON, "--data-binary", body, f"https://{SHOP}/api/order")
    assert blocked.code != 0 and blocked.status == "000"
    assert run.upstream.requests == []
    rec = strict_interception(run)
    assert rec.request.body_unverified and rec.request.body is None
    (entry,) = strict_log(run)
    assert entry.blocked and isinstance(entry.body, str) and "4300 digits" in entry.body


APPLY = r"shop\.clawbench\.test/api/apply"


def test_a_commit_over_the_log_parse_limit_is_recorded_with_its_body(launch, tmp_path) -> None:
    """No body filter, a 1.2 MB upload: the body was parsed only when a filter needed it, so
    interception.json said "body": null for the very request the judge must see."""
    run = launch(write_task(tmp_path / "task", APPLY))
    resume = tmp_path / "resume.pdf"
    resume.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 4800)  # 1.2 MB
    blocked = run.curl("-F", "name=Alex Green", "-F", "position=Senior Engineer",
                       "-F", f"resume=@{resume};type=application/pdf",
                       f"https://{SHOP}/api/apply")  # fmt: skip
    assert blocked.code != 0 and run.upstream.requests == []
    rec = strict_interception(run)
    assert rec.request.body_size > 1024 * 1024 and not rec.request.body_unverified
    assert rec.request.body["name"] == "Alex Green"
    assert rec.request.body["resume"]["size"] == resume.stat().st_size
    (entry,) = strict_log(run)
    assert entry.body == rec.request.body  # small once parsed; the log's cap still applies


def test_a_compressed_body_is_capped_in_the_log_by_its_decoded_size(launch, tmp_path) -> None:
    """The cap was checked only for bodies over 8 KB on the wire: 2 KB of gzip decoding to
    megabytes went into requests.jsonl whole."""
    run = launch(write_task(tmp_path / "task", APPLY))
    gz = ["-H", "Content-Encoding: gzip", *JSON]
    half = _file(tmp_path, "half", gzip.compress(json.dumps({"c": "A" * 500_000}).encode()))
    large = _file(tmp_path, "large", gzip.compress(json.dumps({"c": "A" * 2_000_000}).encode()))
    for body in (half, large):
        assert run.curl(*gz, "--data-binary", body, f"https://{SHOP}/api/other").status == "200"
    first, second = strict_log(run)
    assert isinstance(first.body, str) and len(first.body) < RAW_TEXT_CAP + 100
    assert first.body.endswith("[truncated, 500009 characters in all]")
    # every body is decoded alike, whatever its URL (docs/security.md, the proxy's rule 6): the
    # log's cap is what bounds it
    assert isinstance(second.body, str) and len(second.body) < RAW_TEXT_CAP + 100
    assert second.body.endswith("[truncated, 2000009 characters in all]")
    assert len(run.raw_log()) < 2 * (RAW_TEXT_CAP + 2000)  # two capped lines


CHECKOUT = r"^https://shop\.clawbench\.test/api/checkout$"


def test_paths_and_bodies_a_server_reads_as_the_commit_are_blocked(launch, tmp_path) -> None:
    """A script's //api/checkout (nginx and http.server merge slashes), /api/%63heckout (the
    server decodes it), and a JSON body behind a BOM or in UTF-16 (json.loads(bytes) reads
    both, as Flask's get_json does) reach the checkout handler: each is the commit."""
    run = launch(write_task(tmp_path / "task", CHECKOUT, body={"item": "lamp"}))
    order = '{"item": "lamp", "qty": 2}'
    sent = [
        ("//api/checkout", order.encode()),
        ("/api/%63heckout", order.encode()),
        ("/api//checkout", order.encode()),
        ("/api/checkout", b"\xef\xbb\xbf" + order.encode()),
        ("/api/checkout", order.encode("utf-16")),
    ]
    for i, (path, body) in enumerate(sent):
        got = run.curl(
            *JSON, "--data-binary", _file(tmp_path, f"b{i}", body), f"https://{SHOP}{path}"
        )
        assert got.status == "000", (path, body)
    near = run.curl(*JSON, "--data-binary", '{"item": "mug"}', f"https://{SHOP}//api/checkout")
    assert near.status == "200"  # the filter still decides
    assert [r.body for r in run.upstream.requests] == [b'{"item": "mug"}']
    assert strict_interception(run).request.url == f"https://{SHOP}//api/checkout"  # as sent
    log = strict_log(run)
    assert [e.matched for e in log] == [True] * 5 + [False]
    assert [e.body for e in log[:5]] == [{"item": "lamp", "qty": 2}] * 5
