"""ClawBench interception addon: block and record the request that commits an agent's task.

Usage:
    mitmdump -s proxy_addon/clawbench.py --set clawbench_task=TASK.json --set clawbench_data=DIR

Every request is matched against the task's eval_schema with the shared matcher and logged to
DIR/requests.jsonl. The first match is blocked before any byte reaches the upstream, recorded in
DIR/interception.json (atomically) and DIR/.stop-requested is touched; later matches are blocked
and counted; a block that cannot be recorded stops the proxy (the run ends proxy_failed).
DIR/.proxy-ready is written once the task is loaded and the proxy listens.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

try:
    import proxy_addon  # noqa: F401  (installed, or run from a checkout below)
except ImportError:  # mitmdump puts only this file's directory on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mitmproxy import ctx, exceptions, http, tcp, udp
from mitmproxy.proxy import server_hooks
from mitmproxy.version import VERSION as MITMPROXY_VERSION

from proxy_addon.addon.destination import Destinations, Placement, Resolver
from proxy_addon.addon.evaluation import Evaluation, evaluate, evaluate_unread
from proxy_addon.addon.modelhosts import OPTION as MODEL_HOSTS
from proxy_addon.addon.modelhosts import parse_model_hosts
from proxy_addon.addon.modeltraffic import ClawbenchModelTraffic, is_model_call
from proxy_addon.addon.names import Addressing, addressing
from proxy_addon.addon.options import (
    Settings,
    abort_connection,
    block_response,
    declare_options,
    keep_unseen_off,
    read_settings,
    resolve_task,
    route,
    unparsable_deferred,
)
from proxy_addon.addon.requestlog import log_line, response_line, safe_reasons, websocket_line
from proxy_addon.addon.runfiles import RecordFailed, RunFiles, listen_specs, reserve_size
from proxy_addon.matching.matcher import Matcher
from proxy_addon.records.interception import ProxyReady
from proxy_addon.records.requestwriter import RequestLogWriter

logger = logging.getLogger("clawbench")

_DONE = "clawbench_done"
"""flow.metadata: the request's line is written (then _ANSWERED once its answer's is too)."""
_ANSWERED = "answered"
_URL = "clawbench_url"


class ClawbenchInterceptor:
    """Thin stateful shell around the pure matcher: options, files, blocking."""

    def __init__(self, log: RequestLogWriter | None = None) -> None:
        self.log = log or RequestLogWriter()
        """requests.jsonl's writer, opened on the data dir when armed (shared with the
        model-call lines)."""
        self.matcher: Matcher | None = None
        self.files: RunFiles | None = None
        self.task_file: Path | None = None
        self.task_sha256 = ""
        self.settings = Settings()
        self.resolver = Resolver()
        self.destinations: Destinations | None = None
        self._running = False
        self._failures: list[str] = []

    def load(self, loader: Any) -> None:
        declare_options(loader)
        # mitmproxy applies `--set` values of a script's options after load(); one that does not
        # parse (clawbench_block_status=abc) makes it drop the whole script without a word and
        # run as a plain proxy. Catch those here so mitmdump exits instead.
        for problem in unparsable_deferred(loader.master.options):
            self._fail(problem)

    def _fail(self, message: str) -> None:
        # At startup one clear line is enough: mitmdump's errorcheck exits 1 on it before any
        # server listens (raising would print a traceback first). Later problems are often
        # consequences of the first (a dropped option is then missing), so only it is shown.
        if not self._failures:
            logger.error(message)
        elif message not in self._failures:
            logger.debug(message)
        self._failures.append(message)

    @property
    def fatal(self) -> str | None:
        """The first startup problem, if any: the addon then refuses every request and exits."""
        return self._failures[0] if self._failures else None

    def configure(self, updated: set[str]) -> None:
        try:
            keep_unseen_off(ctx.options, updated, armed=self.matcher is not None)
            settings = read_settings(ctx.options)
            if "clawbench_task" in updated or "clawbench_data" in updated:
                self._arm(ctx.options.clawbench_task, ctx.options.clawbench_data, settings)
            self.settings = settings
            if self.matcher is not None:
                self.destinations = Destinations(
                    settings.routes,
                    settings.allow,
                    self.matcher.hosts,
                    self.resolver,
                    model_hosts=parse_model_hosts(getattr(ctx.options, MODEL_HOSTS, [])),
                )
        except exceptions.OptionsError as e:
            if self._running:
                raise  # a live change is refused and the armed config stays
            self._fail(str(e))

    def _arm(self, task_opt: str, data_opt: str, settings: Settings) -> None:
        path, task, matcher = resolve_task(task_opt, data_opt)
        schema = task.eval_schema.model_dump(mode="json", exclude_none=True)
        files = RunFiles(
            Path(data_opt),
            schema,
            self.log,
            log_budget=settings.log_budget,
            reserve=reserve_size(settings.max_body),
        )
        if self.files is not None:
            self.files.close(keep_space=self.files.space == files.space)
        self.matcher, self.files, self.task_file = matcher, files, path
        self.task_sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
        what = "log only" if matcher.log_only else f"{schema['method']} {schema['url_pattern']}"
        logger.info("clawbench: armed with %s (%s)", path, what)

    def running(self) -> None:
        self._running = True
        unknown = sorted(k for k in ctx.options.deferred if k.startswith("clawbench"))
        if unknown:
            self._fail(f"clawbench: unknown option(s) {', '.join(unknown)}; see --options")
        if self.fatal or self.files is None or self.matcher is None or self.task_file is None:
            self._fail(self.fatal or "clawbench: not armed; refusing to run")
            ctx.master.shutdown()
            return
        listen = listen_specs(ctx.master.addons.get("proxyserver"))
        self.files.ready(
            ProxyReady.now(
                listen, self.task_file, self.task_sha256, self.matcher.log_only, MITMPROXY_VERSION
            )
        )

    def done(self) -> None:
        if self.files is not None:
            self.files.close()
        self.log.close()

    # -- per request ---------------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        # Synchronous unless a name must be looked up first: then mitmproxy awaits the rest.
        try:
            if self.matcher is None or self.destinations is None or self._failures:
                flow.kill()  # unarmed or about to exit: nothing passes unseen
            elif is_model_call(flow):  # the agent's LLM call: never a commit, sent to its host
                if target := self.destinations.route_for(flow.request.host):
                    route(flow.request, target)
            elif flow.response is None:
                sent = addressing(flow)
                placed = self.destinations.place(sent)
                if placed is None:  # names to look up first
                    return self._request_later(flow, sent)
                self._request(flow, placed)
        except Exception:
            self._fail_closed(flow)
        return None

    async def _request_later(self, flow: http.HTTPFlow, sent: Addressing) -> None:
        try:
            assert self.destinations is not None
            self._request(flow, await self.destinations.settle(sent))
        except Exception:
            self._fail_closed(flow)

    def _fail_closed(self, flow: http.HTTPFlow) -> None:
        # mitmproxy logs a hook's exception and forwards the flow: a bug or a full disk
        # here would let the commit request reach the live site. Fail closed instead.
        logger.exception("clawbench: request not evaluated, so it is killed")
        if flow.killable:
            flow.kill()

    def _request(self, flow: http.HTTPFlow, place: Placement) -> None:
        assert self.matcher is not None
        found = evaluate(self.matcher, flow.request, place.urls, self.settings.max_body)
        # A commit to a name that does not resolve is blocked and credited: it could go nowhere,
        # and a block needs no connection. Any other refusal stands.
        unresolved_commit = place.unresolved and found.result.match
        if place.refused and not unresolved_commit:
            flow.kill()
            logger.warning("clawbench: refused %s: %s", found.seen.url[:200], place.refused)
            self._log(flow, found, place.refused)
            return
        if place.route:  # a match too: were the block to fail, the route's target sees it
            route(flow.request, place.route)
        if found.result.match:
            self._block(flow)
            self._record(flow, found, host_unresolved=unresolved_commit)
        self._log(flow, found)

    def response(self, flow: http.HTTPFlow) -> None:
        if _DONE in flow.metadata:  # logged: the site's answer, or the proxy's block response
            self._answered(flow)

    def error(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        # A logged request that got no answer: killed by the proxy (blocked, refused) or failed
        # on its way. Otherwise the request hook never ran (a body over body_size_limit got a
        # 413); if its head matched, it is the commit request and must be credited, body
        # unverified. (Checked here rather than in a requestheaders hook: one hook less on
        # every request.) Either way it was a request the agent sent: it gets its lines.
        if _DONE in flow.metadata:
            self._answered(flow)
            return None
        if is_model_call(flow) or self.destinations is None:
            return None
        if flow.error is None or "body_size_limit" not in flow.error.msg:
            return None
        return self._unread(flow, addressing(flow))

    async def _unread(self, flow: http.HTTPFlow, sent: Addressing) -> None:
        assert self.matcher is not None and self.destinations is not None
        place = await self.destinations.settle(sent)
        found = evaluate_unread(self.matcher, flow.request, place.urls)
        if found.result.match and not place.refused:
            self._record(flow, found)
        self._log(flow, found, place.refused)
        self._answered(flow)

    def websocket_message(self, flow: http.HTTPFlow) -> None:
        assert flow.websocket is not None
        message = flow.websocket.messages[-1]
        if not message.from_client or self.files is None:
            return
        try:
            mode = flow.client_conn.proxy_mode
            url = flow.metadata.get(_URL, "")
            self.files.append(websocket_line(flow, message, url, mode.type_name if mode else None))
        except Exception:
            logger.exception("clawbench: WebSocket message not logged, so it is dropped")
            message.drop()
            flow.kill()

    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        # The request hook refused private destinations already; this holds for every
        # connection the proxy opens, whatever asked for it.
        address = data.server.address
        why = self.destinations.connection_refusal(address) if self.destinations else None
        if why:
            data.server.error = f"clawbench: refused: {why}"
            logger.warning("clawbench: refused a connection: %s", why)

    def server_connected(self, data: server_hooks.ServerConnectionHookData) -> None:
        # A name checked in the request hook may resolve elsewhere a moment later (DNS
        # rebinding): the address actually connected to is checked before any byte is sent.
        address, peer = data.server.address, data.server.peername
        why = self.destinations.connection_refusal(address, peer) if self.destinations else None
        if why:
            logger.warning("clawbench: closed a connection to %s: %s", address, why)
            abort_connection(data)

    def tcp_start(self, flow: tcp.TCPFlow) -> None:
        self._refuse_raw(flow)

    def udp_start(self, flow: udp.UDPFlow) -> None:
        self._refuse_raw(flow)

    def _refuse_raw(self, flow: tcp.TCPFlow | udp.UDPFlow) -> None:
        # Bytes mitmproxy cannot parse as HTTP (e.g. inside a CONNECT tunnel) would be relayed
        # unseen; an error on the server connection before it opens stops that.
        flow.server_conn.error = "clawbench: raw TCP/UDP is not inspected, so it is refused"
        logger.warning(
            "clawbench: refused a raw %s stream to %s", flow.type, flow.server_conn.address
        )

    # -- effects ---------------------------------------------------------------------------------

    def _block(self, flow: http.HTTPFlow) -> None:
        if self.settings.block_mode != "respond":
            flow.kill()
            return
        origin = flow.request.headers.get("origin")
        flow.response = block_response(self.settings.block_status, self.settings.block_body, origin)

    def _record(
        self, flow: http.HTTPFlow, found: Evaluation, host_unresolved: bool = False
    ) -> None:
        assert self.files is not None
        flow.metadata[_DONE] = True
        try:
            self.files.record(found.seen, found.body, found.result, host_unresolved)
        except RecordFailed as e:
            # Blocked but not recorded: were the agent to run on, the run would be scored as if
            # it never committed. Stopping the proxy ends it proxy_failed (an infra failure).
            self._fail(f"clawbench: {e}; stopping the proxy (data dir {self.files.data})")
            ctx.master.shutdown()

    def _log(self, flow: http.HTTPFlow, found: Evaluation, refused: str | None = None) -> None:
        assert self.files is not None
        flow.metadata[_DONE] = True
        flow.metadata[_URL] = found.seen.url
        mode = flow.client_conn.proxy_mode
        line = log_line(
            found.seen,
            found.log_body,
            found.result,
            safe_reasons(found.result, found.url, found.seen.url),
            timestamp=flow.request.timestamp_start,
            mode=mode.type_name if mode else None,
            flow_id=flow.id,
            refused=refused,
        )
        self.files.append(line)

    def _answered(self, flow: http.HTTPFlow) -> None:
        # One answer line per logged request (an error may follow its response). The answer is
        # already on its way: a line that cannot be written is only logged.
        if self.files is None or flow.metadata.get(_DONE) == _ANSWERED:
            return
        flow.metadata[_DONE] = _ANSWERED
        try:
            self.files.append(response_line(flow))
        except Exception:
            logger.exception("clawbench: the answer to %s was not logged", flow.request.url[:200])


_log = RequestLogWriter()
addons = [ClawbenchModelTraffic(_log), ClawbenchInterceptor(_log)]  # usage.json before .proxy-ready
