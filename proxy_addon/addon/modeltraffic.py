"""The agent's model calls through the proxy: claimed, streamed, logged compactly, metered.

Requests to a host of clawbench_model_hosts are claimed in requestheaders (flow.metadata marks
them; the interceptor then neither matches nor logs them) and delivered to that host. Their
replies are streamed to the agent chunk by chunk through a UsageTee, and once a call ends the
addon appends one ModelCallLine to requests.jsonl (through the interceptor's writer) and
rewrites data/usage.json (AgentUsage).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mitmproxy import ctx, exceptions, http

from proxy_addon.addon.modelapi import (
    ENDPOINT_OPTION,
    KEY_OPTION,
    NAME_OPTION,
    OPTIONS_HELP,
    OwnCalls,
    header_shape,
    looks_like_model_request,
)
from proxy_addon.addon.modelcall import model_call_line, request_body
from proxy_addon.addon.modelhosts import (
    HELP,
    OPTION,
    ModelHost,
    is_model_host,
    parse_model_hosts,
    request_host,
)
from proxy_addon.addon.names import address_literal
from proxy_addon.addon.requestlog import printable
from proxy_addon.addon.usage import UsageTee
from proxy_addon.records.atomic import write_json_atomic
from proxy_addon.records.interception import RecordError
from proxy_addon.records.modelapi import CallOutcome, FailedCall, ModelApiRecord
from proxy_addon.records.requestwriter import RequestLogWriter
from proxy_addon.records.usage import (
    USAGE_FILE,
    AgentUsage,
    ModelCallLine,
    add_call,
    add_unmetered,
    read_usage,
)

logger = logging.getLogger("clawbench")

MODEL_CALL = "clawbench_model_call"
"""flow.metadata key set on the agent's model calls."""


def is_model_call(flow: http.HTTPFlow) -> bool:
    """Whether the flow is a model call claimed by ClawbenchModelTraffic (never a commit)."""
    return MODEL_CALL in flow.metadata


def _reply_tee(response: http.Response) -> UsageTee:
    """A UsageTee that has read a whole reply mitmproxy buffered."""
    tee = UsageTee(response.headers.get("content-type"), response.headers.get("content-encoding"))
    if response.raw_content:
        tee(response.raw_content)
    tee(b"")
    return tee


class ModelCalls:
    """The per-call hooks: claim a request to a model host, tee its reply, record it once it ends;
    and look at replies to other hosts for the usage of a model API (docs/formats.md).

    A sub-addon of ClawbenchModelTraffic, registered once model hosts are set: mitmproxy calls
    every hook an addon has on every request, so a run without model hosts pays nothing here.
    """

    def __init__(self, owner: ClawbenchModelTraffic) -> None:
        self.hosts: frozenset[ModelHost] = frozenset()
        self.owner = owner
        self.addresses: set[tuple[str, int]] = set()
        """Where model calls went (the connection's peer): a model host's destination."""
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
        elif looks_like_model_request(flow.request.method, flow.request.raw_content):
            self._other(flow)

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
        if (peer := flow.server_conn.peername) is not None:
            self.addresses.add((str(peer[0]), int(peer[1])))
        self.owner.record(flow, tee)

    def _other(self, flow: http.HTTPFlow) -> None:
        """A reply to what looks like an LLM call to a host that is no model host: counted when
        it went where model calls go (another name of the model host), else, when it reports a
        model API's usage, the run's usage is marked incomplete."""
        peer, resp = flow.server_conn.peername, flow.response
        if resp is None or not flow.server_conn.timestamp_tcp_setup:
            return  # blocked or refused by the interceptor: no reply came from anywhere
        tee = _reply_tee(resp)
        if peer is not None and (str(peer[0]), int(peer[1])) in self.addresses:
            self.owner.record(flow, tee, other_name=True)
        elif tee.reader.tokens is not None:
            req = flow.request
            self.owner.unmetered(printable(f"{req.pretty_host}:{req.port}")[:200])


class ClawbenchModelTraffic:
    """Thin shell: the options, usage.json and the model-call lines; ModelCalls has the hooks."""

    def __init__(self, log: RequestLogWriter | None = None) -> None:
        self.calls = ModelCalls(self)
        self.addons: list[ModelCalls] = []
        """ModelCalls once model hosts are set (mitmproxy's sub-addons, read on every event)."""
        self.log = log or RequestLogWriter()
        """requests.jsonl's one writer, opened by the interceptor when it is armed."""
        self.data_dir: Path | None = None
        self.usage = AgentUsage()
        self.own: OwnCalls | None = None
        self._running = False
        self._failed: str | None = None

    def load(self, loader: Any) -> None:
        loader.add_option(OPTION, Sequence[str], [], HELP)
        loader.add_option(ENDPOINT_OPTION, Sequence[str], [], OPTIONS_HELP[ENDPOINT_OPTION])
        loader.add_option(NAME_OPTION, str, "", OPTIONS_HELP[NAME_OPTION])
        loader.add_option(KEY_OPTION, str, "", OPTIONS_HELP[KEY_OPTION])

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
            self.calls.addresses |= {
                (h.strip("[]"), p) for h, p in self.calls.hosts if p and address_literal(h)
            }
        if updated & {ENDPOINT_OPTION, NAME_OPTION, KEY_OPTION}:
            o = ctx.options
            try:
                self.own = OwnCalls.parse(
                    o.clawbench_model_endpoint, o.clawbench_model_name, o.clawbench_model_key
                )
            except ValueError as e:
                raise exceptions.OptionsError(f"clawbench: {e}") from e
        if "clawbench_data" in updated and ctx.options.clawbench_data:
            data = Path(ctx.options.clawbench_data)
            try:
                earlier = read_usage(data / USAGE_FILE)
            except RecordError as e:
                raise exceptions.OptionsError(
                    f"clawbench: {e}; move it away to start the usage count over"
                ) from e
            self.data_dir, self.usage = data, earlier or AgentUsage()
        if self.own is not None and self.usage.api is None:
            self.usage.api = ModelApiRecord(configured=True)

    def running(self) -> None:
        self._running = True
        if self._failed:
            ctx.master.shutdown()
            return
        if self.calls.hosts and self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.data_dir / USAGE_FILE, self.usage, durable=False)

    def record(self, flow: http.HTTPFlow, tee: UsageTee | None, other_name: bool = False) -> None:
        """A finished call: its usage counted and usage.json rewritten; a model host's call also
        gets its requests.jsonl line (one sent under another name already has the
        interceptor's) and, when the run's own calls are known, its place in usage.json's api."""
        body = request_body(flow.request)
        line = model_call_line(flow, tee, body)
        self.usage = add_call(self.usage, line.model, line.usage)
        if other_name:
            self.usage.other_names += 1
        elif self.own is not None and self.usage.api is not None:
            line = self._judge(flow, line, body)
        self._write(None if other_name else line)

    def _judge(self, flow: http.HTTPFlow, line: ModelCallLine, body: bytes | None) -> ModelCallLine:
        """The line with whether the call was the run's own, counted in usage.json's api."""
        assert self.own is not None and self.usage.api is not None
        not_own = self.own.judge(flow.request, line.url, body)
        outcome = line.outcome or CallOutcome.OTHER
        failed = None
        if outcome != CallOutcome.OK:
            failed = FailedCall(
                url=line.url, status=line.status, outcome=outcome, api_error=line.api_error
            )
        shape = header_shape(flow.request)
        self.usage.api.add(own=not_own is None, outcome=outcome, shape=shape, failed=failed)
        return line.model_copy(update={"own": not_own is None, "not_own": not_own})

    def unmetered(self, host: str) -> None:
        """A reply with a model API's usage from host, which is no model host: usage incomplete."""
        self.usage = add_unmetered(self.usage, host)
        self._write(None)

    def _write(self, line: ModelCallLine | None) -> None:
        if self.data_dir is None:
            return
        try:
            if line is not None:
                self.log.append(line)
            # Not fsynced: it is rewritten whole after every call, and read after the proxy stops.
            write_json_atomic(self.data_dir / USAGE_FILE, self.usage, durable=False)
        except OSError as e:
            logger.error("clawbench: model call not recorded in %s: %s", self.data_dir, e)


__all__ = ["MODEL_CALL", "ClawbenchModelTraffic", "ModelCalls", "is_model_call"]
