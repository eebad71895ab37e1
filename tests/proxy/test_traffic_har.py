"""data/traffic.har from what a real mitmdump + addon recorded, opened by two HAR readers we do
not own: Chrome DevTools' Network import (in headless Chromium) and haralyzer.

One proxy run with real curl requests: a page (forwarded), a JSON near miss carrying an
Authorization header, a multipart upload, the form commit (blocked, credited), the same commit
again (blocked again), and a request to a private address (refused).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proxy_addon.addon import start_proxy
from proxy_addon.records import TrafficAction, write_traffic_har
from proxy_addon.records.har import HAR_FILE, read_har
from tests.proxy.conftest import GUARD, SHOP, Run, write_task
from tests.support.har_viewers import devtools_import, haralyzer_entries
from tests.support.upstream import Upstream

CHECKOUT = f"https://{SHOP}/api/checkout"
SECRET = "Bearer sk-har-test-3f9a"


@pytest.fixture(scope="module")
def har(tmp_path_factory: pytest.TempPathFactory, upstream: Upstream, mitm_confdir: Path) -> Path:
    """The run's traffic.har: run_dir/data/traffic.har beside requests.jsonl."""
    tmp = tmp_path_factory.mktemp("har")
    task = write_task(tmp / "task", r"shop\.clawbench\.test/api/checkout", body={"item": "red mug"})
    options = {"clawbench_route": [f"{SHOP}={upstream.url}"]}
    proxy = start_proxy(
        task, tmp / "data", confdir=mitm_confdir, options=options, extra_args=["-s", str(GUARD)]
    )
    run = Run(proxy, tmp / "data", upstream)
    upload = tmp / "list.txt"
    upload.write_text("one red mug\n")
    assert run.curl(f"https://{SHOP}/").status == "200"
    near = run.curl("-H", f"Authorization: {SECRET}", "-H", "Content-Type: application/json",
                    "--data-binary", json.dumps({"item": "blue mug"}), CHECKOUT)  # fmt: skip
    assert near.status == "200"
    assert run.curl("-F", f"list=@{upload};type=text/plain", "-F", "who=alex",
                    f"https://{SHOP}/api/upload").status == "200"  # fmt: skip
    for _ in range(2):
        assert run.curl("-d", "item=red+mug&note=gift", CHECKOUT).status == "000"  # blocked
    assert run.curl("http://10.1.2.3/admin").status != "200"  # a private destination: refused
    run.proxy.stop()
    return write_traffic_har(run.data.parent)


def test_every_request_is_an_entry_marked_with_what_the_proxy_did(har: Path) -> None:
    log = read_har(har).log
    assert har.name == HAR_FILE and log.version == "1.2" and log.clawbench.lines_unreadable == 0
    actions = [(e.request.method, e.clawbench.action, e.clawbench.credited) for e in log.entries]
    assert actions == [
        ("GET", TrafficAction.FORWARDED, False),
        ("POST", TrafficAction.FORWARDED, False),
        ("POST", TrafficAction.FORWARDED, False),
        ("POST", TrafficAction.BLOCKED, True),
        ("POST", TrafficAction.BLOCKED, False),
        ("GET", TrafficAction.REFUSED, False),
    ]
    page, near, upload, commit, _again, refused = log.entries
    starts = [e.startedDateTime for e in log.entries]
    assert starts == sorted(starts) and starts[0].endswith("+00:00")
    assert near.clawbench.near_miss == ['body: key \'item\' expected "red mug", got "blue mug"']
    headers = {h.name.lower(): h.value for h in near.request.headers}
    assert headers["authorization"] == "[REDACTED]" and SECRET not in har.read_text()
    assert near.request.postData and json.loads(near.request.postData.text) == {"item": "blue mug"}
    params = {p.name: p for p in upload.request.postData.params or []}
    assert params["list"].fileName == "list.txt" and params["list"].contentType == "text/plain"
    assert params["who"].value == "alex"
    assert commit.request.postData and commit.request.postData.text == "item=red+mug&note=gift"
    assert commit.response.status == 0 and "blocked" in (commit.response.comment or "")
    assert commit.request.bodySize == len("item=red+mug&note=gift")
    assert refused.clawbench.refused and "private" in refused.clawbench.refused
    # the site's answer as the proxy measured it; a request past the proxy has none
    assert page.response.status == 200 and page.response.content.mimeType
    assert page.response.bodySize == page.response.content.size > 0
    assert min(page.timings.send, page.timings.wait, page.timings.receive) >= 0
    assert page.time == page.timings.total() > 0
    assert refused.response.status == 0 and refused.timings.wait == -1


def test_haralyzer_reads_every_entry(har: Path) -> None:
    entries = haralyzer_entries(har)
    assert [e.request.method for e in entries] == ["GET", "POST", "POST", "POST", "POST", "GET"]
    assert entries[3].url == CHECKOUT and entries[3].request.text == "item=red+mug&note=gift"


@pytest.mark.chromium
def test_chrome_devtools_imports_it(har: Path, chromium: str, tmp_path: Path) -> None:
    imported = devtools_import(chromium, tmp_path / "profile", har)
    entries = read_har(har).log.entries
    assert [(r["method"], r["url"]) for r in imported] == [
        (e.request.method, e.request.url) for e in entries
    ]
    commit = imported[3]
    assert commit["form"] == "item=red+mug&note=gift" and commit["headers"] >= 3
    assert [round(r["started"], 2) for r in imported] == sorted(
        round(r["started"], 2) for r in imported
    )
