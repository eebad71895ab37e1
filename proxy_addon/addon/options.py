"""The addon's mitmproxy options: declarations with help text, the checks mitmproxy skips, and
what they resolve to (the task and its matcher, routes, the block response)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mitmproxy import ctx, exceptions, http, optmanager
from mitmproxy.proxy import server_hooks

from proxy_addon.addon.destination import Route
from proxy_addon.addon.private import AllowList
from proxy_addon.matching.matcher import Matcher
from proxy_addon.matching.urls import split_authority
from proxy_addon.records.requestwriter import LOG_BUDGET
from proxy_addon.tasks.model import Task, TaskError, load_task, task_path

BLOCK_MODES = ("error", "respond")
MAX_BODY = 8 * 1024 * 1024
"""clawbench_max_body's default: every body is decoded and parsed up to it, so a request's cost
never depends on how much of it matched, and a bomb costs the proxy no more than this."""
DISARMING_OPTIONS = ("stream_large_bodies", "ignore_hosts", "allow_hosts", "tcp_hosts")
"""mitmproxy options that let traffic reach the upstream unseen by the request hook."""

_INT_OPTIONS = ("clawbench_block_status", "clawbench_max_body", "clawbench_log_budget")
_SINGLE_OPTIONS = (
    "clawbench_task",
    "clawbench_data",
    "clawbench_block_mode",
    "clawbench_block_body",
    *_INT_OPTIONS,
)
"""Every option but clawbench_route takes one value; mitmproxy rejects a repeat by dropping us."""


def declare_options(loader: Any) -> None:
    """Declare every clawbench_* option with its type, default and help text."""
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
        choices=list(BLOCK_MODES),
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
        MAX_BODY,
        "Largest body (bytes, after Content-Encoding) the proxy parses, the same for every "
        "request whatever its URL; a larger one cannot be checked against a body filter, so "
        "on a matching URL and method it is blocked as body_unverified.",
    )
    loader.add_option(
        "clawbench_log_budget",
        int,
        LOG_BUDGET,
        "Bytes requests.jsonl may take: full lines up to 3/4 of it, then each request's "
        "method, host, path, verdict and sizes, then only a count in requests-summary.json "
        "(the agent's traffic cannot make the records larger).",
    )
    loader.add_option(
        "clawbench_route",
        Sequence[str],
        [],
        "Send requests for HOST to another upstream, HOST=http://ADDR:PORT (the demo's "
        "reserved hosts); HOST '*' takes every host without a route of its own, so nothing "
        "leaves for the real site. Matching still sees the original URL. A route's target "
        "may be a private address.",
    )
    loader.add_option(
        "clawbench_allow_private",
        Sequence[str],
        [],
        "Private destinations the proxy may connect to: CIDR, CIDR:PORT or [IPV6-CIDR]:PORT "
        "(e.g. 10.0.0.0/8, 127.0.0.1:7878). Loopback, link-local, cloud metadata and private "
        "(RFC 1918, ULA, CGNAT) addresses are refused otherwise.",
    )


def check_options(opts: Any) -> None:
    """Raise OptionsError for settings the addon must not run with; the message names the fix."""
    for name in DISARMING_OPTIONS:
        if getattr(opts, name, None):
            raise exceptions.OptionsError(
                f"clawbench: {name} is set; it lets traffic pass unseen by the interceptor. "
                f"Unset it."
            )
    if opts.clawbench_block_mode not in BLOCK_MODES:
        raise exceptions.OptionsError(
            f"clawbench: clawbench_block_mode must be one of {', '.join(BLOCK_MODES)}, "
            f"got {opts.clawbench_block_mode!r}"
        )
    if not 200 <= opts.clawbench_block_status <= 599:
        raise exceptions.OptionsError(
            "clawbench: clawbench_block_status must be an HTTP status from 200 to 599, "
            f"got {opts.clawbench_block_status}"
        )
    if opts.clawbench_max_body < 0:
        raise exceptions.OptionsError("clawbench: clawbench_max_body must be >= 0")
    if opts.clawbench_log_budget < 0:
        raise exceptions.OptionsError("clawbench: clawbench_log_budget must be >= 0")


@dataclass(frozen=True, slots=True)
class Settings:
    """The clawbench_* options the request path reads, checked and parsed."""

    block_mode: str = "error"
    block_status: int = 403
    block_body: bytes = b""
    max_body: int = MAX_BODY
    log_budget: int = LOG_BUDGET
    routes: dict[str, Route] = field(default_factory=dict)
    allow: AllowList = field(default_factory=lambda: AllowList(()))


def read_settings(opts: Any) -> Settings:
    """Check the options (check_options) and parse them; OptionsError names a bad one."""
    check_options(opts)
    try:
        routes = parse_routes(opts.clawbench_route)
        allow = AllowList(opts.clawbench_allow_private)
    except ValueError as e:
        raise exceptions.OptionsError(f"clawbench: {e}") from e
    return Settings(
        block_mode=opts.clawbench_block_mode,
        block_status=opts.clawbench_block_status,
        block_body=opts.clawbench_block_body.encode(),
        max_body=opts.clawbench_max_body,
        log_budget=opts.clawbench_log_budget,
        routes=routes,
        allow=allow,
    )


def keep_unseen_off(opts: Any, updated: set[str], armed: bool) -> None:
    """What would let traffic pass before or beyond the request hook stays off, set back at
    startup, refused when set later (or on explicitly): connection_strategy eager connects
    upstream before a request can be blocked; rawtcp relays bytes no hook sees (after a 101
    that is not a WebSocket, in a tunnel that is not HTTP). mitmproxy has rawtcp on by default."""
    changes: dict[str, Any] = {}
    if opts.rawtcp:  # checked first: setting another option runs configure again, in between
        if opts._options["rawtcp"].value is not optmanager.unset:
            raise exceptions.OptionsError(
                "clawbench: rawtcp is on; raw TCP relaying lets traffic pass unseen by the "
                "interceptor. Unset it (--set rawtcp=false)."
            )
        changes["rawtcp"] = False
    if opts.connection_strategy != "lazy":
        if armed and "connection_strategy" in updated:
            raise exceptions.OptionsError(
                "clawbench: connection_strategy must stay 'lazy' (eager connects upstream "
                "before a request can be blocked)."
            )
        changes["connection_strategy"] = "lazy"
    if changes:
        opts.update(**changes)


def abort_connection(data: server_hooks.ServerConnectionHookData) -> None:
    """Close a server connection that is open but has carried nothing yet (mitmproxy offers
    no hook result for it: its transport is closed, so nothing is ever written to it)."""
    server = ctx.master.addons.get("proxyserver")
    handler = server.connections.get(data.client.id) if server else None
    io = handler.transports.get(data.server) if handler else None
    if io is None or io.writer is None:
        raise RuntimeError(f"clawbench: cannot close the connection to {data.server.address}")
    data.server.error = "clawbench: closed before use"
    io.writer.close()


def resolve_task(task_opt: str, data_opt: str) -> tuple[Path, Task, Matcher]:
    """clawbench_task → (task.json path, task, compiled matcher); OptionsError names the problem."""
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
        return path, task, Matcher(task.eval_schema)
    except TaskError as e:
        raise exceptions.OptionsError(f"clawbench: bad task: {e}") from e


def block_response(status: int, body: bytes, origin: str | None) -> http.Response:
    """The answer in 'respond' block mode; CORS headers echo Origin so page scripts can read it."""
    headers = {"content-type": "text/plain; charset=utf-8", "x-clawbench": "blocked"}
    if origin:
        headers["access-control-allow-origin"] = origin
        headers["access-control-allow-credentials"] = "true"
        headers["vary"] = "Origin"
    return http.Response.make(status, body, headers)


def route(req: http.Request, target: Route) -> None:
    """Send a request to its route's target; what the client sent (Host, :authority) stays."""
    req.data.host, req.data.port = target.host, target.port
    req.scheme = target.scheme


def unparsable_deferred(options: Any) -> list[str]:
    """Drop `--set` values of our options that mitmproxy would fail on; one message for each."""
    problems = []
    for name in _SINGLE_OPTIONS:
        value = options.deferred.get(name)
        # --set leaves a list of strings in .val; a config file leaves the typed value.
        raw = getattr(value, "val", value)
        if value is None or not isinstance(raw, list):
            continue
        if len(raw) != 1:
            problems.append(f"clawbench: {name} is given {len(raw)} times; give it once")
        elif name in _INT_OPTIONS and not raw[0].strip().lstrip("-").isdigit():
            problems.append(f"clawbench: {name}={raw[0]!r} is not an integer")
        else:
            continue
        del options.deferred[name]
    return problems


def parse_routes(specs: Sequence[str]) -> dict[str, Route]:
    """HOST=http://ADDR:PORT specs → {host: (scheme, addr, port)}; ValueError names a bad one.

    HOST `*` is the route of every host that has none of its own.
    """
    routes: dict[str, Route] = {}
    for spec in specs:
        host, sep, target = spec.partition("=")
        scheme, sep2, authority = target.partition("://")
        addr, port = split_authority(authority.rstrip("/"))
        if not sep or not sep2 or scheme not in ("http", "https") or port is None or not addr:
            raise ValueError(f"clawbench_route {spec!r}: use HOST=http://ADDR:PORT")
        # mitmproxy connects to a bare IPv6 address, not its bracketed URL form
        routes[host.strip().lower().rstrip(".")] = Route(scheme, addr.strip("[]"), port)
    return routes


__all__ = [
    "BLOCK_MODES",
    "DISARMING_OPTIONS",
    "MAX_BODY",
    "Settings",
    "abort_connection",
    "block_response",
    "check_options",
    "declare_options",
    "keep_unseen_off",
    "parse_routes",
    "read_settings",
    "resolve_task",
    "route",
    "unparsable_deferred",
]
