"""requests.jsonl's one writer, under a byte budget, and data/requests-summary.json: what it did.

The agent decides how many requests it sends and how large each is; the proxy's records must not
grow with that (docs/security.md). The writer appends full lines until the file holds
FULL_SHARE of its budget, then each request's essentials (records.requestlog.shorten) until the
budget is reached, then writes nothing more and counts what it left out. The summary says so:
written when the log opens, as soon as the full-line part is used up, then at most once a
second while lines are shortened or left out, and when the log closes.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from proxy_addon.records.atomic import write_json_atomic
from proxy_addon.records.jsonfile import RecordError, read_optional
from proxy_addon.records.requestlog import (
    REQUESTS_FILE,
    LogLine,
    dump_line,
    is_request,
    shorten,
)

LOG_BUDGET = 240 * 1024 * 1024
"""clawbench_log_budget's default: bytes requests.jsonl may take."""
FULL_SHARE = 0.75
"""The part of the budget for full lines; the rest takes short ones."""
SUMMARY_FILE = "requests-summary.json"
"""Its name in the run's data dir."""
_SUMMARY_EVERY_S = 1.0


class RequestLogSummary(BaseModel):
    """data/requests-summary.json: how much of requests.jsonl's budget the run used."""

    model_config = ConfigDict(extra="forbid")

    budget_bytes: int = Field(ge=0)
    bytes_written: int = Field(default=0, ge=0)
    lines_shortened: int = Field(default=0, ge=0)
    """Requests written as a ShortLine: the full-line part of the budget was used up."""
    requests_not_logged: int = Field(default=0, ge=0)
    """Requests past the budget: counted here, in no line."""
    responses_not_logged: int = Field(default=0, ge=0)
    lines_not_written: int = Field(default=0, ge=0)
    """Lines a write error lost (a full disk); their requests were killed, never forwarded."""
    last_error: str | None = None

    @property
    def budget_reached(self) -> bool:
        """Whether the agent's traffic used up the full-line part of the budget."""
        return bool(self.lines_shortened or self.requests_not_logged or self.responses_not_logged)


def read_summary(path: str | os.PathLike[str]) -> RequestLogSummary | None:
    """data/requests-summary.json, or None when there is none (no proxy ran, or an older one)."""
    return read_optional(path, RequestLogSummary)


class RequestLogWriter:
    """The one writer of requests.jsonl: each line one write(2), unbuffered, so a line that
    cannot be written raises before the request it describes goes on; past the budget a line
    is counted instead of written (the request goes on: the budget bounds the records, not
    the agent)."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self.summary = RequestLogSummary(budget_bytes=LOG_BUDGET)
        """What was left out so far; bytes_written is brought up to date when it is written."""
        self._fd: int | None = None
        self._written = 0
        self._full = 0
        self._summary_due = 0.0
        self._reached = False

    def open(self, data: Path, budget: int = LOG_BUDGET) -> None:
        """Append to data/requests.jsonl from now on, budget bytes in all (what an earlier
        proxy wrote there counts); OSError if it cannot be opened."""
        path = data / REQUESTS_FILE
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.close()
        self.path, self._fd = path, fd
        try:
            earlier = read_summary(data / SUMMARY_FILE)
        except RecordError:
            earlier = None  # ours alone to write: start the count over
        self.summary = (earlier or RequestLogSummary(budget_bytes=0)).model_copy(
            update={"budget_bytes": budget}
        )
        self._written = os.fstat(fd).st_size
        self._full = int(budget * FULL_SHARE)
        self._reached = self.summary.budget_reached
        self._write_summary()

    def append(self, line: LogLine) -> None:
        """One line, shortened or only counted past the budget's bounds; OSError when it
        cannot be written (or the log is not open)."""
        if self._fd is None:
            raise OSError(f"clawbench: {self.path or REQUESTS_FILE} is not open")
        data = dump_line(line)
        if self._written + len(data) <= self._full:  # nearly every line of nearly every run
            self._write(data)
            return
        summary = self.summary
        if is_request(line):
            line = shorten(line)
            data = dump_line(line)
            summary.lines_shortened += 1
        if self._written + len(data) <= summary.budget_bytes:
            self._write(data)
        elif is_request(line):
            summary.requests_not_logged += 1
        else:
            summary.responses_not_logged += 1
        if summary.budget_reached and (not self._reached or time.monotonic() >= self._summary_due):
            self._reached = True  # said at once the first time, then once a second at most
            self._write_summary()

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        try:
            self._written += os.write(self._fd, data)
        except OSError as e:
            self.summary.lines_not_written += 1
            self.summary.last_error = str(e)[:500]
            self._write_summary()
            raise

    def _write_summary(self) -> None:
        if self.path is None:
            return
        self._summary_due = time.monotonic() + _SUMMARY_EVERY_S
        self.summary.bytes_written = self._written
        with contextlib.suppress(OSError):  # a count: the next change or close() writes it again
            write_json_atomic(self.path.with_name(SUMMARY_FILE), self.summary, durable=False)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
            self._write_summary()


__all__ = [
    "FULL_SHARE",
    "LOG_BUDGET",
    "SUMMARY_FILE",
    "RequestLogSummary",
    "RequestLogWriter",
    "read_summary",
]
