"""The proxy inside the container (clawbench-proxy: mitmproxy + the addon, launched as
proxy_addon/addon/launcher.py builds it): its command line, and waiting until it is ready.

Listeners: regular mode on 127.0.0.1:8080 (the proxy variables point there) and transparent mode
on 8081 for IPv4 and, when the namespace has it, IPv6 (the firewall redirects the agent's direct
web traffic there). All on loopback, so nothing else on the network can use the proxy.
The addon itself refuses streams that are not HTTP (they would pass it unseen).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from pydantic import ValidationError

from proxy_addon.addon import proxy_argv
from proxy_addon.records import ProxyReady, StopReason
from sandbox.container.contract import (
    CONF_DIR,
    DATA_DIR,
    RECORDS_BUDGET,
    REGULAR_PORT,
    SUBMIT_PORT,
    TASK_FILE,
    TRANSPARENT_PORT,
    UPSTREAM_CA,
    VENV,
    mitmdump_log_cap,
)

POLL_S = 0.05
BODY_SIZE_LIMIT = "32m"


class SetupError(RuntimeError):
    """The session cannot start safely; reason is a SandboxReport stop_reason."""

    def __init__(self, reason: StopReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def tail(path: Path, lines: int = 8) -> str:
    """The last lines of a log, on one line, for an error message."""
    try:
        text = path.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "(no log)"
    return " | ".join(text[-lines:]) or "(empty log)"


def mitmdump_argv(
    *,
    ipv6: bool,
    upstream_ca: bool,
    options: Mapping[str, str | list[str]],
    submit_page: bool,
    records_budget: int = RECORDS_BUDGET,
) -> list[str]:
    """The proxy's command: the listeners, our options, then the user's --mitm-set;
    requests.jsonl gets the records budget but mitmdump.log's share."""
    modes = [f"regular@127.0.0.1:{REGULAR_PORT}", f"transparent@127.0.0.1:{TRANSPARENT_PORT}"]
    if ipv6:
        modes.append(f"transparent@::1:{TRANSPARENT_PORT}")
    settings: dict[str, str | list[str]] = {
        # The proxy's memory stays bounded whatever the agent sends; a matching request over
        # it is still blocked and credited (body_unverified).
        "body_size_limit": BODY_SIZE_LIMIT,
        "confdir": CONF_DIR,
        "clawbench_task": TASK_FILE,
        "clawbench_data": DATA_DIR,
        "clawbench_log_budget": str(records_budget - mitmdump_log_cap(records_budget)),
    }
    if upstream_ca:
        # Adds a private CA (a test or demo site) to certifi's set; verification stays on.
        settings["ssl_verify_upstream_trusted_ca"] = UPSTREAM_CA
    settings.update(options)
    if submit_page:  # the proxy refuses loopback destinations but for this one page
        allowed = settings.get("clawbench_allow_private", [])
        given = [allowed] if isinstance(allowed, str) else list(allowed)
        page = [f"127.0.0.1:{SUBMIT_PORT}", f"[::1]:{SUBMIT_PORT}"]
        settings["clawbench_allow_private"] = [*given, *page]
    return proxy_argv(f"{VENV}/bin/python", modes, settings)


def wait_ready(
    proc: subprocess.Popen[bytes],
    ready_file: Path,
    log: Path,
    timeout_s: float,
    interrupted: Callable[[], bool],
) -> ProxyReady:
    """Block until ready_file holds a valid ProxyReady; SetupError if mitmdump dies or stalls."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not interrupted():
        if ready_file.exists():
            try:
                return ProxyReady.model_validate_json(ready_file.read_bytes())
            except ValidationError:
                pass  # not written yet; the addon replaces it atomically, so retry
        elif proc.poll() is not None:
            raise SetupError(
                StopReason.PROXY_FAILED, f"mitmdump exited with {proc.returncode}: {tail(log)}"
            )
        time.sleep(POLL_S)
    if interrupted():
        raise SetupError(StopReason.INTERRUPTED, "stopped while waiting for the proxy")
    raise SetupError(StopReason.PROXY_FAILED, f"no .proxy-ready after {timeout_s:g}s: {tail(log)}")
