"""How each logged request was answered (data/traffic.har's responses need it: docs/formats.md,
"data/traffic.har"): the site's status, size and the durations the proxy saw, the proxy's own
block response for the commit, or why there was no answer; each line names the request's id.
Through a real mitmdump and curl."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from proxy_addon.records import RequestLogEntry, ResponseLine
from tests.proxy.conftest import SHOP, Run, write_task

CHECKOUT = r"shop\.clawbench\.test/api/checkout"


def _answers(run: Run, count: int) -> dict[str, ResponseLine]:
    """The answer lines by request id, once there are count of them (a client has its answer
    a moment before the proxy's hook writes the line)."""
    deadline = time.monotonic() + 5
    while len(answers := run.answers()) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return {a.id: a for a in answers}


def test_every_logged_request_has_its_answer(launch: Any, tmp_path: Path, curl: str) -> None:
    run = launch(write_task(tmp_path / "task", CHECKOUT), clawbench_block_mode="respond")
    page = run.curl(f"http://{SHOP}/products?page=2")
    blocked = run.curl("-d", "item=mug", f"http://{SHOP}/api/checkout")
    private = run.curl("http://127.0.0.1:9/")  # refused: a private destination
    assert (page.status, blocked.status) == ("200", "403") and private.code != 0
    requests = [e for e in run.log() if isinstance(e, RequestLogEntry)]
    assert len(requests) == 3 and all(e.id for e in requests)
    answers = _answers(run, 3)
    forwarded, commit, refused = (answers[e.id] for e in requests)
    assert (forwarded.status, forwarded.response_size) == (200, len(page.body.encode()))
    assert forwarded.content_type == "application/json" and forwarded.error is None
    timings = (forwarded.send_s, forwarded.wait_s, forwarded.receive_s)
    assert all(t is not None and 0 <= t < 5 for t in timings), timings
    assert requests[0].timestamp <= forwarded.timestamp
    # the commit's answer is the proxy's block response, never the site's
    assert requests[1].blocked and commit.status == 403 and not run.received("/api/checkout")
    assert commit.response_size == len(blocked.body.encode())
    assert requests[2].refused and refused.status is None and refused.error


def test_a_commit_blocked_by_a_reset_has_no_answer_but_its_error(
    launch: Any, tmp_path: Path, curl: str
) -> None:
    run = launch(write_task(tmp_path / "task", CHECKOUT))
    assert run.curl("-d", "item=mug", f"http://{SHOP}/api/checkout").code != 0
    (commit,) = run.log()
    (answer,) = _answers(run, 1).values()
    assert isinstance(commit, RequestLogEntry) and commit.blocked and answer.id == commit.id
    assert answer.status is None and answer.response_size == 0 and answer.error
    assert run.upstream.requests == []
