"""A run's traffic as HAR: data/requests.jsonl (and interception.json) → data/traffic.har.

One entry per request the proxy saw, in the order they started: method, URL, headers and body as
recorded (redacted and capped by the proxy), the response where the proxy measured it, and
`_clawbench` saying what the proxy did (forwarded, blocked, refused, a model call) with the
near-miss reasons. A WebSocket's client messages go on their opening request's entry
(`_webSocketMessages`, as Chrome DevTools writes them). The reference's runs (requests logged by
the browser, no verdict per line) get the same file: the request interception.json credits is
marked blocked. Nothing here trusts the lines: a key of the wrong type is left out, and secrets
are redacted again (the proxy did; the reference's browser-side log did not).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from proxy_addon.records.atomic import write_bytes_atomic
from proxy_addon.records.har import (
    HAR_FILE,
    Creator,
    Har,
    HarEntry,
    HarLog,
    LogMark,
    TrafficAction,
    WebSocketMessage,
    entry_size,
    har_bytes,
)
from proxy_addon.records.harentry import BLOCKED_NOTE, entry_of, number, scalar
from proxy_addon.records.interception import InterceptionView, RecordError, read_interception
from proxy_addon.records.provenance import provenance
from proxy_addon.records.requestlog import REQUESTS_FILE

HAR_CAP_BYTES = 64 << 20
"""traffic.har's size bound: requests past it are counted in `entries_left_out`, not written."""
_GROWTH, _ENTRY_KEYS = 8, 4096
"""An entry takes at most _GROWTH times its line plus _ENTRY_KEYS bytes (a form's one-letter
fields repeated are 4 bytes each in the line, 29 as HAR's params and text): entries are measured
near the cap only."""


def read_lines(path: Path) -> Iterator[tuple[dict[str, Any] | None, int]]:
    """requests.jsonl's lines as (JSON object, its bytes), None for a line that is none (cut,
    not JSON)."""
    with path.open("rb") as lines:
        for raw in lines:
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except ValueError:
                yield None, len(raw)
                continue
            yield (value if isinstance(value, dict) else None), len(raw)


def _is_credited(line: dict[str, Any], credited: dict[str, Any] | None) -> bool:
    """A reference line (no verdict of its own) that is the request interception.json holds."""
    if credited is None or "blocked" in line:
        return False
    return all(line.get(k) == credited.get(k) for k in ("url", "method", "body"))


def _credited(data: Path) -> tuple[dict[str, Any] | None, float | None]:
    """interception.json's credited request and when it was blocked; (None, None) when none."""
    try:
        view: InterceptionView = read_interception(data / "interception.json")
    except RecordError:
        return None, None
    if not view.intercepted or view.request is None:
        return None, None
    return view.request, number(view.intercepted_at)


def _from_interception(request: dict[str, Any], at: float) -> HarEntry:
    """The credited request as interception.json holds it, for a log that lacks its line."""
    line = {**request, "query_params": request.get("params"), "blocked": True, "matched": True}
    entry = entry_of(line, at)
    entry.comment = "from data/interception.json (no line of data/requests.jsonl is this request)"
    return entry


def build_har(run_dir: Path) -> Har:
    """The HAR of a run directory (ours or the reference's); never raises for a bad line."""
    data = run_dir / "data"
    source = data / REQUESTS_FILE
    mark = LogMark(run=run_dir.name, source=f"data/{REQUESTS_FILE}", built_at=started_now())
    timed: list[tuple[float, int, dict[str, Any]]] = []
    try:
        for line, size in read_lines(source):
            mark.lines += 1
            stamp = number(line.get("timestamp")) if line is not None else None
            if line is None or stamp is None or abs(stamp) > 1e11:
                mark.lines_unreadable += 1
                continue
            timed.append((stamp, size, line))
    except FileNotFoundError:
        mark.source = f"none: no data/{REQUESTS_FILE} (the proxy saw no request, or never ran)"
    except OSError as e:
        mark.source = f"data/{REQUESTS_FILE}: unreadable: {e.strerror or e}"
    timed.sort(key=lambda t: t[0])  # stable: lines of one time keep the log's order
    credited, at = _credited(data)
    entries = _entries(timed, credited, mark)
    if credited is not None and not any(e.clawbench.credited for e in entries):
        last = timed[-1][0] if timed else 0.0
        entry = _from_interception(credited, at if at is not None else last)
        entry.clawbench.credited = True
        entry.clawbench.body_unverified = credited.get("body_unverified") is True
        entries.append(entry)
        entries.sort(key=lambda e: e.startedDateTime)
    version = provenance()["package_version"] or "0+checkout"
    log = HarLog(
        creator=Creator(name="clawbench-intercept", version=version),
        entries=entries,
        comment="What the interception proxy saw of this run's traffic (docs/formats.md).",
        _clawbench=mark,
    )
    return Har(log=log)


class _Budget:
    """HAR_CAP_BYTES spent entry by entry: an entry counts its bound (its line's size times
    _GROWTH) until the bounds could pass the cap, then every entry held is measured."""

    def __init__(self) -> None:
        self.used = _ENTRY_KEYS  # the log's own keys
        self.held: list[HarEntry] = []
        self.bound = 0

    def _measure_held(self) -> None:
        self.used += sum(entry_size(e) + 1 for e in self.held)
        self.held, self.bound = [], 0

    def take(self, entry: HarEntry, line_size: int) -> bool:
        """Whether the entry fits (it is then counted)."""
        bound = _GROWTH * line_size + _ENTRY_KEYS
        if self.used + self.bound + bound <= HAR_CAP_BYTES:
            self.held.append(entry)
            self.bound += bound
            return True
        self._measure_held()
        size = entry_size(entry) + 1
        if self.used + size > HAR_CAP_BYTES:
            return False
        self.used += size
        return True

    def take_bytes(self, size: int) -> bool:
        """Whether size more bytes on an entry already taken fit (then counted)."""
        self._measure_held()
        if self.used + size > HAR_CAP_BYTES:
            return False
        self.used += size
        return True


def _entries(
    timed: list[tuple[float, int, dict[str, Any]]], credited: dict[str, Any] | None, mark: LogMark
) -> list[HarEntry]:
    entries: list[HarEntry] = []
    sockets: dict[str, HarEntry] = {}
    budget = _Budget()
    first_block = True
    for stamp, size, line in timed:
        message = line.get("websocket_message")
        if message in ("text", "binary") and (opening := sockets.get(str(line.get("url")))):
            sent = WebSocketMessage(
                time=stamp, opcode=1 if message == "text" else 2, data=scalar(line.get("body"))
            )
            if budget.take_bytes(len(sent.model_dump_json()) + 1):
                opening.webSocketMessages.append(sent)
            else:
                mark.entries_left_out += 1
            continue
        entry = entry_of(line, stamp)
        if _is_credited(line, credited) and first_block:
            entry.clawbench.action = TrafficAction.BLOCKED
            entry.response.comment = BLOCKED_NOTE
        if entry.clawbench.action is TrafficAction.BLOCKED and first_block:
            first_block = False
            if credited is not None:
                entry.clawbench.credited = True
                entry.clawbench.body_unverified = credited.get("body_unverified") is True
        if not budget.take(entry, size):
            mark.entries_left_out += 1
            continue
        entries.append(entry)
        if line.get("websocket") is True:
            sockets[entry.request.url] = entry
    return entries


def started_now() -> str:
    """The current time as startedDateTime writes times."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def write_traffic_har(run_dir: Path) -> Path:
    """Build and write <run>/data/traffic.har (atomically, at most HAR_CAP_BYTES); returns its
    path."""
    path = run_dir / "data" / HAR_FILE
    har = build_har(run_dir)
    data = har_bytes(har)
    while len(data) > HAR_CAP_BYTES and har.log.entries:  # the bound above makes this moot
        drop = max(1, len(har.log.entries) // 10)
        del har.log.entries[-drop:]
        har.log.clawbench.entries_left_out += drop
        data = har_bytes(har)
    write_bytes_atomic(path, data)
    return path


__all__ = ["HAR_CAP_BYTES", "build_har", "read_lines", "write_traffic_har"]
