"""Two HAR readers we do not own, to open the traffic.har files we write: Chrome DevTools' own
Network import (its HAR module, loaded from the DevTools front end bundled in Chromium, in real
headless Chromium) and haralyzer (a HAR library from PyPI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from haralyzer import HarParser
from haralyzer.assets import HarEntry

from tests.report.cdp import Browser

DEVTOOLS = "devtools://devtools/bundled/devtools_app.html"

_IMPORT = """(async (text) => {
  const HAR = await import('./models/har/har.js');
  const root = new HAR.HARFormat.HARRoot(JSON.parse(text));
  const requests = HAR.Importer.Importer.requestsFromHARLog(root.log);
  const out = [];
  for (const r of requests) {
    out.push({url: r.url(), method: r.requestMethod, status: r.statusCode,
              started: r.startTime, headers: r.requestHeaders().length,
              form: await r.requestFormData()});
  }
  return out;
})(%s)"""


def devtools_import(chromium: str, profile: Path, har: Path) -> list[dict[str, Any]]:
    """What Chrome DevTools' Network panel imports from a HAR file (Network → Import HAR): one
    dict per request (url, method, status, start time, header count, form data text)."""
    browser = Browser(chromium, profile)
    try:
        browser.call("Page.enable")
        browser.call("Page.navigate", {"url": DEVTOOLS})
        browser.wait_event("Page.loadEventFired")
        return browser.evaluate(_IMPORT % json.dumps(har.read_text()))
    finally:
        browser.close()


def haralyzer_entries(har: Path) -> list[HarEntry]:
    """The HAR parsed by haralyzer, each entry's fields read once (a missing one raises)."""
    parser = HarParser(json.loads(har.read_text()))
    assert parser.version == "1.2" and parser.creator["name"] == "clawbench-intercept"
    entries = [HarEntry(raw) for raw in parser.har_data["entries"]]
    for e in entries:
        _ = (e.request.method, e.url, e.status, e.startTime, e.time, e.timings)
        _ = (e.request.headers, e.request.bodySize, e.response.mimeType, e.response.headers)
    return entries


__all__ = ["devtools_import", "haralyzer_entries"]
