"""The sandbox's proxy process: mitmproxy with the addon, tuned for browsers (`clawbench-proxy`).

    clawbench-proxy [-q] [--mode MODE]... [--set KEY=VALUE]... [-s FILE]... [--stock-loop]
                    [--all-addons] [--stock-h2-to-h1]

The same command line as `mitmdump -s proxy_addon/clawbench.py` for what the project uses, with
three differences, each measured by bench/bench_pageload.py (docs/benchmarks.md):
- only the built-in addons a routing, intercepting proxy needs (BUILTINS) are loaded, so no
  other addon's hooks run on each flow (mitmdump loads 36). An option no loaded addon declares
  is refused at start instead of being ignored. A `-s` script (a test's guard) runs after the
  addon, as it would after `-s proxy_addon/clawbench.py`;
- uvloop is the event loop where it is installed, asyncio's own otherwise;
- a browser's HTTP/2 requests to an HTTP/1.1 origin reuse the upstream connections, up to 5
  per origin, instead of one connection each (proxy_addon/addon/h1reuse.py).
The flags switch each back to mitmdump's way, for the benchmark. Exit codes: 0 stopped, 1 a
startup problem (logged on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

from mitmproxy import addons, exceptions, hooks, master, options
from mitmproxy.addons import (
    block,
    core,
    disable_h2c,
    errorcheck,
    next_layer,
    proxyserver,
    script,
    tlsconfig,
)

from proxy_addon.addon import h1reuse

BUILTINS: tuple[Callable[[], Any], ...] = (
    core.Core,  # the core options' checks and commands
    block.Block,  # refuses clients from outside loopback/private nets (block_global)
    disable_h2c.DisableH2C,  # strips h2c upgrades, which would otherwise leave HTTP unseen
    proxyserver.Proxyserver,  # the listeners
    next_layer.NextLayer,  # decides TLS / HTTP / raw per connection
    tlsconfig.TlsConfig,  # certificates, upstream verification
)
"""mitmdump's built-in addons this proxy needs; the rest (playback, map/modify, save, dumper,
onboarding, proxy auth, DNS, ...) act only on options the project never sets, yet each hooks
every flow."""

logger = logging.getLogger("clawbench")


def parser() -> argparse.ArgumentParser:
    """clawbench-proxy's command line: mitmdump's options this proxy takes, and its own."""
    p = argparse.ArgumentParser(
        prog="clawbench-proxy",
        description=__doc__.split("\n")[0],
        epilog="exit codes: 0 stopped, 1 a startup problem (logged), 2 bad usage or option",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="log errors only")
    p.add_argument(
        "--mode",
        action="append",
        default=[],
        metavar="MODE",
        help="a listener, as mitmdump's --mode (repeatable; default: regular on 8080)",
    )
    p.add_argument(
        "--set",
        dest="setoptions",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a mitmproxy or addon option, as mitmdump's --set (repeatable)",
    )
    p.add_argument(
        "-s",
        dest="scripts",
        action="append",
        default=[],
        metavar="FILE",
        help="an addon script to load, as mitmdump's -s (repeatable; default: none)",
    )
    p.add_argument("--stock-loop", action="store_true", help="asyncio's loop, not uvloop")
    p.add_argument("--all-addons", action="store_true", help="mitmdump's 36 built-ins")
    p.add_argument(
        "--stock-h2-to-h1", action="store_true", help="an upstream connection per request"
    )
    return p


def _eager_task(
    loop: asyncio.AbstractEventLoop, coro: Any, *, eager_start: bool | None = None, **kwargs: Any
) -> asyncio.Task[Any]:
    """asyncio.eager_task_factory for uvloop, which passes an eager_start it does not take."""
    return asyncio.eager_task_factory(loop, coro, **kwargs)


def loop_factory(stock: bool) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's loop where it is installed (and not declined), else None: asyncio's own."""
    if stock:
        return None
    try:
        import uvloop
    except ImportError:
        return None

    class Loop(uvloop.Loop):  # type: ignore[misc,name-defined]
        """uvloop, taking mitmproxy's eager task factory (Master.run sets it)."""

        def set_task_factory(self, factory: Any) -> None:
            eager = factory is asyncio.eager_task_factory
            super().set_task_factory(_eager_task if eager else factory)

    return Loop


def _builtins(all_addons: bool) -> list[Any]:
    if all_addons:
        return [*addons.default_addons(), errorcheck.ErrorCheck()]
    return [make() for make in BUILTINS] + [errorcheck.ErrorCheck()]


async def _run(args: argparse.Namespace) -> int:
    from proxy_addon import clawbench  # after logging is set up: it logs on import errors

    logging.getLogger().setLevel(logging.DEBUG)
    for noisy in ("asyncio", "hpack", "h2"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    opts = options.Options()
    proxy = master.Master(opts, with_termlog=True)
    proxy.addons.add(*_builtins(args.all_addons))
    try:
        # Deferred like mitmdump's --set: the addon's own options apply once it declares them.
        opts.set(*args.setoptions, defer=True)
        opts.update(mode=args.mode or ["regular"])
        if args.quiet:
            opts.update(termlog_verbosity="error")
        proxy.addons.add(*clawbench.addons)
        for addon in clawbench.addons:  # as mitmproxy's script loader configures a script
            proxy.addons.invoke_addon_sync(addon, hooks.ConfigureHook(set(opts.keys())))
        if args.scripts:
            if not proxy.addons.get("scriptloader"):  # --all-addons has one
                proxy.addons.add(script.ScriptLoader())
            opts.update(scripts=args.scripts)
        # The addon names an unknown clawbench_* option itself, once it runs.
        if unknown := sorted(k for k in opts.deferred if not k.startswith("clawbench")):
            raise exceptions.OptionsError(
                f"unknown option(s) {', '.join(unknown)}: this proxy loads only the addons a "
                "routing, intercepting proxy needs (proxy_addon/addon/master.py)"
            )
    except exceptions.OptionsError as e:
        print(f"clawbench-proxy: {e}", file=sys.stderr)
        return 2
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, proxy.shutdown)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # a client gone mid-write is not our death
    await proxy.run()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    if not args.stock_h2_to_h1:
        h1reuse.install()
    try:
        return asyncio.run(_run(args), loop_factory=loop_factory(args.stock_loop))
    except SystemExit as e:  # errorcheck's exit on a startup error
        return e.code if isinstance(e.code, int) else 1


if __name__ == "__main__":
    sys.exit(main())
