"""Headless Chromium for the page-load benchmark, driven over the DevTools protocol on a pipe
(the tests' own client, tests/report/cdp.py, with a page load of its own).

Each load gets a browser context of its own (an empty cache, no open connection, its own proxy
or none), so every load is cold. `intercept=True` does what the reference's in-browser
interception does: Fetch enabled at the Request stage for every URL, each paused request
continued as it is.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from sandbox.demo.chromium import spki_pin
from tests.report.cdp import Browser, CdpError


class Chromium(Browser):
    """One Chromium process; load() measures one cold page load; close() ends it."""

    def __init__(self, chromium: str, profile: Path, trusted_cas: list[Path]) -> None:
        # Trusted as a system CA would be (a certificate error would cost HTTP/2: Chromium
        # does not use it on a connection whose certificate it did not accept).
        pins = ",".join(spki_pin(ca) for ca in trusted_cas)
        flags = [f"--ignore-certificate-errors-spki-list={pins}", "--disable-extensions"]
        super().__init__(chromium, profile, flags)

    def _until(
        self,
        sent: int | None,
        events: dict[str, str],
        session: str | None,
        timeout: float,
    ) -> dict[str, Any]:
        """Read until the reply to `sent` (its result) or one of `events` arrives (a
        Page.frameNavigated other than about:blank's); continue every paused request meanwhile
        (only an intercepting load has any)."""
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read(deadline)
            if msg.get("method") == "Fetch.requestPaused":
                request_id = msg["params"]["requestId"]
                self._send("Fetch.continueRequest", {"requestId": request_id}, msg["sessionId"])
            elif sent is not None and msg.get("id") == sent:
                if "error" in msg:
                    raise CdpError(str(msg["error"]))
                return msg.get("result", {})
            elif msg.get("method") in events and msg.get("sessionId") == session:
                event = msg["method"]
                url = msg["params"].get("frame", {}).get("url")
                if event == "Page.frameNavigated" and url == "about:blank":
                    continue  # the context's first page
                return msg["params"]

    def cdp(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        """A command to the browser (session None) or to one page's session; its result."""
        return self._until(self._send(method, params or {}, session), {}, session, 60)

    def load(self, url: str, proxy: str | None = None, intercept: bool = False) -> dict[str, Any]:
        """One cold load of url: the page's own figures ({ms, images, broken})."""
        context: dict[str, Any] = {"disposeOnDetach": True}
        if proxy:
            context |= {"proxyServer": proxy, "proxyBypassList": "<-loopback>"}
        ctx_id = self.cdp("Target.createBrowserContext", context)["browserContextId"]
        try:
            target = self.cdp(
                "Target.createTarget", {"url": "about:blank", "browserContextId": ctx_id}
            )["targetId"]
            session = self.cdp("Target.attachToTarget", {"targetId": target, "flatten": True})[
                "sessionId"
            ]
            if intercept:
                patterns = [{"urlPattern": "*", "requestStage": "Request"}]
                self.cdp("Fetch.enable", {"patterns": patterns}, session)
            self.cdp("Page.enable", {}, session)
            navigated = self.cdp("Page.navigate", {"url": url}, session)
            if error := navigated.get("errorText"):
                raise CdpError(f"navigation failed: {error}")
            self._until(None, {"Page.frameNavigated": url}, session, 120)
            self._until(None, {"Page.loadEventFired": ""}, session, 120)
            params = {"expression": "window.__done", "awaitPromise": True, "returnByValue": True}
            result = self.cdp("Runtime.evaluate", params, session)
            if "exceptionDetails" in result:
                raise CdpError(f"the page failed: {result['exceptionDetails']}")
            if "value" not in result["result"]:
                raise CdpError("the page did not finish (no window.__done)")
            return result["result"]["value"]
        finally:
            self.cdp("Target.disposeBrowserContext", {"browserContextId": ctx_id})


__all__ = ["CdpError", "Chromium"]
