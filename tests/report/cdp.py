"""Real headless Chromium driven over the DevTools protocol through a pipe (fds 3 and 4).

No websocket and no port: `--remote-debugging-pipe` reads NUL-terminated JSON commands on fd 3
and writes replies and events on fd 4. Every Network event of the page is kept, so a test can
assert that the page asked for nothing beyond itself.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandbox.demo.chromium import CHROMIUM_FLAGS


class CdpError(RuntimeError):
    """Chromium answered a command with an error, exited, or did not answer in time."""


class Browser:
    """One Chromium process and one page session; close() ends the process group."""

    def __init__(self, chromium: str, profile: Path, extra: Sequence[str] = ()) -> None:
        cmd_r, self._cmd_w = os.pipe()
        self._evt_r, evt_w = os.pipe()
        # The child's fds 3 and 4 are made by bash (dash takes one-digit fds only) from copies
        # above 9, so no redirection clobbers another, and no preexec_fn runs in a process
        # that has threads.
        a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
        b = fcntl.fcntl(evt_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(cmd_r)
        os.close(evt_w)
        log = open(profile.with_suffix(".log"), "wb")  # noqa: SIM115  (closed below)
        args = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *extra]
        shell = f'exec "$0" "$@" 3<&{a} 4>&{b} {a}<&- {b}>&-'
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", shell, *args, "--remote-debugging-pipe", "about:blank"],
            pass_fds=(a, b),
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        log.close()
        os.close(a)
        os.close(b)
        self._buf = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []
        try:
            self.session = self._attach()
        except BaseException:
            self.close()
            raise

    def _send(self, method: str, params: dict[str, Any] | None, session: str | None) -> int:
        self._next += 1
        msg: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        return self._next

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._evt_r], [], [], max(0.0, left))
            if not ready:
                raise CdpError("chromium did not answer in time")
            chunk = os.read(self._evt_r, 1 << 16)
            if not chunk:
                raise CdpError(f"chromium exited ({self.proc.poll()})")
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        timeout: float = 30,
        browser: bool = False,
    ) -> dict[str, Any]:
        """Send a command (to the page session unless browser) and return its result."""
        sent = self._send(method, params, None if browser else self.session)
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read(deadline)
            if msg.get("id") == sent:
                if "error" in msg:
                    raise CdpError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method: str, timeout: float = 30) -> dict[str, Any]:
        """The first event of this kind (already received, or the next to come)."""
        for msg in self.events:
            if msg["method"] == method:
                return msg
        deadline = time.monotonic() + timeout
        while True:
            msg = self._read(deadline)
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == method:
                    return msg

    def _attach(self) -> str:
        targets = self.call("Target.getTargets", browser=True)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        attached = self.call(
            "Target.attachToTarget", {"targetId": page["targetId"], "flatten": True}, browser=True
        )
        return attached["sessionId"]

    def open(self, url: str, width: int = 1280, height: int = 900) -> None:
        """Watch the network, size the viewport, load url and wait for its load event."""
        self.call("Network.enable")
        self.call("Page.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page (DevTools, not the page's own
        script: the page has none and its CSP forbids any)."""
        params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        result = self.call("Runtime.evaluate", params)
        if "exceptionDetails" in result:
            raise CdpError(f"evaluate: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, full_page: bool = False) -> bytes:
        """A PNG of the viewport (or of the whole page)."""
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full_page}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": size["height"],
                "scale": 1,
            }
        return base64.b64decode(self.call("Page.captureScreenshot", params)["data"])

    def requests(self) -> list[str]:
        """Every URL the page asked for (Network.requestWillBeSent), in order."""
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e["method"] == "Network.requestWillBeSent"
        ]

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._cmd_w)
        with contextlib.suppress(OSError):
            os.close(self._evt_r)
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


__all__ = ["Browser", "CdpError"]
