"""ClawBench interception addon: block and record the request that commits an agent's task.

Usage:
    mitmdump -s proxy_addon/clawbench.py --set clawbench_task=TASK.json --set clawbench_data=DIR

Every request is matched against the task's eval_schema with the shared matcher and logged to
DIR/requests.jsonl. The first match is blocked before any byte reaches the upstream, recorded in
DIR/interception.json (atomically) and DIR/.stop-requested is touched; later matches are blocked
and counted. DIR/.proxy-ready is written once the task is loaded and the proxy listens.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

try:
    import proxy_addon  # noqa: F401  (installed, or run from a checkout below)
except ImportError:  # mitmdump puts only this file's directory on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mitmproxy import ctx, exceptions, http, tcp, udp
from mitmproxy.version import VERSION as MITMPROXY_VERSION

from proxy_addon.addon.modeltraffic import ClawbenchModelTraffic, is_model_call
from proxy_addon.addon.options import (
    block_response,
    check_options,
    declare_options,
    parse_routes,
    resolve_task,
    unparsable_deferred,
)
from proxy_addon.addon.requestlog import (
    SeenRequest,
    candidate_urls,
    interception_record,
    log_body,
    log_line,
    safe_reasons,
    see_request,
    with_url,
)
from proxy_addon.matching.bodies import MAX_DECODED, ParsedBody, parse_body
from proxy_addon.matching.matcher import HttpRequest, Matcher, MatchResult
from proxy_addon.matching.urls import split_authority
from proxy_addon.records.atomic import write_json_atomic
from proxy_addon.records.interception import Interception, ProxyReady

logger = logging.getLogger("clawbench")

LOG_PARSE_LIMIT = 1024 * 1024
"""Bodies up to this size (decoded) are parsed for requests.jsonl; larger ones only when the URL
matches (the body may then be checked against a filter and is recorded when blocked)."""

_DONE = "clawbench_done"


def host_header(req: http.Request) -> str | None:
    """req.host_header without mitmproxy's multidict machinery (a tenth of our time per request):
    :authority for HTTP/2 and 3, else the Host header(s), repeats joined as mitmproxy joins them."""
    if req.is_http2 or req.is_http3:
        authority = req.authority
        if authority:
            return authority
    values = [v for k, v in req.headers.fields if len(k) == 4 and k.lower() == b"host"]
    if not values:
        return None
    return b", ".join(values).decode("utf-8", "surrogateescape")


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


class ClawbenchInterceptor:
    """Thin stateful shell around the pure matcher: options, files, blocking."""

    def __init__(self) -> None:
        self.matcher: Matcher | None = None
        self.data_dir: Path | None = None
        self.task_file: Path | None = None
        self.task_sha256 = ""
        self.schema: dict[str, Any] = {}
        self.interception: Interception | None = None
        self.routes: dict[str, tuple[str, str, int]] = {}
        self.block_mode = "error"
        self.block_status = 403
        self.block_body = b""
        self.max_body = MAX_DECODED
        self._log_fd: int | None = None
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
            self._configure(updated)
        except exceptions.OptionsError as e:
            if self._running:
                raise  # a live change is refused and the armed config stays
            self._fail(str(e))

    def _configure(self, updated: set[str]) -> None:
        opts = ctx.options
        check_options(opts)
        if "connection_strategy" in updated and opts.connection_strategy != "lazy":
            if self.matcher is not None:
                raise exceptions.OptionsError(
                    "clawbench: connection_strategy must stay 'lazy' (eager connects upstream "
                    "before a request can be blocked)."
                )
            opts.update(connection_strategy="lazy")
        if "clawbench_route" in updated:
            try:
                self.routes = parse_routes(opts.clawbench_route)
            except ValueError as e:
                raise exceptions.OptionsError(f"clawbench: {e}") from e
        self.block_mode = opts.clawbench_block_mode
        self.block_status = opts.clawbench_block_status
        self.block_body = opts.clawbench_block_body.encode()
        self.max_body = opts.clawbench_max_body
        if "clawbench_task" in updated or "clawbench_data" in updated:
            self._arm(opts.clawbench_task, opts.clawbench_data)

    def _arm(self, task_opt: str, data_opt: str) -> None:
        path, task, matcher = resolve_task(task_opt, data_opt)
        data = Path(data_opt)
        try:
            data.mkdir(parents=True, exist_ok=True)
            fd = os.open(data / "requests.jsonl", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as e:
            raise exceptions.OptionsError(f"clawbench: data dir {data} not writable: {e}") from e
        if self._log_fd is not None:
            os.close(self._log_fd)
        self._log_fd = fd
        self.matcher, self.data_dir, self.task_file = matcher, data, path
        self.task_sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
        self.schema = task.eval_schema.model_dump(mode="json", exclude_none=True)
        self.interception = earlier_match(data / "interception.json", self.schema)
        ctx.options.update(connection_strategy="lazy")
        what = (
            "log only"
            if matcher.log_only
            else f"{task.eval_schema.method} {task.eval_schema.url_pattern}"
        )
        logger.info("clawbench: armed with %s (%s)", path, what)
        if self.interception is not None:
            logger.info(
                "clawbench: %s already credits %s %s; later matches only raise blocked_count",
                data / "interception.json",
                self.interception.request.method,
                self.interception.request.url[:200],
            )

    def running(self) -> None:
        self._running = True
        unknown = sorted(k for k in ctx.options.deferred if k.startswith("clawbench"))
        if unknown:
            self._fail(f"clawbench: unknown option(s) {', '.join(unknown)}; see --options")
        if self.fatal or self.data_dir is None or self.matcher is None or self.task_file is None:
            self._fail(self.fatal or "clawbench: not armed; refusing to run")
            ctx.master.shutdown()
            return
        server = ctx.master.addons.get("proxyserver")
        listen = []
        for inst in server.servers if server else []:
            for addr in inst.listen_addrs:
                host = f"[{addr[0]}]" if ":" in addr[0] else addr[0]
                listen.append(f"{inst.mode.type_name}@{host}:{addr[1]}")
        ready = ProxyReady.now(
            listen, self.task_file, self.task_sha256, self.matcher.log_only, MITMPROXY_VERSION
        )
        write_json_atomic(self.data_dir / ".proxy-ready", ready)
        # mitmproxy's and our modules' ~90k objects live as long as the proxy: out of the
        # collector's sight, its full collections stop rescanning them (~1% of throughput).
        gc.freeze()

    def done(self) -> None:
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None

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
            if self.routes:
                self._route(flow.request)
            return
        req = flow.request
        urls = candidate_urls(req.scheme, host_header(req), req.host, req.port, req.path)
        raw = req.raw_content or b""
        method = req.method
        seen = see_request(urls[0], method, req.headers.fields, req.http_version, len(raw))
        parsed: ParsedBody | None = None
        if raw:
            if len(raw) <= LOG_PARSE_LIMIT and seen.content_encoding is None:
                parsed = parse_body(raw, seen.content_type, None, limit=self.max_body)
            else:
                parsed = self._parse_large(raw, seen, urls)
        result, url = self._decide(method, urls, parsed)
        if url != urls[0]:
            seen = with_url(seen, url)
        if self.routes:
            self._route(req)  # a match too: were the block to fail, the test upstream sees it
        if result.match:
            self._block(flow)
            self._record(flow, seen, parsed, result)
        encoded = seen.content_encoding is not None
        self._log(flow, seen, log_body(parsed, len(raw), encoded), result, url)

    def _parse_large(
        self, raw: bytes, seen: SeenRequest, urls: tuple[str, ...]
    ) -> ParsedBody | None:
        """A body over LOG_PARSE_LIMIT, or compressed (it may be over it once decoded)."""
        assert self.matcher is not None
        if any(self.matcher.url_matches(u) for u in urls):
            # It may be checked against a filter, and is recorded whole if it is blocked.
            return parse_body(raw, seen.content_type, seen.content_encoding, limit=self.max_body)
        if len(raw) > LOG_PARSE_LIMIT:
            return None
        # For the log only: a small compressed body is decoded no further than the limit.
        return parse_body(raw, seen.content_type, seen.content_encoding, limit=LOG_PARSE_LIMIT)

    def _decide(
        self, method: str, urls: tuple[str, ...], parsed: ParsedBody | None
    ) -> tuple[MatchResult, str]:
        assert self.matcher is not None
        body, error = (parsed.value, parsed.error) if parsed else (None, None)
        first = self.matcher.match(HttpRequest(method, urls[0], body, error), explain=False)
        for url in urls[1:]:  # the connection's own host, when it differs from Host
            other = self.matcher.match(HttpRequest(method, url, body, error), explain=False)
            if other.match:
                return other, url
        return first, urls[0]

    def error(self, flow: http.HTTPFlow) -> None:
        # The request hook never ran (a body over body_size_limit got a 413); if its head
        # matched, it is the commit request and must be credited, body unverified. (Checked
        # here rather than in a requestheaders hook: one hook less on every request.) Either
        # way it was a request the agent sent, so it gets its line in requests.jsonl.
        if _DONE in flow.metadata or self.matcher is None or is_model_call(flow):
            return
        if flow.error is None or "body_size_limit" not in flow.error.msg:
            return
        req = flow.request
        length = req.headers.get("content-length", "")
        size = int(length) if length.isdigit() else 0  # chunked: unknown
        body = (
            f"[{size} bytes, over body_size_limit, not read]"
            if size
            else "[over body_size_limit, not read]"
        )
        urls = candidate_urls(req.scheme, host_header(req), req.host, req.port, req.path)
        url = self._head_match(req.method, urls)
        if url is None:
            head = HttpRequest(req.method, urls[0], None, "over body_size_limit, not read")
            seen = see_request(urls[0], req.method, req.headers.fields, req.http_version, size)
            self._log(flow, seen, body, self.matcher.match(head, explain=False), urls[0])
            return
        needs_body = self.matcher.needs_body
        why = ("body: over body_size_limit, never read by the proxy",) if needs_body else ()
        result = MatchResult(True, why, True, True, needs_body, True)
        seen = see_request(url, req.method, req.headers.fields, req.http_version, size)
        self._record(flow, seen, None, result)
        self._log(flow, seen, body, result, url)

    def _head_match(self, method: str, urls: tuple[str, ...]) -> str | None:
        """The URL under which method, URL and params match, the body not read; else None."""
        assert self.matcher is not None
        for url in urls:
            head = HttpRequest(method, url, None, "not read yet")
            if self.matcher.match(head, explain=False).match:
                return url
        return None

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
        if self.block_mode != "respond":
            flow.kill()
            return
        origin = flow.request.headers.get("origin")
        flow.response = block_response(self.block_status, self.block_body, origin)

    def _record(
        self, flow: http.HTTPFlow, seen: SeenRequest, parsed: ParsedBody | None, result: MatchResult
    ) -> None:
        assert self.data_dir is not None
        flow.metadata[_DONE] = True
        if self.interception is None:
            self.interception = interception_record(seen, parsed, result, self.schema)
            logger.info("clawbench: blocked and recorded %s %s", seen.method, seen.url[:200])
        else:
            self.interception.blocked_count += 1
            count = self.interception.blocked_count
            logger.info("clawbench: blocked again (%d) %s", count, seen.url[:200])
        write_json_atomic(self.data_dir / "interception.json", self.interception)
        (self.data_dir / ".stop-requested").touch()

    def _route(self, req: http.Request) -> None:
        sent = host_header(req)
        name = (split_authority(sent)[0] if sent else req.host).lower()
        target = self.routes.get(name.rstrip(".")) or self.routes.get("*")
        if target is None:
            return
        req.scheme, req.host, req.port = target
        req.host_header = sent  # keep what the client sent; only the upstream changes

    def _log(
        self, flow: http.HTTPFlow, seen: SeenRequest, body: Any, result: MatchResult, url: str
    ) -> None:
        flow.metadata[_DONE] = True
        if self._log_fd is None:
            return
        mode = flow.client_conn.proxy_mode
        line = log_line(
            seen,
            body,
            result,
            safe_reasons(result, url, seen.url),
            timestamp=flow.request.timestamp_start,
            mode=mode.type_name if mode else None,
        )
        os.write(self._log_fd, line)


addons = [ClawbenchModelTraffic(), ClawbenchInterceptor()]  # usage.json before .proxy-ready
