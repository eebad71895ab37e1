"""What the addon writes per request: valid text and strict JSON whatever the body held."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proxy_addon.addon.requestlog import (
    interception_record,
    log_body,
    log_line,
    printable,
    see_request,
)
from proxy_addon.matching import MatchResult, parse_body
from proxy_addon.records import (
    REQUESTS_FILE,
    ModelCallLine,
    RecordError,
    RequestLogEntry,
    RequestLogWriter,
)
from proxy_addon.records.requestlog import RequestLog, dump_line, parse_line, read_request_log


def _strict_loads(raw: bytes | str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(raw, parse_constant=refuse)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain", "plain"),
        ("café", "café"),
        ("caf\udce9", "caf\\xe9"),  # a byte that was not UTF-8, surrogate-escaped by mitmproxy
        ("\udcc3\udca9", "é"),  # escaped bytes that together are UTF-8
        ("trip \ud83d", "trip \\ud83d"),  # a JSON body's lone surrogate, quoted in a reason
        ("a\udcff\ud800b", "a\\xff\\ud800b"),
    ],
)
def test_printable_is_always_utf8(text: str, shown: str) -> None:
    assert printable(text) == shown
    shown.encode("utf-8")


_BODY = b'{"text": "trip \\ud83d", "n": NaN, "big": 1e999, "password": "hunter2"}'


def test_a_log_line_is_strict_json_for_lone_surrogates_and_nan() -> None:
    seen = see_request("https://shop.test/post", "POST", [], "HTTP/1.1", len(_BODY))
    parsed = parse_body(_BODY, "application/json")
    reason = "body: key 't' expected 1, got \"\ud83d\""  # the matcher quotes what was sent
    line = log_line(
        seen,
        log_body(parsed, len(_BODY)),
        MatchResult(False, (reason,), True, True),
        [printable(reason)],
        timestamp=1.0,
        mode="regular",
    )
    entry = parse_line(_strict_loads(dump_line(line)))
    assert entry.body == {
        "text": "trip \ud83d",
        "n": "NaN",
        "big": "Infinity",
        "password": "[REDACTED]",
    }
    assert entry.near_miss == ["body: key 't' expected 1, got \"\\ud83d\""]


def test_the_interception_record_writes_nan_as_the_log_does() -> None:
    seen = see_request("https://shop.test/post", "POST", [], "HTTP/1.1", len(_BODY))
    parsed = parse_body(_BODY, "application/json")
    record = interception_record(seen, parsed.value, MatchResult(True), {})
    body = record.model_dump(mode="json", by_alias=True)["request"]["body"]
    assert body["n"] == "NaN" and body["big"] == "Infinity"


def test_a_huge_header_cannot_make_a_huge_log_line() -> None:
    from proxy_addon.addon.caps import HEADER_VALUE_CAP, HEADERS_CAP

    fields = [(b"X-Big", b"a" * (4 << 20))] + [(f"X-{i}".encode(), b"v") for i in range(200)]
    seen = see_request("https://shop.example/api", "POST", fields, "HTTP/1.1", 0)
    assert len(seen.headers["X-Big"]) < HEADER_VALUE_CAP + 100
    assert seen.headers["X-Big"].endswith(f"[truncated, {4 << 20} characters in all]")
    assert len(seen.headers) == HEADERS_CAP + 1
    assert seen.headers["[clawbench]"] == f"{201 - HEADERS_CAP} more header fields not recorded"
    small = see_request("https://shop.example/api", "POST", [(b"A", b"1")], "HTTP/1.1", 0)
    assert small.headers == {"A": "1"}


def _entry(url: str = "https://shop.test/a", **fields: Any) -> RequestLogEntry:
    return RequestLogEntry(
        timestamp=1.0, url=url, method="GET", headers={}, http_version="1.1", **fields
    )


def test_the_writer_and_the_reader_agree_on_every_line_shape(tmp_path: Path) -> None:
    writer = RequestLogWriter()
    with pytest.raises(OSError, match="not open"):
        writer.append(_entry())  # a line that cannot be written raises, never vanishes
    writer.open(tmp_path)
    call = ModelCallLine(
        timestamp=2.0, url="https://m.test/v1", host="m.test", path="/v1", method="POST",
        status=200, request_size=1, response_size=2, duration_s=0.1, first_byte_s=0.05,
        streamed=False, model="m", usage=None,
    )  # fmt: skip
    lines = [_entry(), call, _entry(refused="it names no host", body={"t": "\ud83d"})]
    for line in lines:
        writer.append(line)
    writer.close()
    raw = (tmp_path / REQUESTS_FILE).read_bytes().splitlines()
    assert b"refused" not in raw[0] and b'"refused":"it names no host"' in raw[2]  # only when set
    assert read_request_log(tmp_path / REQUESTS_FILE) == lines


def test_the_reader_skips_and_counts_lines_that_are_not_ours(tmp_path: Path) -> None:
    path = tmp_path / REQUESTS_FILE
    reference = {"timestamp": 1.0, "url": "https://a.test/", "method": "GET", "headers": {},
                 "body": None, "query_params": {}, "resource_type": "Document"}  # fmt: skip
    path.write_bytes(dump_line(_entry()) + json.dumps(reference).encode() + b'\n{"url": "cu')
    log = RequestLog(path)
    assert list(log) == [_entry()]
    assert log.unread == 2 and "line 2" in log.problems[0] and "line 3" in log.problems[1]
    with pytest.raises(RecordError, match=f"{REQUESTS_FILE}: line 2: http_version"):
        read_request_log(path)
    assert read_request_log(tmp_path / "none.jsonl") == []


def test_a_huge_url_and_query_cannot_make_a_huge_log_line() -> None:
    from proxy_addon.addon.caps import HEADER_VALUE_CAP, HEADERS_CAP, URL_CAP

    query = "&".join(f"f{i}={'v' * 10}" for i in range(5000)) + f"&long={'w' * 60_000}&r=1&r=2"
    url = f"https://shop.example/api?{query}"
    seen = see_request(url, "GET", [], "HTTP/1.1", 0)
    assert len(seen.query) == 5002  # the matcher's view stays whole
    reason = f"url: {url!r} does not match"
    line = log_line(
        seen, None, MatchResult(False, (reason,), True), [reason], timestamp=1.0, mode=None
    )
    assert len(line.url) < URL_CAP + 100 and line.url.endswith(f"{len(url)} characters in all]")
    assert len(line.query_params) == HEADERS_CAP + 1
    assert (
        line.query_params["[clawbench]"] == f"{5002 - HEADERS_CAP} more query fields not recorded"
    )
    assert line.near_miss is not None and len(line.near_miss[0]) < HEADER_VALUE_CAP + 100
    assert len(dump_line(line)) < 16_000
    few = see_request("https://shop.example/api?r=1&r=2&long=" + "w" * 5000, "GET", [], "1.1", 0)
    kept = log_line(few, None, MatchResult(False), None, timestamp=1.0, mode=None).query_params
    assert kept["r"] == ["1", "2"] and len(kept["long"]) < HEADER_VALUE_CAP + 100
