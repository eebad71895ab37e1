"""The timeline's pure parts (merging sources, grouping requests, its cap) and the HAR builder's
bounds (a cut or hostile line, the file's size cap)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import proxy_addon.records.traffic as traffic
from proxy_addon.records import build_har, write_traffic_har
from proxy_addon.records.har import read_har
from scorer.html_report.timeline import (
    EVENT_CAP,
    TAIL,
    Event,
    EventKind,
    group_requests,
    merge,
)


def ev(kind: EventKind, time: float | None, title: str = "") -> Event:
    return Event(kind, time, title or f"{kind.value}@{time}", lines=[title] if title else [])


def titles(events: list[Event]) -> list[str]:
    return [e.title for e in events]


def test_merge_orders_by_time_and_keeps_untimed_events_after_their_predecessor() -> None:
    agent = [ev(EventKind.STEP, 1.0, "s1"), ev(EventKind.AGENT_TEXT, None, "said"),
             ev(EventKind.STEP, 3.0, "s2")]  # fmt: skip
    traffic_events = [ev(EventKind.BLOCK, 2.0, "b"), ev(EventKind.MODEL_CALL, 0.5, "m")]
    assert titles(merge([agent, traffic_events])) == ["m", "s1", "said", "b", "s2"]
    # a source without any time (an older Claude Code transcript) goes first, in its order
    untimed = [ev(EventKind.TOOL_CALL, None, "t1"), ev(EventKind.TOOL_RESULT, None, "t2")]
    assert titles(merge([untimed, traffic_events])) == ["t1", "t2", "m", "b"]


def test_consecutive_plain_requests_collapse_into_one_event_per_stretch() -> None:
    def req(host: str, t: float) -> Event:
        return Event(EventKind.REQUESTS, t, host, lines=[f"GET https://{host}/{t}"])

    events = [req("a.test", 1), req("a.test", 2), req("b.test", 3),
              ev(EventKind.NEAR_MISS, 4, "n"), req("c.test", 5)]  # fmt: skip
    grouped = group_requests(events)
    assert titles(grouped) == ["3 requests: a.test ×2, b.test", "n", "GET https://c.test/5"]
    assert grouped[0].time == 1 and len(grouped[0].lines) == 3


def test_a_long_run_keeps_its_start_its_end_and_its_block() -> None:
    from proxy_addon.records import Har
    from proxy_addon.records.har import HarLog
    from scorer.html_report.timeline import assemble

    steps = [ev(EventKind.STEP, float(i), f"s{i}") for i in range(EVENT_CAP * 2)]
    steps.insert(EVENT_CAP, ev(EventKind.BLOCK, EVENT_CAP - 0.5, "the block"))
    har = Har(log=HarLog(creator={"name": "x", "version": "1"},
                         _clawbench={"run": "r", "source": "s", "built_at": "t"}))  # fmt: skip
    timeline = assemble(steps, har, [ev(EventKind.END, None, "end")])
    shown = titles(timeline.events)
    assert shown[0] == "s0" and shown[-2] == f"s{EVENT_CAP * 2 - 1}" and shown[-1] == "end"
    # the first EVENT_CAP - TAIL, the block from the middle, the last TAIL
    assert "the block" in shown and timeline.left_out == len(steps) - EVENT_CAP - 1
    gap = next(e for e in timeline.events if e.kind is EventKind.GAP)
    assert str(timeline.left_out) in gap.title
    assert len(timeline.events) == EVENT_CAP + 3  # + the block, the gap, the closing event
    assert shown[-TAIL - 1] == f"s{EVENT_CAP * 2 - TAIL}"


def _line(t: float, url: str = "https://shop.test/", **extra: object) -> bytes:
    line = {"timestamp": t, "url": url, "method": "GET", "headers": {}, "body": None,
            "query_params": {}, "http_version": "HTTP/1.1", "matched": False,
            "blocked": False, "near_miss": None, **extra}  # fmt: skip
    return json.dumps(line).encode() + b"\n"


@pytest.mark.parametrize(
    "bad",
    [b'{"timestamp": 5, "url": "https://cut', b"[1, 2]\n", b"\xff\xfe not json\n",
     b'{"timestamp": "soon", "url": "x"}\n', b'{"timestamp": 1e300, "url": "x"}\n'],
    ids=["cut", "not-an-object", "bad-utf8", "text-timestamp", "far-future"],
)  # fmt: skip
def test_a_line_that_is_no_request_is_counted_not_written(tmp_path: Path, bad: bytes) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "requests.jsonl").write_bytes(_line(2.0) + _line(1.0) + bad)
    log = build_har(tmp_path).log
    assert [e.startedDateTime[:23] for e in log.entries] == [
        "1970-01-01T00:00:01.000",
        "1970-01-01T00:00:02.000",
    ]
    assert log.clawbench.lines == 3 and log.clawbench.lines_unreadable == 1


def test_the_har_stays_under_its_cap_and_says_what_it_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "data").mkdir()
    body = {"note": "x" * 60_000}
    lines = b"".join(_line(float(i), body=body, body_size=60_000) for i in range(40))
    (tmp_path / "data" / "requests.jsonl").write_bytes(lines)
    monkeypatch.setattr(traffic, "HAR_CAP_BYTES", 1 << 20)
    path = write_traffic_har(tmp_path)
    log = read_har(path).log
    assert path.stat().st_size <= 1 << 20
    assert len(log.entries) + log.clawbench.entries_left_out == 40
    assert 10 < len(log.entries) < 20
