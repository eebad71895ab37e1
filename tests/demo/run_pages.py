"""What every demo run's page must show (docs/formats.md, "The run page" and "data/traffic.har"):
the agent's steps and the block in order, in the report and in the terminal timeline; and a
traffic.har a HAR reader opens."""

from __future__ import annotations

import json
from pathlib import Path

from proxy_addon.records import REQUESTS_FILE, ResponseLine, TrafficAction
from proxy_addon.records.har import HAR_FILE, read_har
from proxy_addon.records.requestlog import is_request, read_request_log
from scorer.html_report.runtext import single_run_view, timeline_text
from tests.report.run_markup import kinds, run_section
from tests.support.har_viewers import devtools_import, haralyzer_entries

AGENT_STEPS = ("step", "tool_call", "tool_result", "agent_text")
"""Kinds a harness's own trace gives; a scripted agent's steps are its requests."""
TRAFFIC_STEPS = ("requests", "near_miss", "model_call")


def check_run_page(batch: Path, run: Path, page: str) -> None:
    """The run's page: its steps, then (when intercepted) the block, then how it ended."""
    meta = json.loads((run / "run-meta.json").read_text())
    section = run_section(page, run.relative_to(batch).as_posix())
    order = kinds(section)
    harness_trace = meta["harness"] in ("browser-use", "claude-code")
    step_kinds = AGENT_STEPS if harness_trace else TRAFFIC_STEPS
    steps = [i for i, k in enumerate(order) if k in step_kinds]
    assert steps, (run.name, order)
    end = order.index("end")
    if meta["intercepted"]:
        block = order.index("block")
        assert steps[0] < block < end, (run.name, order)
        assert order.count("block") == 1
    else:
        assert "block" not in order and max(steps) < end
    if meta["harness"] == "browser-use":  # the page after each step, at its step
        assert "data:image/jpeg;base64," in section, run.name
        if meta["intercepted"]:  # the trace ends with the step that sent the commit
            assert "step" not in order[order.index("block") :], order
    text = timeline_text(single_run_view(run))
    blocked = [line for line in text.splitlines() if " BLOCKED " in line]
    assert len(blocked) == (1 if meta["intercepted"] else 0), text


def check_traffic_har(run: Path) -> None:
    """data/traffic.har was written at record time, and opens in haralyzer: one entry per
    request line of requests.jsonl (its answer on it), the credited block marked."""
    har = run / "data" / HAR_FILE
    log = read_har(har).log
    lines = read_request_log(run / "data" / REQUESTS_FILE)
    requests = [line for line in lines if is_request(line)]
    assert len(log.entries) == len(requests) == len(haralyzer_entries(har))
    answered = {line.id for line in lines if isinstance(line, ResponseLine)}
    forwarded = [e for e in log.entries if e.clawbench.action is TrafficAction.FORWARDED]
    assert len(answered) >= len(forwarded)  # the site's answers, as the proxy measured them
    meta = json.loads((run / "run-meta.json").read_text())
    credited = [e for e in log.entries if e.clawbench.credited]
    assert len(credited) == (1 if meta["intercepted"] else 0)
    assert all(e.clawbench.action is TrafficAction.BLOCKED for e in credited)
    calls = sum(e.clawbench.action is TrafficAction.MODEL_CALL for e in log.entries)
    assert calls == (meta.get("agent_usage") or {}).get("calls", 0)


def check_demo_runs(batch: Path, runs: list[Path], chromium: str | None, tmp: Path) -> None:
    """Every run's page and traffic.har; the browser-use run's HAR imported by Chrome DevTools."""
    page = (batch / "report.html").read_text()
    for run in runs:
        check_run_page(batch, run, page)
        check_traffic_har(run)
    if chromium is not None:
        run = next(r for r in runs if r.name.startswith("browser-use-"))
        imported = devtools_import(chromium, tmp / "devtools", run / "data" / HAR_FILE)
        entries = read_har(run / "data" / HAR_FILE).log.entries
        assert [r["url"] for r in imported] == [e.request.url for e in entries]


__all__ = ["check_demo_runs"]
