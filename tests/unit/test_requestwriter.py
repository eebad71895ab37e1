"""requests.jsonl's writer under its byte budget: full lines, then short ones, then a count."""

from __future__ import annotations

from pathlib import Path

from proxy_addon.records import (
    REQUESTS_FILE,
    REQUESTS_SUMMARY_FILE,
    RequestLogEntry,
    RequestLogWriter,
    ResponseLine,
    read_requests_summary,
)
from proxy_addon.records.requestlog import RequestLog, ShortLine, Verdict, read_request_log

BUDGET = 8000


def _entry(n: int) -> RequestLogEntry:
    return RequestLogEntry(
        timestamp=float(n),
        id=f"flow-{n}",
        url=f"https://shop.test/items/{n}?q={'x' * 300}",
        method="POST",
        headers={"X-Filler": "y" * 200},
        http_version="HTTP/1.1",
        body_size=300,
    )


def _answer(n: int) -> ResponseLine:
    return ResponseLine(timestamp=n + 0.5, id=f"flow-{n}", status=200, response_size=10)


def test_the_log_never_outgrows_its_budget_and_says_what_it_left_out(tmp_path: Path) -> None:
    writer = RequestLogWriter()
    writer.open(tmp_path, BUDGET)
    for n in range(200):
        writer.append(_entry(n))
        writer.append(_answer(n))
    writer.close()
    path = tmp_path / REQUESTS_FILE
    assert path.stat().st_size <= BUDGET
    lines = read_request_log(path)
    full = [line for line in lines if isinstance(line, RequestLogEntry)]
    short = [line for line in lines if isinstance(line, ShortLine)]
    assert full and short and full[-1].timestamp < short[0].timestamp  # full, then short
    assert sum(len(line.model_dump_json()) + 1 for line in full) <= BUDGET * 3 // 4
    assert short[0].model_dump(exclude_none=True) == {
        "timestamp": short[0].timestamp,
        "short": True,
        "id": short[0].id,
        "method": "POST",
        "url": f"https://shop.test/items/{int(short[0].timestamp)}",
        "verdict": Verdict.PASSED,
        "request_size": 300,
    }
    summary = read_requests_summary(tmp_path / REQUESTS_SUMMARY_FILE)
    assert summary is not None and summary.budget_reached
    assert summary.bytes_written == path.stat().st_size
    assert summary.lines_shortened == 200 - len(full)
    logged = len(full) + len(short)
    assert summary.requests_not_logged == 200 - logged > 0
    answers = sum(isinstance(line, ResponseLine) for line in lines)
    assert summary.responses_not_logged == 200 - answers


def test_a_reopened_log_goes_on_counting_within_the_same_budget(tmp_path: Path) -> None:
    writer = RequestLogWriter()
    writer.open(tmp_path, BUDGET)
    for n in range(10):
        writer.append(_entry(n))
    writer.close()
    before = (tmp_path / REQUESTS_FILE).stat().st_size
    again = RequestLogWriter()  # a proxy restarted on the same data dir
    again.open(tmp_path, BUDGET)
    for n in range(10, 100):
        again.append(_entry(n))
    again.close()
    assert before < (tmp_path / REQUESTS_FILE).stat().st_size <= BUDGET
    summary = read_requests_summary(tmp_path / REQUESTS_SUMMARY_FILE)
    assert summary is not None and summary.requests_not_logged > 0
    log = RequestLog(tmp_path / REQUESTS_FILE)
    assert len(list(log)) + summary.requests_not_logged == 100 and log.unread == 0


def test_a_log_under_its_budget_is_all_full_lines(tmp_path: Path) -> None:
    writer = RequestLogWriter()
    writer.open(tmp_path)
    writer.append(_entry(1))
    writer.close()
    assert read_request_log(tmp_path / REQUESTS_FILE) == [_entry(1)]
    summary = read_requests_summary(tmp_path / REQUESTS_SUMMARY_FILE)
    assert summary is not None and not summary.budget_reached


def test_traffic_har_has_an_entry_for_every_logged_request_short_ones_too(tmp_path: Path) -> None:
    from proxy_addon.records import build_har
    from proxy_addon.records.harentry import SHORT_NOTE

    data = tmp_path / "run" / "data"
    data.mkdir(parents=True)
    writer = RequestLogWriter()
    writer.open(data, BUDGET)
    for n in range(12):  # all of them, their answers too, within the budget
        writer.append(_entry(n))
        writer.append(_answer(n))
    writer.close()
    lines = read_request_log(data / REQUESTS_FILE)
    requests = [line for line in lines if not isinstance(line, ResponseLine)]
    entries = build_har(tmp_path / "run").log.entries
    assert [e.request.url.partition("?")[0] for e in entries] == [
        line.url.partition("?")[0] for line in requests
    ]
    short = [e for e in entries if e.request.comment == SHORT_NOTE]
    assert short and all(e.response.status == 200 and e.response.bodySize == 10 for e in entries)
