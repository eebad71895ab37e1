"""The report in real headless Chromium: counts, no request at all, hostile text stays text,
a screenshot that shows something, and matrix links that open a run's details."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scorer.html_report.render import CSP
from tests.report.cdp import Browser
from tests.report.conftest import HOSTILE_ITEM, HOSTILE_NOTE, HOSTILE_REASON, Batches, summary
from tests.report.png import colours, decode

pytestmark = pytest.mark.chromium
TITLE = "ClawBench report"


OWN_DOMAIN = ".clawbench.test"
"""The test data's hosts: every URL a report shows is under it."""


def hosts_named(page: Path) -> set[str]:
    """Every host a URL in the page names (what the page itself could ask for)."""
    return {h.lower() for h in re.findall(r"//([A-Za-z0-9.-]+)", page.read_text())}


class ConnectionRecorder:
    """A TCP listener on loopback that records every connection (Chromium's --proxy-server)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.lines: list[str] = []
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.settimeout(1)
            try:
                self.lines.append(conn.recv(200).split(b"\r\n", 1)[0].decode("latin-1"))
            except OSError:
                self.lines.append("")
            conn.close()

    def page_hosts(self, page: Path | None = None) -> list[str]:
        """The hosts asked for (CONNECT host:port, or an absolute URL) that the page could have
        asked for: the test data's and any the page names. The browser's own traffic (its
        vendor's services, which change with each Chromium release) is left out."""
        own = hosts_named(page) if page is not None else set()
        hosts = []
        for line in self.lines:
            parts = line.split()
            target = parts[1] if len(parts) > 1 else line
            host = target.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0].lower()
            if host.endswith(OWN_DOMAIN) or host in own:
                hosts.append(host)
        return hosts

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


@pytest.fixture
def recorder() -> Iterator[ConnectionRecorder]:
    rec = ConnectionRecorder()
    yield rec
    rec.close()


@pytest.fixture
def browser(
    chromium: str, tmp_path: Path, recorder: ConnectionRecorder
) -> Iterator[Callable[[str], Browser]]:
    """browser(url) → a Chromium whose every connection would go to the recorder, on url."""
    opened: list[Browser] = []

    def _open(url: str) -> Browser:
        extra = [f"--proxy-server=127.0.0.1:{recorder.port}", "--proxy-bypass-list=<-loopback>"]
        b = Browser(chromium, tmp_path / f"profile{len(opened)}", extra)
        opened.append(b)
        b.open(url)
        return b

    yield _open
    for b in opened:
        b.close()


def without_csp(report: Path) -> Path:
    """A copy of the report without its CSP meta tag: what the markup alone would do."""
    text, n = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", report.read_text())
    assert n == 1 and "'none'" in CSP
    copy = report.with_name(f"nocsp-{report.name}")
    copy.write_text(text)
    return copy


def test_counts_in_the_dom_equal_the_summaries(batches: Batches, report: Path, browser) -> None:
    b = browser(report.as_uri())
    rows = b.evaluate(
        "[...document.querySelectorAll('tr.entry')].map(r => ({...r.dataset, "
        "passed_text: r.querySelector('.passed').textContent, "
        "total_text: r.querySelector('.total').textContent, "
        "missing_text: r.querySelector('.missing')?.textContent ?? null}))"
    )
    shown = {(r["model"], r["harness"]): r for r in rows}
    entries = [e for s in (summary(batches.judged), summary(batches.stage1)) for e in s["entries"]]
    assert len(shown) == len(entries) == 3
    for e in entries:
        row = shown[(e["model"], e["harness"])]
        assert int(row["total"]) == int(row["total_text"]) == e["n_total"]
        if e["leaderboard"]["passed"] is None:  # Stage 1 only: no pass without a verdict
            assert "passed" not in row and row["passed_text"] == "not judged"
        else:
            assert int(row["passed"]) == int(row["passed_text"]) == e["leaderboard"]["passed"]
        assert int(row["intercepted"]) == e["n_intercepted"]
        # N holds the corpus's tasks never run: said under the count, where N is
        missing = f"{e['n_missing']} missing" if e["n_missing"] else None
        assert int(row["missing"]) == e["n_missing"] and row["missing_text"] == missing
    # Column by column, the matrix adds up to the summary's counts.
    cells = b.evaluate(
        "(() => { const heads = [...document.querySelectorAll('table.matrix thead th.col')];"
        " return [...document.querySelectorAll('table.matrix tbody tr')].flatMap(tr => "
        "[...tr.querySelectorAll('td.cell')].map((td, i) => "
        "[heads[i].querySelector('.m').textContent, td.dataset.outcome || null])); })()"
    )
    for e in entries:
        got = [o for model, o in cells if model == e["model"] and o]
        assert got.count("passed") == e["n_judge_match"]
        assert got.count("judge_mismatch") == e["n_judge_mismatch"]
        assert got.count("judge_error") == e["n_judge_error"]
        assert got.count("intercepted") == e["n_unjudged"]
        assert got.count("infra_failure") == e["n_infra_failure"]
        assert got.count("missing") == e["n_missing"]
        assert sum(o.startswith("nx-") for o in got) == e["n_model_not_intercepted"]
        assert len(got) == e["n_total"]
    # The per-task column counts passes in judged entries only, and says so beside the others.
    per_task = b.evaluate(
        "[...document.querySelectorAll('table.matrix tbody td.count')]"
        ".map(td => [td.dataset.passed, td.title])"
    )
    judged_passes = sum(e["leaderboard"]["passed"] or 0 for e in entries)
    assert sum(int(p) for p, _ in per_task if p != "not judged") == judged_passes > 0
    assert any("not judged" in title for p, title in per_task if p != "not judged")
    runs = [t for s in (summary(batches.judged), summary(batches.stage1)) for t in s["tasks"]]
    shown_runs = b.evaluate("document.querySelectorAll('details.run').length")
    assert shown_runs == sum(t["run_dir"] is not None for t in runs) == 12


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "markup-alone"])
def test_no_request_leaves_the_page(
    report: Path, browser, recorder: ConnectionRecorder, csp: bool
) -> None:
    page = report if csp else without_csp(report)
    b = browser(page.as_uri())
    b.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    b.screenshot(full_page=True)  # everything laid out and painted, every details open
    b.call("Page.reload")
    b.wait_event("Page.loadEventFired")
    assert set(b.requests()) == {page.as_uri()}
    assert not [e for e in b.events if e["method"] == "Network.loadingFailed"]
    assert recorder.page_hosts(page) == []


def test_the_recorder_sees_a_page_that_does_request(
    tmp_path: Path, browser, recorder: ConnectionRecorder
) -> None:
    """The control for the test above: a page that loads an image is seen doing so."""
    page = tmp_path / "leaky.html"
    page.write_text('<!doctype html><title>t</title><img src="http://leak.clawbench.test/x.png">')
    b = browser(page.as_uri())
    assert "http://leak.clawbench.test/x.png" in b.requests()
    deadline = time.monotonic() + 10
    while "leak.clawbench.test" not in recorder.page_hosts() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "leak.clawbench.test" in recorder.page_hosts()


def test_the_launcher_turns_off_the_browsers_own_traffic_where_it_can(
    browser, recorder: ConnectionRecorder
) -> None:
    """Network time is one of the background calls the demo's flags turn off (Chromium asks
    for it within a second of starting without them)."""
    browser("about:blank")
    time.sleep(3)
    asked = [line for line in recorder.lines if "/time/1/current" in line]
    assert asked == [], asked


@pytest.mark.parametrize("csp", [True, False], ids=["with-csp", "markup-alone"])
def test_a_hostile_body_is_shown_as_text_and_does_not_run(report: Path, browser, csp: bool) -> None:
    page = report if csp else without_csp(report)
    b = browser(page.as_uri())
    assert b.evaluate("document.title") == TITLE
    assert b.evaluate("document.querySelectorAll('script, iframe, object').length") == 0
    # the one image is the agent's PNG screenshot, inlined and drawn; the SVG it also saved is
    # a link to its file, never an image of the page
    b.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    images = b.evaluate(
        "Promise.all([...document.images].map(i => (i.scrollIntoView(), i.decode().then(() =>"
        " [i.src.slice(0, 22), i.naturalWidth, i.naturalHeight]))))"
    )
    assert images == [["data:image/png;base64,", 24, 16]]
    texts = b.evaluate("[...document.querySelectorAll('pre.request')].map(p => p.textContent)")
    assert any(HOSTILE_ITEM in t for t in texts)  # the real proxy's record and the reference's
    assert sum(HOSTILE_NOTE.replace('"', '\\"') in t for t in texts) == 1
    reasons = b.evaluate("document.body.textContent")
    assert HOSTILE_REASON in reasons
    assert "Added the <b>red mug</b> to the cart." in reasons  # the agent's claim, as text
    assert b.evaluate("document.querySelectorAll('main b').length") == b.evaluate(
        "document.querySelectorAll('.step b').length"
    )  # every <b> is one of ours (the funnel counts)


def test_screenshot_at_1280_is_not_blank(report: Path, browser, tmp_path: Path) -> None:
    blank = tmp_path / "blank.html"
    blank.write_text("<!doctype html><title>blank</title>")
    control = colours(browser(blank.as_uri()).screenshot())
    assert len(control) == 1  # the check can tell a blank page
    png = browser(report.as_uri()).screenshot()
    width, height, _, _ = decode(png, max_rows=1)
    assert (width, height) == (1280, 900)
    assert len(colours(png)) > 20


def test_a_matrix_cell_opens_its_run(batches: Batches, report: Path, browser) -> None:
    b = browser(report.as_uri())
    href = b.evaluate("document.querySelector('td.o-judge_mismatch a').getAttribute('href')")
    assert href.startswith("#run-")
    assert b.evaluate(f"document.getElementById('{href[1:]}').closest('details').open") is False
    b.call("Page.navigate", {"url": report.as_uri() + href})
    b.evaluate("new Promise(r => setTimeout(r, 200))")
    assert b.evaluate(f"document.getElementById('{href[1:]}').closest('details').open") is True
    text = b.evaluate(f"document.getElementById('{href[1:]}').textContent")
    assert "wrong colour: blue, not red" in text and "Add one red mug" in text


def test_the_leaderboard_fits_1280_with_cost_tokens_and_judge_errors_in_view(
    report: Path, browser, tmp_path: Path
) -> None:
    """Several batches, long model names, the agents' and the judge's tokens and cost: at
    1280 px every column is on screen, with no scrolling sideways."""
    b = browser(report.as_uri())
    seen = b.evaluate(
        """(() => {
          const table = document.querySelector('table.leaderboard');
          const heads = [...table.querySelectorAll('thead th')].map(th => th.textContent);
          const cells = [...table.querySelectorAll('tbody tr.entry')].map(tr =>
            [...tr.children].map(td => {
              const r = td.getBoundingClientRect();
              const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
              return {right: r.right, visible: td.contains(hit)};
            }));
          return {heads, cells, wrap: table.parentElement.clientWidth,
                  width: table.scrollWidth, page: document.documentElement.scrollWidth,
                  viewport: window.innerWidth};
        })()"""
    )
    for wanted in ("judge errors", "agent tokens in / out", "agent cost", "judge cost"):
        assert wanted in seen["heads"], seen["heads"]
    assert seen["width"] <= seen["wrap"] and seen["page"] <= seen["viewport"] == 1280
    assert len(seen["cells"]) == 3
    for row in seen["cells"]:
        assert len(row) == len(seen["heads"])
        assert all(c["right"] <= seen["viewport"] and c["visible"] for c in row), row
    png = b.screenshot()
    assert len(colours(png)) > 20  # laid out and painted
