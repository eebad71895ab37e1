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
import json
import logging
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

try:
    import proxy_addon  # noqa: F401  (installed, or run from a checkout below)
except ImportError:  # mitmdump puts only this file's directory on sys.path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mitmproxy import ctx, exceptions, http
from mitmproxy.version import VERSION as MITMPROXY_VERSION

from proxy_addon.atomic import write_json_atomic
from proxy_addon.bodies import MAX_DECODED, RAW_TEXT_CAP, ParsedBody, parse_body, parse_query
from proxy_addon.matching import HttpRequest, Matcher, MatchResult
from proxy_addon.records import (
    InterceptedRequest,
    Interception,
    ProxyReady,
    RequestLogEntry,
)
from proxy_addon.redact import redact_fields, redact_headers, redact_url
from proxy_addon.tasks import TaskError, load_task, task_path
from proxy_addon.urls import request_url, split_authority

logger = logging.getLogger("clawbench")

LOG_PARSE_LIMIT = 1024 * 1024
"""Bodies up to this size are parsed for requests.jsonl; larger ones only when matching needs it."""

DISARMING_OPTIONS = ("stream_large_bodies", "ignore_hosts", "allow_hosts", "tcp_hosts")


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("clawbench-intercept")
    except Exception:  # not installed: a checkout used by path
        return "0+checkout"


def _log_body(parsed: ParsedBody | None, size: int) -> Any:
    if parsed is None:
        return f"[{size} bytes, not parsed for the log]"
    if parsed.error:
        return f"[unevaluable: {parsed.error}]"
    value = redact_fields(parsed.value)
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, default=str)
        if len(text) > RAW_TEXT_CAP:
            return f"{text[:RAW_TEXT_CAP]}...[truncated, {len(text)} characters in all]"
    return value


def _parse_routes(specs: Sequence[str]) -> dict[str, tuple[str, str, int]]:
    routes: dict[str, tuple[str, str, int]] = {}
    for spec in specs:
        host, sep, target = spec.partition("=")
        scheme, sep2, authority = target.partition("://")
        addr, port = split_authority(authority.rstrip("/"))
        if not sep or not sep2 or scheme not in ("http", "https") or port is None:
            raise ValueError(f"clawbench_route {spec!r}: use HOST=http://ADDR:PORT")
        routes[host.strip().lower()] = (scheme, addr, port)
    return routes


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
        self._log_fd: int | None = None
        self._running = False
        self.fatal: str | None = None

    def load(self, loader: Any) -> None:
        loader.add_option("clawbench_task", str, "", "Path to the task.json (or its directory).")
        loader.add_option(
            "clawbench_data",
            str,
            "",
            "Run data directory: requests.jsonl, interception.json, .proxy-ready, "
            ".stop-requested are written here.",
        )
        loader.add_option(
            "clawbench_block_mode",
            str,
            "error",
            "How a blocked client is answered: 'error' resets the connection (like the "
            "reference's ERR_BLOCKED_BY_CLIENT); 'respond' sends clawbench_block_status.",
            choices=["error", "respond"],
        )
        loader.add_option(
            "clawbench_block_status", int, 403, "HTTP status sent in 'respond' block mode."
        )
        loader.add_option(
            "clawbench_block_body",
            str,
            "Blocked by ClawBench: this request completes the task and was intercepted.",
            "Response body sent in 'respond' block mode.",
        )
        loader.add_option(
            "clawbench_max_body",
            int,
            MAX_DECODED,
            "Largest body (bytes, after Content-Encoding) checked against a body filter; a "
            "larger body on a matching URL and method is blocked as body_unverified.",
        )
        loader.add_option(
            "clawbench_route",
            Sequence[str],
            [],
            "Send requests for HOST to another upstream, HOST=http://ADDR:PORT (the demo's "
            "reserved hosts); matching still sees the original URL.",
        )

    def configure(self, updated: set[str]) -> None:
        try:
            self._configure(updated)
        except exceptions.OptionsError as e:
            if self._running:
                raise  # a live change is refused and the armed config stays
            # At startup one clear line is enough: mitmdump's errorcheck exits 1 on it before
            # any server listens (raising would print a traceback first).
            self.fatal = str(e)
            logger.error(self.fatal)

    def _configure(self, updated: set[str]) -> None:
        opts = ctx.options
        for name in DISARMING_OPTIONS:
            if name in updated and getattr(opts, name):
                raise exceptions.OptionsError(
                    f"clawbench: {name} is set; it lets traffic pass unseen by the interceptor. "
                    f"Unset it."
                )
        if "connection_strategy" in updated and opts.connection_strategy != "lazy":
            if self.matcher is None:
                opts.update(connection_strategy="lazy")
            else:
                raise exceptions.OptionsError(
                    "clawbench: connection_strategy must stay 'lazy' (eager connects upstream "
                    "before a request can be blocked)."
                )
        if "clawbench_route" in updated:
            try:
                self.routes = _parse_routes(opts.clawbench_route)
            except ValueError as e:
                raise exceptions.OptionsError(str(e)) from e
        if "clawbench_task" in updated or "clawbench_data" in updated:
            self._arm(opts.clawbench_task, opts.clawbench_data)

    def _arm(self, task_opt: str, data_opt: str) -> None:
        if not task_opt:
            raise exceptions.OptionsError(
                "clawbench: clawbench_task is not set; pass --set clawbench_task=PATH/task.json"
            )
        if not data_opt:
            raise exceptions.OptionsError(
                "clawbench: clawbench_data is not set; pass --set clawbench_data=DIR"
            )
        path = task_path(task_opt)
        try:
            task = load_task(path)
            matcher = Matcher(task.eval_schema)
        except TaskError as e:
            raise exceptions.OptionsError(f"clawbench: bad task: {e}") from e
        except Exception as e:  # re.error and friends from a pattern that does not compile
            raise exceptions.OptionsError(
                f"clawbench: bad task: {path}: eval_schema.url_pattern does not compile: {e}"
            ) from e
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
        self.interception = None
        ctx.options.update(connection_strategy="lazy")
        logger.info(
            "clawbench: armed with %s (%s)",
            path,
            "log only"
            if matcher.log_only
            else f"{task.eval_schema.method} {task.eval_schema.url_pattern}",
        )

    def running(self) -> None:
        self._running = True
        if self.data_dir is None or self.matcher is None or self.task_file is None:
            logger.error(self.fatal or "clawbench: not armed; refusing to run")
            ctx.master.shutdown()
            return
        server = ctx.master.addons.get("proxyserver")
        listen = []
        for inst in server.servers if server else []:
            for addr in inst.listen_addrs:
                host = f"[{addr[0]}]" if ":" in addr[0] else addr[0]
                listen.append(f"{inst.mode.type_name}@{host}:{addr[1]}")
        ready = ProxyReady(
            pid=os.getpid(),
            versions={
                "clawbench-intercept": _package_version(),
                "mitmproxy": MITMPROXY_VERSION,
                "python": sys.version.split()[0],
            },
            listen=listen,
            task=str(self.task_file),
            task_sha256=self.task_sha256,
            log_only=self.matcher.log_only,
            ready_at=time.time(),
        )
        write_json_atomic(self.data_dir / ".proxy-ready", ready)

    def done(self) -> None:
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None

    # -- per request ---------------------------------------------------------------------------

    def _url(self, req: http.Request) -> str:
        return request_url(req.scheme, req.host_header, req.host, req.port, req.path)

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        # Remember a URL+method(+params) match so a body the proxy refuses (body_size_limit,
        # 413 before the request hook) is still credited and never forwarded.
        if self.matcher is None:
            return
        url = self._url(flow.request)
        flow.metadata["clawbench_url"] = url
        if self.matcher.url_matches(url):
            head = self.matcher.match(HttpRequest(flow.request.method, url, None, "not read yet"))
            flow.metadata["clawbench_head_match"] = head.match

    def request(self, flow: http.HTTPFlow) -> None:
        if self.matcher is None:
            flow.kill()  # unarmed: nothing passes unseen
            return
        if flow.response is not None:
            return
        req = flow.request
        url = flow.metadata.get("clawbench_url") or self._url(req)
        raw = req.raw_content or b""
        url_hit = self.matcher.url_matches(url)
        parsed: ParsedBody | None = None
        if len(raw) <= LOG_PARSE_LIMIT or (url_hit and self.matcher.needs_body):
            parsed = parse_body(
                raw,
                req.headers.get("content-type"),
                req.headers.get("content-encoding"),
                limit=ctx.options.clawbench_max_body,
            )
        elif url_hit:
            parsed = None
        result = self.matcher.match(
            HttpRequest(
                req.method,
                url,
                parsed.value if parsed else None,
                parsed.error if parsed else None,
            )
        )
        if result.match:
            self._block(flow, url, parsed, len(raw), result)
        elif self.routes:
            self._route(req)
        self._log(flow, url, parsed, len(raw), result)

    def error(self, flow: http.HTTPFlow) -> None:
        # The request hook never ran (e.g. a body over body_size_limit got a 413); if its head
        # matched, it is the commit request and must be credited, body unverified.
        if flow.metadata.get("clawbench_head_match") and "clawbench_done" not in flow.metadata:
            result = MatchResult(True, ("body: never read by the proxy",), True, True, True, True)
            url = flow.metadata["clawbench_url"]
            size = int(flow.request.headers.get("content-length", "0") or 0)
            self._record(flow, url, None, size, result)
            self._log(flow, url, None, size, result)

    # -- effects ---------------------------------------------------------------------------------

    def _block(
        self,
        flow: http.HTTPFlow,
        url: str,
        parsed: ParsedBody | None,
        size: int,
        result: MatchResult,
    ) -> None:
        opts = ctx.options
        if opts.clawbench_block_mode == "respond":
            headers = {"content-type": "text/plain; charset=utf-8", "x-clawbench": "blocked"}
            if origin := flow.request.headers.get("origin"):
                headers["access-control-allow-origin"] = origin
                headers["access-control-allow-credentials"] = "true"
                headers["vary"] = "Origin"
            flow.response = http.Response.make(
                opts.clawbench_block_status, opts.clawbench_block_body.encode(), headers
            )
        else:
            flow.kill()
        self._record(flow, url, parsed, size, result)

    def _record(
        self,
        flow: http.HTTPFlow,
        url: str,
        parsed: ParsedBody | None,
        size: int,
        result: MatchResult,
    ) -> None:
        assert self.data_dir is not None
        flow.metadata["clawbench_done"] = True
        req = flow.request
        if self.interception is None:
            self.interception = Interception(
                request=InterceptedRequest(
                    url=redact_url(url),
                    method=req.method,
                    params=redact_fields(parse_query(url.partition("?")[2])),
                    body=redact_fields(parsed.value) if parsed and not parsed.error else None,
                    headers=redact_headers(req.headers.items(multi=True)),
                    content_type=req.headers.get("content-type"),
                    http_version=req.http_version,
                    body_size=size,
                    body_unverified=result.body_unverified,
                ),
                schema=self.schema,
                intercepted_at=time.time(),
                blocked_count=1,
            )
            logger.info("clawbench: blocked and recorded %s %s", req.method, url[:200])
        else:
            self.interception.blocked_count += 1
            logger.info("clawbench: blocked again (%d) %s", self.interception.blocked_count, url)
        write_json_atomic(self.data_dir / "interception.json", self.interception)
        (self.data_dir / ".stop-requested").touch()

    def _route(self, req: http.Request) -> None:
        host_header = req.host_header
        name = (split_authority(host_header)[0] if host_header else req.host).lower()
        target = self.routes.get(name.rstrip("."))
        if target is None:
            return
        req.scheme, req.host, req.port = target
        req.host_header = host_header  # keep what the client sent; only the upstream changes

    def _log(
        self,
        flow: http.HTTPFlow,
        url: str,
        parsed: ParsedBody | None,
        size: int,
        result: MatchResult,
    ) -> None:
        if self._log_fd is None:
            return
        req = flow.request
        entry = RequestLogEntry(
            timestamp=req.timestamp_start,
            url=redact_url(url),
            method=req.method,
            headers=redact_headers(req.headers.items(multi=True)),
            body=_log_body(parsed, size) if size else None,
            query_params=redact_fields(parse_query(url.partition("?")[2])),
            http_version=req.http_version,
            content_type=req.headers.get("content-type"),
            body_size=size,
            matched=result.match,
            blocked=result.match,
            near_miss=list(result.reasons) if result.near_miss else None,
            websocket=req.headers.get("upgrade", "").lower() == "websocket",
            mode=flow.client_conn.proxy_mode.type_name if flow.client_conn.proxy_mode else None,
        )
        os.write(self._log_fd, (entry.model_dump_json() + "\n").encode())


addons = [ClawbenchInterceptor()]
