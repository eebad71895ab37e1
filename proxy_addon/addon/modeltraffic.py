"""The agent's model calls through the proxy: claimed, streamed, logged compactly, metered.

Requests to a host of clawbench_model_hosts are claimed in requestheaders (flow.metadata marks
them; the interceptor then neither matches nor logs them) and delivered to that host. Their
replies are streamed to the agent chunk by chunk through a UsageTee, and once a call ends the
addon appends one ModelCallLine to requests.jsonl (through the interceptor's writer) and
rewrites data/usage.json (AgentUsage).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mitmproxy import ctx, exceptions, http

from proxy_addon.addon.modelhosts import (
    HELP,
    OPTION,
    ModelHost,
    is_model_host,
    parse_model_hosts,
    request_host,
)
from proxy_addon.addon.requestlog import printable
from proxy_addon.addon.usage import UsageReader, UsageTee
from proxy_addon.matching.bodies import Unevaluable, decode_content
from proxy_addon.matching.urls import url_origin, url_path
from proxy_addon.records.atomic import write_json_atomic
from proxy_addon.records.interception import RecordError
from proxy_addon.records.requestwriter import RequestLogWriter
from proxy_addon.records.usage import (
    USAGE_FILE,
    AgentUsage,
    ModelCallLine,
    add_call,
    read_usage,
)

logger = logging.getLogger("clawbench")

MODEL_CALL = "clawbench_model_call"
"""flow.metadata key set on the agent's model calls."""


def is_model_call(flow: http.HTTPFlow) -> bool:
    """Whether the flow is a model call claimed by ClawbenchModelTraffic (never a commit)."""
    return MODEL_CALL in flow.metadata


_REQUEST_MODEL_LIMIT = 16 * 1024 * 1024


def _requested_model(request: http.Request) -> str | None:
    # Only when the reply names no model (an error reply): the request body's "model", decoded
    # within a bound (the agent sends it; a decompression bomb must not take the proxy down).
    raw = request.raw_content
    if not raw or len(raw) > _REQUEST_MODEL_LIMIT:
        return None
    try:
        body = decode_content(raw, request.headers.get("content-encoding"), _REQUEST_MODEL_LIMIT)
    except Unevaluable:
        return None
    reader = UsageReader()
    reader.see_json(body)
    return reader.model


class ModelCalls:
    """The per-call hooks: claim a request to a model host, tee its reply, record it once it ends.

    A sub-addon of ClawbenchModelTraffic, registered once model hosts are set: mitmproxy calls
    every hook an addon has on every request, so a run without model hosts pays nothing here.
    """

    def __init__(self, record: Callable[[http.HTTPFlow, UsageTee | None], None]) -> None:
        self.hosts: frozenset[ModelHost] = frozenset()
        self.record = record
        self._tees: dict[str, UsageTee] = {}

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if not self.hosts:
            return
        req = flow.request
        named = request_host(req.scheme, req.host_header, req.host, req.port)
        if named is None or not is_model_host(self.hosts, *named):
            return
        flow.metadata[MODEL_CALL] = True
        sent = req.host_header
        # Delivered where its name leads, never to an address the agent chose for it.
        req.host, req.port = named[0].strip("[]"), named[1]
        req.host_header = sent

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if not is_model_call(flow) or flow.response is None:
            return
        headers = flow.response.headers
        tee = UsageTee(headers.get("content-type"), headers.get("content-encoding"))
        self._tees[flow.id] = tee
        flow.response.stream = tee  # the agent gets every chunk as it comes (SSE unbuffered)

    def response(self, flow: http.HTTPFlow) -> None:
        if is_model_call(flow):
            self._finish(flow)

    def error(self, flow: http.HTTPFlow) -> None:
        if is_model_call(flow):
            self._finish(flow)

    def _finish(self, flow: http.HTTPFlow) -> None:
        if flow.metadata[MODEL_CALL] == "recorded":
            return  # an error after the reply was recorded
        flow.metadata[MODEL_CALL] = "recorded"
        tee = self._tees.pop(flow.id, None)
        resp = flow.response
        if tee is None and resp is not None:  # not streamed (no body, or set by an addon)
            tee = UsageTee(resp.headers.get("content-type"), resp.headers.get("content-encoding"))
        if tee is not None and resp is not None and not tee.ended and resp.raw_content:
            tee(resp.raw_content)  # a body mitmproxy read whole (e.g. before our hook ran)
        if tee is not None and not tee.ended and flow.error is None:
            tee(b"")
        self.record(flow, tee)


class ClawbenchModelTraffic:
    """Thin shell: the option, usage.json and the model-call lines; ModelCalls has the hooks."""

    def __init__(self, log: RequestLogWriter | None = None) -> None:
        self.calls = ModelCalls(self._record)
        self.addons: list[ModelCalls] = []
        """ModelCalls once model hosts are set (mitmproxy's sub-addons, read on every event)."""
        self.log = log or RequestLogWriter()
        """requests.jsonl's one writer, opened by the interceptor when it is armed."""
        self.data_dir: Path | None = None
        self.usage = AgentUsage()
        self._running = False
        self._failed: str | None = None

    def load(self, loader: Any) -> None:
        loader.add_option(OPTION, Sequence[str], [], HELP)

    def configure(self, updated: set[str]) -> None:
        try:
            self._configure(updated)
        except exceptions.OptionsError as e:
            if self._running:
                raise  # a live change is refused and the old setting stays
            # At startup an error line makes mitmdump exit before any server listens.
            self._failed = str(e)
            logger.error(self._failed)

    def _configure(self, updated: set[str]) -> None:
        if OPTION in updated:
            try:
                self.calls.hosts = parse_model_hosts(ctx.options.clawbench_model_hosts)
            except ValueError as e:
                raise exceptions.OptionsError(f"clawbench: {e}") from e
            if self.calls.hosts:  # kept once registered: a call in flight still ends recorded
                self.addons = [self.calls]
        if "clawbench_data" in updated and ctx.options.clawbench_data:
            data = Path(ctx.options.clawbench_data)
            try:
                earlier = read_usage(data / USAGE_FILE)
            except RecordError as e:
                raise exceptions.OptionsError(
                    f"clawbench: {e}; move it away to start the usage count over"
                ) from e
            self.data_dir, self.usage = data, earlier or AgentUsage()

    def running(self) -> None:
        self._running = True
        if self._failed:
            ctx.master.shutdown()
            return
        if self.calls.hosts and self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.data_dir / USAGE_FILE, self.usage, durable=False)

    def _record(self, flow: http.HTTPFlow, tee: UsageTee | None) -> None:
        """A finished call: its requests.jsonl line, and usage.json rewritten."""
        line = model_call_line(flow, tee)
        if line.model is None:
            line = line.model_copy(update={"model": _requested_model(flow.request)})
        self.usage = add_call(self.usage, line.model, line.usage)
        if self.data_dir is None:
            return
        try:
            self.log.append(line)
            # Not fsynced: it is rewritten whole after every call, and read after the proxy stops.
            write_json_atomic(self.data_dir / USAGE_FILE, self.usage, durable=False)
        except OSError as e:
            logger.error("clawbench: model call not recorded in %s: %s", self.data_dir, e)


def model_call_line(flow: http.HTTPFlow, tee: UsageTee | None) -> ModelCallLine:
    """The compact requests.jsonl line of a finished (or failed) model call."""
    req, resp = flow.request, flow.response
    named = request_host(req.scheme, req.host_header, req.host, req.port)
    origin = url_origin(req.scheme, *(named or (req.host, req.port)))
    path = printable(url_path(req.path).partition("?")[0])
    start = req.timestamp_start
    end = (resp.timestamp_end if resp else None) or time.time()
    errors = [flow.error.msg if flow.error else None, tee.error if tee else None]
    return ModelCallLine(
        timestamp=start,
        url=printable(origin) + path,
        host=printable(origin.partition("://")[2]),
        path=path,
        method=printable(req.method),
        status=resp.status_code if resp else None,
        request_size=len(req.raw_content or b""),
        response_size=tee.wire_bytes if tee else 0,
        duration_s=round(max(end - start, 0.0), 4),
        first_byte_s=round(resp.timestamp_start - start, 4) if resp else None,
        streamed=bool(tee and tee.event_stream),
        model=tee.reader.model if tee else None,
        usage=tee.reader.tokens if tee else None,
        error="; ".join(e for e in errors if e)[:500] or None,
    )


__all__ = ["MODEL_CALL", "ClawbenchModelTraffic", "ModelCalls", "is_model_call", "model_call_line"]
