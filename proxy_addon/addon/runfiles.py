"""The addon's files in a run's data dir: requests.jsonl (through its one writer, shared with the
model-call lines), interception.json (the credited match, then blocked_count), .stop-requested
and .proxy-ready (docs/formats.md, "The run directory").

Recording a block is one step: interception.json, then .stop-requested. The agent can use up the
proxy's file descriptors (every connection it opens holds one), so a descriptor is kept in
reserve and given back for the step when the table is full; the disk can fill (the host's is
shared), so space is kept too (data/.reserve, records.reserve) and given back when a write of
the step finds it full. A step that still fails raises RecordFailed, and the addon then stops
the proxy so the run ends `proxy_failed`, never scored as if nothing had been committed.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
from pathlib import Path
from typing import Any

from mitmproxy import exceptions

from proxy_addon.addon.requestlog import SeenRequest, interception_record
from proxy_addon.matching.matcher import MatchResult
from proxy_addon.records.atomic import write_json_atomic
from proxy_addon.records.interception import Interception, ProxyReady
from proxy_addon.records.requestlog import LogLine
from proxy_addon.records.requestwriter import RequestLogWriter
from proxy_addon.records.reserve import (
    RESERVE_FILE,
    release,
    reserve_space,
    write_with_reserve,
)

__all__ = ["RecordFailed", "RunFiles", "earlier_match", "listen_specs"]

logger = logging.getLogger("clawbench")


class RecordFailed(OSError):
    """A block could not be recorded in full (interception.json and .stop-requested)."""


def earlier_match(path: Path, schema: dict[str, Any]) -> Interception | None:
    """The first match an earlier addon process on this data dir recorded (a proxy restart):
    it stays the credited one, as the reference never overwrites interception.json. A record
    made under another eval_schema (the data dir reused for another task) is not this run's."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise exceptions.OptionsError(f"clawbench: cannot read {path}: {e}") from e
    try:
        data = json.loads(raw)
        if not (isinstance(data, dict) and data.get("intercepted") is True):
            return None  # the runner's not-intercepted record: a match replaces it
        earlier = Interception.model_validate(data)
    except ValueError as e:  # not JSON, or not an intercepted record we can keep counting on
        raise exceptions.OptionsError(
            f"clawbench: {path} holds an interception record that cannot be read ({e}); "
            "it would be the credited match, so move it away to start over"
        ) from e
    if earlier.schema_ != schema:
        logger.warning("clawbench: %s was recorded for another eval_schema; replacing it", path)
        return None
    return earlier


def listen_specs(server: Any) -> list[str]:
    """`mode@host:port` of every listener of mitmproxy's proxyserver addon, for .proxy-ready."""
    listen = []
    for inst in server.servers if server else []:
        for addr in inst.listen_addrs:
            host = f"[{addr[0]}]" if ":" in addr[0] else addr[0]
            listen.append(f"{inst.mode.type_name}@{host}:{addr[1]}")
    return listen


def reserve_size(max_body: int) -> int:
    """Space for recording a block: interception.json (its body whole, up to max_body) twice
    over (the new one is written before the old is replaced), and the rest of the step."""
    return 2 * max_body + (1 << 20)


class RunFiles:
    """One data dir, opened for a task's eval_schema: requests.jsonl through log (opened here
    with its byte budget, and left open for whoever opens it next), reserve bytes kept back for
    recording a block; OptionsError if it cannot be written."""

    def __init__(
        self,
        data: Path,
        schema: dict[str, Any],
        log: RequestLogWriter,
        *,
        log_budget: int,
        reserve: int,
    ) -> None:
        self.data = data
        self.schema = schema
        self.interception = earlier_match(data / "interception.json", schema)
        self.space = data / RESERVE_FILE
        try:
            data.mkdir(parents=True, exist_ok=True)
            reserve_space(self.space, reserve)
            log.open(data, log_budget)
        except OSError as e:
            release(self.space)
            raise exceptions.OptionsError(f"clawbench: data dir {data} not writable: {e}") from e
        self.log = log
        self._reserve: int | None = os.open(os.devnull, os.O_RDONLY)
        if self.interception is not None:
            logger.info(
                "clawbench: %s already credits %s %s; later matches only raise blocked_count",
                data / "interception.json",
                self.interception.request.method,
                self.interception.request.url[:200],
            )

    def append(self, line: LogLine) -> None:
        """One line to requests.jsonl, unbuffered: a line that cannot be written raises."""
        self.log.append(line)

    def record(
        self, seen: SeenRequest, body: Any, result: MatchResult, host_unresolved: bool = False
    ) -> None:
        """A blocked request: the first is credited, later ones raise blocked_count; then stop.
        RecordFailed when interception.json or .stop-requested could not be written."""
        if self.interception is None:
            self.interception = interception_record(
                seen, body, result, self.schema, host_unresolved
            )
            logger.info("clawbench: blocked and recorded %s %s", seen.method, seen.url[:200])
        else:
            self.interception.blocked_count += 1
            count = self.interception.blocked_count
            logger.info("clawbench: blocked again (%d) %s", count, seen.url[:200])
        try:
            self._record_and_stop()
        except OSError as e:
            if e.errno not in (errno.EMFILE, errno.ENFILE) or self._reserve is None:
                raise RecordFailed(e.errno, f"the block was not recorded: {e}") from e
            os.close(self._reserve)  # the descriptor table is full: use the one kept back
            self._reserve = None
            try:
                self._record_and_stop()
            except OSError as again:
                raise RecordFailed(again.errno, f"the block was not recorded: {again}") from e
            finally:
                with contextlib.suppress(OSError):
                    self._reserve = os.open(os.devnull, os.O_RDONLY)

    def _record_and_stop(self) -> None:
        def record() -> None:
            write_json_atomic(self.data / "interception.json", self.interception)

        write_with_reserve(record, self.space)
        write_with_reserve((self.data / ".stop-requested").touch, self.space)

    def ready(self, ready: ProxyReady) -> None:
        """.proxy-ready, once the task is loaded and every listener is up."""
        write_json_atomic(self.data / ".proxy-ready", ready)

    def close(self, *, keep_space: bool = False) -> None:
        """Give back the reserve descriptor and (unless the next RunFiles of the same data dir
        holds it now) the space; the log is its writer's to close."""
        if self._reserve is not None:
            os.close(self._reserve)
            self._reserve = None
        if not keep_space:
            release(self.space)
