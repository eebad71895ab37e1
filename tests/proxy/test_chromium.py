"""Headless Chromium through the real proxy: the requests a browser agent actually sends.

The upstream serves the pages (over https via the proxy, the proxy's CA trusted through an NSS db
under a temporary HOME). Two browser runs cover a form POST, fetch() with JSON, a multipart
upload of a Blob, a cross-origin fetch answered in respond mode (CORS) and a GET navigation.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandbox.demo.chromium import CHROMIUM_FLAGS
from tests.conftest import require
from tests.proxy.conftest import SHOP, WWW, Run, write_task

FLAGS = [*CHROMIUM_FLAGS, "--proxy-bypass-list=<-loopback>"]  # the demo's browser, as it runs

POSTS_PAGE = """<!doctype html><meta charset="utf-8"><title>posts</title>
<form id="f" method="POST" action="/api/commit/form">
<input name="item" value="mug"><input name="qty" value="2"><input name="password" value="pw-f1">
</form>
<script>
(async () => {
  const say = (what) => fetch('/report?' + what, {cache: 'no-store'});
  await fetch('/api/echo', {method: 'POST', body: JSON.stringify({item: 'mug', note: 'caf\\u00e9'}),
    headers: {'Content-Type': 'application/json', 'X-Test': 'echo'}});
  try {
    await fetch('/api/commit/json', {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({item: 'mug', qty: 1, password: 'pw-j1'})});
    await say('json=passed');
  } catch (e) { await say('json=blocked'); }
  const fd = new FormData();
  fd.append('item', 'mug');
  fd.append('photo', new Blob([new Uint8Array([0, 1, 2, 255])], {type: 'image/png'}), 'mug.png');
  try {
    await fetch('/api/commit/upload', {method: 'POST', body: fd});
    await say('upload=passed');
  } catch (e) { await say('upload=blocked'); }
  document.getElementById('f').submit();
})();
</script>"""

CORS_PAGE = """<!doctype html><meta charset="utf-8"><title>cors</title>
<script>
(async () => {
  let report;
  try {
    const r = await fetch('https://shop.clawbench.test/orders/confirm?ref=fetch',
      {credentials: 'include', headers: {'X-Test': 'cors'}});
    report = 'status=' + r.status + '&body=' + encodeURIComponent(await r.text());
  } catch (e) { report = 'status=unreadable'; }
  await fetch('/report?' + report, {cache: 'no-store'});
  location.href = 'https://shop.clawbench.test/orders/confirm?ref=nav';
})();
</script>"""


@pytest.fixture(scope="session")
def nss_home(tmp_path_factory: pytest.TempPathFactory, mitm_confdir: Path) -> Path:
    """A HOME whose NSS db trusts the session's mitmproxy CA (how Chromium on Linux trusts)."""
    certutil = shutil.which("certutil")
    require(certutil is not None, "certutil (libnss3-tools)")
    assert certutil is not None
    home = tmp_path_factory.mktemp("chromium-home")
    db = home / ".pki" / "nssdb"
    db.mkdir(parents=True)
    subprocess.run([certutil, "-d", f"sql:{db}", "-N", "--empty-password"], check=True)
    ca = mitm_confdir / "mitmproxy-ca-cert.pem"
    subprocess.run(
        [certutil, "-d", f"sql:{db}", "-A", "-t", "C,,", "-n", "mitm", "-i", str(ca)], check=True
    )
    return home


@pytest.fixture
def browse(chromium: str, nss_home: Path, tmp_path: Path) -> Iterator[Callable[..., None]]:
    """browse(run, url, until) → Chromium loads url through the proxy until until() holds."""
    procs: list[subprocess.Popen[bytes]] = []

    def _browse(run: Run, url: str, until: Callable[[], bool], timeout: float = 45) -> None:
        profile = tmp_path / f"profile{len(procs)}"
        args = [chromium, *FLAGS, f"--user-data-dir={profile}", f"--proxy-server={run.proxy.url}"]
        env = {**os.environ, "HOME": str(nss_home)}
        log = open(tmp_path / f"chromium{len(procs)}.log", "wb")  # noqa: SIM115  (closed below)
        proc = subprocess.Popen(
            [*args, url], env=env, stdout=log, stderr=log, start_new_session=True
        )
        log.close()
        procs.append(proc)
        deadline = time.monotonic() + timeout
        while not until():
            assert proc.poll() is None, f"chromium exited: {proc.returncode}"
            assert time.monotonic() < deadline, f"timed out; upstream saw {run.upstream.paths()}"
            time.sleep(0.1)

    yield _browse
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # the session it leads: the browser's children
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_chromium_form_fetch_json_and_multipart_are_blocked(launch, tmp_path, browse) -> None:
    run = launch(write_task(tmp_path / "task", r"shop\.clawbench\.test/api/commit/",
                            body={"item": "mug"}))  # fmt: skip
    run.upstream.pages["/page/posts"] = ("text/html; charset=utf-8", POSTS_PAGE.encode())

    def committed_all() -> bool:
        return sum(e.matched for e in run.log()) == 3

    browse(run, f"https://{SHOP}/page/posts", committed_all)
    paths = run.upstream.paths()
    assert "/report?json=blocked" in paths and "/report?upload=blocked" in paths
    assert not [p for p in paths if p.startswith("/api/commit")]
    (echo,) = run.received("/api/echo")
    assert echo.body == '{"item":"mug","note":"café"}'.encode()
    assert ("X-Test", "echo") in echo.headers or ("x-test", "echo") in echo.headers

    rec = run.interception()  # the first commit is credited: the fetch() with JSON
    assert rec.request.url == "https://shop.clawbench.test/api/commit/json"
    assert rec.request.body == {"item": "mug", "qty": 1, "password": "[REDACTED]"}
    assert rec.blocked_count == 3 and not rec.request.body_unverified
    by_url = {e.url.rsplit("/", 1)[1]: e for e in run.log() if e.matched}
    upload = by_url["upload"].body
    assert upload["item"] == "mug"
    assert upload["photo"] == {
        "filename": "mug.png",
        "content_type": "image/png",
        "size": 4,
        "sha256": hashlib.sha256(bytes([0, 1, 2, 255])).hexdigest(),
    }
    form = by_url["form"]
    assert form.body == {"item": "mug", "qty": "2", "password": "[REDACTED]"}
    assert form.headers.get("sec-fetch-mode") == "navigate"
    assert form.content_type == "application/x-www-form-urlencoded"
    for secret in ("pw-f1", "pw-j1"):
        assert secret not in run.raw_log()
        assert secret not in (run.data / "interception.json").read_text()


def test_chromium_cross_origin_fetch_respond_mode_then_navigation(launch, tmp_path, browse) -> None:
    run = launch(
        write_task(tmp_path / "task", r"shop\.clawbench\.test/orders/confirm", "GET"),
        clawbench_block_mode="respond",
        clawbench_block_status="409",
        clawbench_block_body="blocked-by-test",
    )
    run.upstream.pages["/page/cors"] = ("text/html; charset=utf-8", CORS_PAGE.encode())

    def navigated() -> bool:
        return sum(e.matched for e in run.log()) == 2

    browse(run, f"https://{WWW}/page/cors", navigated)
    # The page could read the blocked answer: status, body, and so the CORS headers worked.
    assert "/report?status=409&body=blocked-by-test" in run.upstream.paths()
    (preflight,) = run.received("/orders/confirm")  # OPTIONS is not the commit: forwarded
    assert preflight.method == "OPTIONS"
    rec = run.interception()
    assert rec.request.url == "https://shop.clawbench.test/orders/confirm?ref=fetch"
    assert rec.request.headers["origin"] == f"https://{WWW}" and rec.blocked_count == 2
    nav = [e for e in run.log() if e.matched][1]
    assert nav.url.endswith("?ref=nav") and nav.method == "GET"
    assert nav.headers.get("sec-fetch-mode") == "navigate"
    assert nav.headers.get("sec-fetch-dest") == "document"
