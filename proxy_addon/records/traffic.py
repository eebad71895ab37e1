"""A run's traffic as HAR: data/requests.jsonl (and interception.json) → data/traffic.har.

One entry per request the proxy saw, in the order they started: method, URL, headers and body as
recorded (redacted and capped by the proxy), the response where the proxy measured it, and
`_clawbench` saying what the proxy did (forwarded, blocked, refused, a model call) with the
near-miss reasons. A WebSocket's client messages go on their opening request's entry
(`_webSocketMessages`, as Chrome DevTools writes them). The reference's runs (requests logged by
the browser, no verdict per line) get the same file: the request interception.json credits is
marked blocked. The lines come typed from the one reader of requests.jsonl
(records.requestlog.RequestLog, which also reads the reference's lines); a line it cannot read
is counted, and secrets are redacted again (the proxy did; the reference's browser log did not).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

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
from proxy_addon.records.harentry import BLOCKED_NOTE, Line, answer, entry_of, number, scalar
from proxy_addon.records.interception import InterceptionView, RecordError, read_interception
from proxy_addon.records.provenance import provenance
from proxy_addon.records.requestlog import (
    REQUESTS_FILE,
    ReferenceLogLine,
    RequestLog,
    RequestLogEntry,
    ResponseLine,
    ShortLine,
)

HAR_CAP_BYTES = 64 << 20
"""traffic.har's size bound: requests past it are counted in `entries_left_out`, not written."""
_GROWTH, _ENTRY_KEYS = 8, 4096
"""An entry takes at most _GROWTH times its line plus _ENTRY_KEYS bytes (a form's one-letter
fields repeated are 4 bytes each in the line, 29 as HAR's params and text): entries are measured
near the cap only."""


def _is_credited(line: Line, credited: dict[str, Any] | None) -> bool:
    """A reference line (no verdict of its own) that is the request interception.json holds."""
    if credited is None or not isinstance(line, ReferenceLogLine):
        return False
    sent = (line.url, line.method, line.body)
    return sent == (credited.get("url"), credited.get("method"), credited.get("body"))


def _credited(data: Path) -> tuple[dict[str, Any] | None, float | None]:
    """interception.json's credited request and when it was blocked; (None, None) when none."""
    try:
        view: InterceptionView = read_interception(data / "interception.json")
    except RecordError:
        return None, None
    if not view.intercepted or view.request is None:
        return None, None
    return view.request, number(view.intercepted_at)


def _from_interception(request: dict[str, Any], at: float) -> HarEntry | None:
    """The credited request as interception.json holds it, for a log that lacks its line (None
    when it holds no URL and method)."""
    keys = {k: request[k] for k in ("url", "method", "headers", "body") if k in request}
    try:
        line = ReferenceLogLine.model_validate(
            {**keys, "timestamp": at, "query_params": request.get("params") or {},
             "resource_type": ""}
        )  # fmt: skip
    except ValidationError:
        return None
    entry = entry_of(line)
    entry.clawbench.action = TrafficAction.BLOCKED
    entry.clawbench.matched = entry.clawbench.credited = True
    entry.clawbench.body_unverified = request.get("body_unverified") is True
    entry.response.comment = BLOCKED_NOTE
    entry.comment = "from data/interception.json (no line of data/requests.jsonl is this request)"
    return entry


def _read(
    source: Path, mark: LogMark
) -> tuple[list[tuple[float, int, Line]], dict[str, ResponseLine]]:
    """requests.jsonl's request lines (ours and the reference's) with their sizes, in time
    order (lines of one time in the log's order), and the answer lines by the id of the
    request they answer; what cannot be read is counted in the mark."""
    log = RequestLog(source, reference=True)
    timed: list[tuple[float, int, Line]] = []
    answers: dict[str, ResponseLine] = {}
    try:
        for line in log:
            if not math.isfinite(line.timestamp) or abs(line.timestamp) > 1e11:
                mark.lines_unreadable += 1
                continue
            if isinstance(line, ResponseLine):
                answers.setdefault(line.id, line)
                continue
            timed.append((line.timestamp, log.last_size, line))
    except FileNotFoundError:
        mark.source = f"none: no data/{REQUESTS_FILE} (the proxy saw no request, or never ran)"
    except OSError as e:
        mark.source = f"data/{REQUESTS_FILE}: unreadable: {e.strerror or e}"
    mark.lines_unreadable += log.unread
    mark.lines = len(timed) + mark.lines_unreadable
    timed.sort(key=lambda t: t[0])
    return timed, answers


def build_har(run_dir: Path) -> Har:
    """The HAR of a run directory (ours or the reference's); never raises for a bad line."""
    data = run_dir / "data"
    mark = LogMark(run=run_dir.name, source=f"data/{REQUESTS_FILE}", built_at=started_now())
    timed, answers = _read(data / REQUESTS_FILE, mark)
    credited, at = _credited(data)
    entries = _entries(timed, answers, credited, mark)
    if credited is not None and not any(e.clawbench.credited for e in entries):
        last = timed[-1][0] if timed else 0.0
        entry = _from_interception(credited, at if at is not None else last)
        if entry is not None:
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
    timed: list[tuple[float, int, Line]],
    answers: dict[str, ResponseLine],
    credited: dict[str, Any] | None,
    mark: LogMark,
) -> list[HarEntry]:
    entries: list[HarEntry] = []
    sockets: dict[str, HarEntry] = {}
    budget = _Budget()
    first_block = True
    for stamp, size, line in timed:
        message = line.websocket_message if isinstance(line, RequestLogEntry) else None
        if message is not None and (opening := sockets.get(line.url)):
            sent = WebSocketMessage(
                time=stamp, opcode=1 if message == "text" else 2, data=scalar(line.body)
            )
            if budget.take_bytes(len(sent.model_dump_json()) + 1):
                opening.webSocketMessages.append(sent)
            else:
                mark.entries_left_out += 1
            continue
        entry = entry_of(line)
        line_id = line.id if isinstance(line, RequestLogEntry | ShortLine) else None
        if line_id is not None and line_id in answers:
            answer(entry, answers[line_id])
        if _is_credited(line, credited) and first_block:
            entry.clawbench.action = TrafficAction.BLOCKED
            entry.clawbench.matched = True
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
        if isinstance(line, RequestLogEntry) and line.websocket:
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


__all__ = ["HAR_CAP_BYTES", "build_har", "write_traffic_har"]
