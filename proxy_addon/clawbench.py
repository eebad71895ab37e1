"""ClawBench interception addon: block and record the request that commits an agent's task.

Usage:
    mitmdump -s proxy_addon/clawbench.py --set clawbench_task=TASK.json --set clawbench_data=DIR

Every request is matched against the task's eval_schema with the shared matcher and logged to
DIR/requests.jsonl. The first match is blocked before any byte reaches the upstream, recorded in
DIR/interception.json (atomically) and DIR/.stop-requested is touched; later matches are blocked
and counted. DIR/.proxy-ready is written once the task is loaded and the proxy listens.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from pathlib import Path
from typing import Any

try:
    import proxy_addon  # noqa: F401  (installed, or run from a checkout below)
except ImportError:  # mitmdump puts only this file's directory on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mitmproxy import ctx, exceptions, http, tcp, udp
from mitmproxy.version import VERSION as MITMPROXY_VERSION

from proxy_addon.addon.evaluation import Evaluation, evaluate, evaluate_unread
from proxy_addon.addon.modeltraffic import ClawbenchModelTraffic, is_model_call
from proxy_addon.addon.options import (
    Settings,
    block_response,
    declare_options,
    keep_lazy,
    read_settings,
    resolve_task,
    unparsable_deferred,
)
from proxy_addon.addon.requestlog import log_line, safe_reasons
from proxy_addon.addon.runfiles import RunFiles, listen_specs
from proxy_addon.matching.matcher import Matcher
from proxy_addon.matching.urls import split_authority
from proxy_addon.records.interception import ProxyReady

logger = logging.getLogger("clawbench")

_DONE = "clawbench_done"


class ClawbenchInterceptor:
    """Thin stateful shell around the pure matcher: options, files, blocking."""

    def __init__(self) -> None:
        self.matcher: Matcher | None = None
        self.files: RunFiles | None = None
        self.task_file: Path | None = None
        self.task_sha256 = ""
        self.settings = Settings()
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
            keep_lazy(ctx.options, updated, armed=self.matcher is not None)
            settings = read_settings(ctx.options)
            if "clawbench_task" in updated or "clawbench_data" in updated:
                self._arm(ctx.options.clawbench_task, ctx.options.clawbench_data)
            self.settings = settings
        except exceptions.OptionsError as e:
            if self._running:
                raise  # a live change is refused and the armed config stays
            self._fail(str(e))

    def _arm(self, task_opt: str, data_opt: str) -> None:
        path, task, matcher = resolve_task(task_opt, data_opt)
        schema = task.eval_schema.model_dump(mode="json", exclude_none=True)
        files = RunFiles(Path(data_opt), schema)
        if self.files is not None:
            self.files.close()
        self.matcher, self.files, self.task_file = matcher, files, path
        self.task_sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
        what = (
            "log only" if matcher.log_only else f"{task.eval_schema.method} {schema['url_pattern']}"
        )
        logger.info("clawbench: armed with %s (%s)", path, what)
        if files.interception is not None:
            logger.info(
                "clawbench: %s already credits %s %s; later matches only raise blocked_count",
                files.data / "interception.json",
                files.interception.request.method,
                files.interception.request.url[:200],
            )

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

    # -- per request ---------------------------------------------------------------------------

    def request(self, flow: http.HTTPFlow) -> None:
        try:
            self._request(flow)
        except Exception:
            # mitmproxy logs a hook's exception and forwards the flow: a bug or a full disk
            # here would let the commit request reach the live site. Fail closed instead.
            logger.exception("clawbench: request not evaluated, so it is killed")
            if flow.killable:
                flow.kill()

    def _request(self, flow: http.HTTPFlow) -> None:
        if self.matcher is None or self._failures:
            flow.kill()  # unarmed or about to exit: nothing passes unseen
            return
        if flow.response is not None:
            return
        if is_model_call(flow):  # the agent's LLM call (clawbench_model_hosts): never a commit
            if self.settings.routes:
                self._route(flow.request)
            return
        found = evaluate(self.matcher, flow.request, self.settings.max_body)
        if self.settings.routes:
            self._route(flow.request)  # a match too: were the block to fail, the route sees it
        if found.result.match:
            self._block(flow)
            self._record(flow, found)
        self._log(flow, found)

    def error(self, flow: http.HTTPFlow) -> None:
        # The request hook never ran (a body over body_size_limit got a 413); if its head
        # matched, it is the commit request and must be credited, body unverified. (Checked
        # here rather than in a requestheaders hook: one hook less on every request.) Either
        # way it was a request the agent sent, so it gets its line in requests.jsonl.
        if _DONE in flow.metadata or self.matcher is None or is_model_call(flow):
            return
        if flow.error is None or "body_size_limit" not in flow.error.msg:
            return
        found = evaluate_unread(self.matcher, flow.request)
        if found.result.match:
            self._record(flow, found)
        self._log(flow, found)

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

    def _record(self, flow: http.HTTPFlow, found: Evaluation) -> None:
        assert self.files is not None
        flow.metadata[_DONE] = True
        self.files.record(found.seen, found.parsed, found.result)

    def _route(self, req: http.Request) -> None:
        sent = req.host_header
        name = (split_authority(sent)[0] if sent else req.host).lower()
        routes = self.settings.routes
        target = routes.get(name.rstrip(".")) or routes.get("*")
        if target is None:
            return
        req.scheme, req.host, req.port = target
        req.host_header = sent  # keep what the client sent; only the upstream changes

    def _log(self, flow: http.HTTPFlow, found: Evaluation) -> None:
        assert self.files is not None
        flow.metadata[_DONE] = True
        mode = flow.client_conn.proxy_mode
        line = log_line(
            found.seen,
            found.log_body,
            found.result,
            safe_reasons(found.result, found.url, found.seen.url),
            timestamp=flow.request.timestamp_start,
            mode=mode.type_name if mode else None,
        )
        self.files.append(line)


addons = [ClawbenchModelTraffic(), ClawbenchInterceptor()]  # usage.json before .proxy-ready
