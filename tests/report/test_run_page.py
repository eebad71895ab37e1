"""The run page: one timeline per run (the agent's steps, its traffic, the block, the verdicts,
its claim), in the report and as text from `clawbench-report RUN_DIR`, with every byte the agent
wrote shown as text; and `clawbench-report --har` for runs recorded before traffic.har."""

from __future__ import annotations

import base64
import html
import json
import shutil
from pathlib import Path

import pytest

from bench.batches import our_run, task_json
from bench.reference_batches import reference_run
from proxy_addon.records import TrafficAction
from proxy_addon.records.har import HAR_FILE, read_har
from scorer.cli import main as score
from scorer.html_report.cli import main
from scorer.html_report.runtext import single_run_view
from tests.report.conftest import (
    HOSTILE_ACTION,
    HOSTILE_GOAL,
    OUR_MODEL,
    TERMINAL_ESCAPE,
    Batches,
    summary,
)
from tests.report.png import encode
from tests.report.run_markup import kinds, run_section
from tests.report.test_report_files import render
from tests.support.har_viewers import haralyzer_entries


def ours(batches: Batches) -> Path:
    """Our real-proxy run: a hostile agent trace, a near miss, the hostile commit (passed)."""
    rows = summary(batches.judged)["tasks"]
    row = next(t for t in rows if t["model"] == OUR_MODEL and t["final_pass"])
    return batches.judged / row["run_dir"]


def test_the_timeline_runs_from_the_steps_through_the_block_to_the_verdict(
    batches: Batches, tmp_path: Path
) -> None:
    render([batches.judged], tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    run = ours(batches)
    order = kinds(run_section(page, run.relative_to(batches.judged).as_posix()))
    # the agent's 4 readable steps (one is bad UTF-8, shown with U+FFFD), then its traffic
    assert order[:4] == ["step"] * 4
    assert order.index("near_miss") < order.index("block") < order.index("end")
    assert order[-3:] == ["end", "verdict", "claim"]
    # every run of the batch has its timeline, ending the same way
    for row in summary(batches.judged)["tasks"]:
        if row["run_dir"]:
            assert "end" in kinds(run_section(page, row["run_dir"]))


def test_hostile_agent_files_are_shown_as_text(batches: Batches, tmp_path: Path) -> None:
    render([batches.judged], tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    section = run_section(page, ours(batches).relative_to(batches.judged).as_posix())
    for hostile in (HOSTILE_GOAL, HOSTILE_ACTION, "<b>boom</b>", "<i>x</i>"):
        assert hostile not in page
    assert html.escape(HOSTILE_GOAL) in section and "<b>boom</b>" not in section
    assert html.escape("<b>boom</b>") in section and "bad \ufffd\ufffd utf-8" in section
    assert section.count("data:image/png;base64,") == 1  # the PNG; never the SVG or /etc/passwd
    assert "screenshot not shown: agent/shots/step-2.svg" in section and "passwd" not in section
    assert "lines are not JSON objects" in section  # the 5 MB line, the list, the cut line
    assert "stopped in flight: stopped by the sandbox" in section


def test_the_terminal_timeline_escapes_what_a_terminal_would_obey(
    batches: Batches, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(ours(batches))]) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "\\x1b]0;pwned-terminal\\x07\\x1b[31mred\\u202eevil" in text
    assert TERMINAL_ESCAPE not in text
    lines = text.splitlines()
    steps = [i for i, line in enumerate(lines) if " step " in line]
    block = next(i for i, line in enumerate(lines) if "BLOCKED" in line)
    verdict = next(i for i, line in enumerate(lines) if " verdict " in line)
    assert steps and max(steps) < block < verdict
    assert "outcome: passed" in text and "judge judge-x (strict): match" in text


def test_har_flag_writes_every_runs_traffic_har_in_both_layouts(
    batches: Batches, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    shutil.copytree(batches.out, out, ignore=shutil.ignore_patterns("*.html"))
    runs = sorted(p.parent for p in out.rglob("run-meta.json"))
    assert main(["--har", str(out)]) == 0
    assert f"traffic.har written for {len(runs)} run(s)" in capsys.readouterr().out
    for run in runs:
        har = read_har(run / "data" / HAR_FILE)
        haralyzer_entries(run / "data" / HAR_FILE)
        intercepted = json.loads((run / "data" / "interception.json").read_text())["intercepted"]
        credited = [e for e in har.log.entries if e.clawbench.credited]
        assert len(credited) == (1 if intercepted else 0), run.name
        if credited:
            assert credited[0].clawbench.action is TrafficAction.BLOCKED


def test_har_flag_marks_the_references_logged_commit(tmp_path: Path) -> None:
    """The reference's requests.jsonl logs the commit like any request (no verdict per line):
    the line interception.json holds is the credited block, its raw cookie redacted."""
    batch = tmp_path / "batch-20260105-120000"
    request = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"q": 1}}
    run = reference_run(batch, "cart-00", task_json("cart-00"), request=request)
    lines = [
        {"timestamp": 1767268799.0, "url": "https://shop.example.com/", "method": "GET",
         "headers": {"Cookie": "sid=raw-cookie-77"}, "body": None, "query_params": {},
         "resource_type": "Document"},
        {"timestamp": 1767268800.4, **request, "headers": {}, "query_params": {},
         "resource_type": "XHR"},
    ]  # fmt: skip
    (run / "data" / "requests.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["--har", str(run)]) == 0
    har = read_har(run / "data" / HAR_FILE)
    page, commit = har.log.entries
    assert page.clawbench.action is TrafficAction.FORWARDED
    assert commit.clawbench.action is TrafficAction.BLOCKED and commit.clawbench.credited
    assert "raw-cookie-77" not in (run / "data" / HAR_FILE).read_text()


def test_har_flag_on_nothing_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["--har", str(tmp_path / "empty")]) == 2
    assert "no runs found" in capsys.readouterr().err


def _claude_code_run(tmp_path: Path) -> Path:
    """A run whose agent is Claude Code: its transcript (a tool call, a result with a PNG, the
    final answer) with arrival times, and the proxy's log (the page, then the blocked commit)."""
    task = task_json("cart-00")
    run = our_run(tmp_path / "batch-20260106-120000", "cart-00", task, harness="claude-code")
    t0 = 1767268800.0
    shot = base64.b64encode(encode(8, 8, (200, 10, 10))).decode()
    events = [
        {"type": "system", "subtype": "init", "tools": ["Bash"]},
        {"type": "assistant", "message": {"id": "m1", "content": [
            {"type": "text", "text": "Opening the shop."},
            {"type": "tool_use", "id": "t1", "name": "mcp__playwright__browser_navigate",
             "input": {"url": "https://shop.example.com/"}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1",
            "content": [{"type": "text", "text": "Page loaded <b>Shop</b>"},
                        {"type": "image", "source": {"type": "base64",
                                                     "media_type": "image/png", "data": shot}},
                        {"type": "image", "source": {"type": "base64",
                                                     "media_type": "image/svg+xml",
                                                     "data": "PHN2Zz4="}}]}]}},
        {"type": "assistant", "message": {"id": "m2", "content": [
            {"type": "tool_use", "id": "t2", "name": "Bash",
             "input": {"command": "curl -d item=mug https://shop.example.com/api/cart"}}]}},
        {"type": "result", "result": "Added it.\nTASK_STATUS: success", "num_turns": 2},
    ]  # fmt: skip
    agent = run / "agent"
    agent.mkdir()
    (agent / "transcript.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    (agent / "transcript-times.txt").write_text("".join(f"{t0 + dt}\n" for dt in (0, 1, 3, 4, 6)))
    log = [
        {"timestamp": t0 + 2, "url": "https://shop.example.com/", "method": "GET",
         "headers": {}, "query_params": {}, "http_version": "HTTP/1.1", "near_miss": None,
         "matched": False, "blocked": False},
        {"timestamp": t0 + 5, "url": "https://shop.example.com/api/cart", "method": "POST",
         "headers": {}, "body": {"item": "mug"}, "query_params": {}, "matched": True,
         "http_version": "HTTP/1.1", "blocked": True, "near_miss": None},
    ]  # fmt: skip
    (run / "data" / "requests.jsonl").write_text("".join(json.dumps(x) + "\n" for x in log))
    return run


def test_claude_codes_tool_calls_fall_among_the_requests_they_caused(tmp_path: Path) -> None:
    view = single_run_view(_claude_code_run(tmp_path))
    assert view.timeline is not None
    seen = [(e.kind.value, e.title) for e in view.timeline.events]
    assert [k for k, _ in seen] == [
        "agent_text", "tool_call", "requests", "tool_result", "tool_call", "block",
        "agent_text", "end",
    ]  # fmt: skip
    assert seen[1][1] == "browser_navigate: https://shop.example.com/"
    assert seen[3][1] == "browser_navigate returned: Page loaded <b>Shop</b>"
    assert seen[6][1] == "final answer: Added it."
    shots = [e.screenshot for e in view.timeline.events if e.screenshot]
    assert len(shots) == 1 and shots[0].data is not None and shots[0].data[:4] == b"\x89PNG"


def test_any_agents_steps_jsonl_is_its_steps_shown_as_text(tmp_path: Path) -> None:
    """An --agent-cmd agent of its own writes agent/steps.jsonl: each line a step at its time,
    with its URL, detail and screenshot, ahead of the commit its request was; what it wrote is
    text on the page, a screenshot outside agent/ is never read, a line that is no JSON said."""
    batch = tmp_path / "batch-20260108-120000"
    run = our_run(batch, "cart-00", task_json("cart-00"), harness="my-agent")
    t0 = 1767268800.0
    agent = run / "agent"
    (agent / "shots").mkdir(parents=True)
    (agent / "shots" / "1.png").write_bytes(encode(4, 4, (9, 8, 7)))
    steps = [
        {"time": t0, "title": "opened the shop", "url": "https://shop.example.com/"},
        {"time": t0 + 1, "title": "added <b>the mug</b>", "detail": "qty 1\n<i>x</i>",
         "screenshot": "shots/1.png"},
        {"time": t0 + 2, "title": "checked out", "screenshot": "../../../../etc/passwd"},
    ]  # fmt: skip
    lines = [json.dumps(x) for x in steps[:2]] + ["not json", json.dumps(steps[2])]
    (agent / "steps.jsonl").write_text("\n".join(lines) + "\n")
    log = {"timestamp": t0 + 3, "url": "https://shop.example.com/api/cart", "method": "POST",
           "headers": {}, "body": {"item": "mug"}, "query_params": {}, "matched": True,
           "http_version": "HTTP/1.1", "blocked": True, "near_miss": None}  # fmt: skip
    (run / "data" / "requests.jsonl").write_text(json.dumps(log) + "\n")
    timeline = single_run_view(run).timeline
    assert timeline is not None
    seen = [(e.kind.value, e.title) for e in timeline.events]
    assert seen[:3] == [
        ("step", "opened the shop"),
        ("step", "added <b>the mug</b>"),
        ("step", "checked out"),
    ]
    assert seen[3][0] == "block" and seen[3][1].endswith(": POST https://shop.example.com/api/cart")
    assert timeline.events[0].detail == "at https://shop.example.com/"
    assert timeline.events[1].detail == "qty 1\n<i>x</i>"
    (shot,) = [e.screenshot for e in timeline.events if e.screenshot]
    assert shot.name == "agent/shots/1.png" and timeline.events[1].screenshot is shot
    assert score([str(batch), "--no-judge"]) == 0
    render([batch], tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    section = run_section(page, run.relative_to(batch).as_posix())
    assert html.escape("added <b>the mug</b>") in section and "<b>the mug</b>" not in section
    assert "<i>x</i>" not in section and "passwd" not in section
    assert section.count("data:image/png;base64,") == 1
    assert "agent/steps.jsonl" in section  # the line that is no JSON object, said


def test_the_references_recorded_actions_and_screenshots_are_its_steps(tmp_path: Path) -> None:
    """The reference's data/actions.jsonl (its browser's DOM events, ms timestamps) and the
    screenshot it took for an action (data/screenshots/<ms>.png): typing on one field is one
    step, the screenshot is at its action, the commit its requests.jsonl logged is the block."""
    batch = tmp_path / "batch-20260107-120000"
    request = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"q": 1}}
    run = reference_run(batch, "cart-00", task_json("cart-00"), request=request)
    t0 = 1767268800_000
    field = {"tagName": "INPUT", "id": "qty", "xpath": "/html[1]/body[1]/input[1]"}
    actions = [
        {"type": "pageLoad", "timestamp": t0, "url": "https://shop.example.com/", "title": "Shop"},
        {"type": "click", "timestamp": t0 + 1000, "url": "https://shop.example.com/",
         "target": {"tagName": "BUTTON", "id": "add", "textContent": "Add <b>to</b> cart"}},
        {"type": "keydown", "timestamp": t0 + 2000, "url": "https://shop.example.com/",
         "target": field, "key": "1"},
        {"type": "input", "timestamp": t0 + 2100, "url": "https://shop.example.com/",
         "target": field, "value": "1"},
        {"type": "input", "timestamp": t0 + 2200, "url": "https://shop.example.com/",
         "target": field, "value": "12"},
    ]  # fmt: skip
    data = run / "data"
    (data / "actions.jsonl").write_text("".join(json.dumps(a) + "\n" for a in actions))
    (data / "screenshots").mkdir()
    (data / "screenshots" / f"{t0 + 1000}.png").write_bytes(encode(4, 4, (1, 2, 3)))
    log = {"timestamp": (t0 + 3000) / 1000, **request, "headers": {}, "query_params": {},
           "resource_type": "XHR"}  # fmt: skip
    (data / "requests.jsonl").write_text(json.dumps(log) + "\n")
    timeline = single_run_view(run).timeline
    assert timeline is not None
    seen = [(e.kind.value, e.title) for e in timeline.events]
    assert seen[:4] == [
        ("step", "page loaded: Shop"),
        ("step", "click button#add “Add <b>to</b> cart”"),
        ("step", "typed into input#qty: 12"),
        ("block", "the commit, blocked: POST https://shop.example.com/api/cart"),
    ]
    (shot,) = [e.screenshot for e in timeline.events if e.screenshot]
    assert shot.name == f"data/screenshots/{t0 + 1000}.png" and seen[1][0] == "step"
    assert timeline.events[1].screenshot is shot
