"""Page-load benchmark: headless Chromium loading a realistic HTTPS page, cold, each way in turn.

    .venv/bin/python bench/bench_pageload.py [--rounds 8] [--origin h1 --origin h2]
                                             [--way direct --way cdp ...] [--out FILE]

The page (bench/pageload_site.py: 135 requests, about 2.4 MB) is served on loopback by an
HTTP/1.1 and an HTTP/2 HTTPS origin. Ways of loading it (all by default):
- direct:   no proxy, no interception (the baseline of every ratio);
- cdp:      the reference's in-browser interception: CDP Fetch at the Request stage for every
            URL, each paused request continued;
- mitmdump: plain mitmdump (its stock launch, no script);
- addon:    stock mitmdump with the addon (`mitmdump -s proxy_addon/clawbench.py`), so
            addon / mitmdump is the addon's own cost;
- sandbox:  the sandbox's proxy as the container starts it (proxy_addon/addon/launcher.py:
            the addon, only the built-in addons it needs, uvloop, HTTP/1.1 upstreams reused).
Each round loads the page once per origin and way, the ways' order rotating from round to
round; every load is cold (a fresh browser context: empty cache, no open connection). One
warm-up round is not counted. Figures: the page's own time from navigation start until the
load event has fired and both fetch calls have answered; per way the median and range, the
median (and range) of its per-round ratios to direct and to plain mitmdump, and the proxy
process's CPU time per load (user + system: what a busy machine does not change much). Results go to
--out (bench/results/pageload.json); docs/benchmarks.md quotes them by hand.
It runs in a network namespace of its own with loopback only (unless --shared-network), so no
interface coming or going on the machine aborts a load; a load that fails all the same (an
image or a fetch lost) is made again, up to 3 times, and listed in the results (failed_loads).
--way also takes the sandbox's proxy with one of its changes undone (sandbox-all-addons,
sandbox-asyncio, sandbox-h1-per-request), for what each change gives.
Exit codes: 0 done, 1 a load failed 3 times in a row, 2 bad usage.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.pageload_browser import CdpError, Chromium  # noqa: E402
from bench.pageload_certs import write_site_certs  # noqa: E402
from bench.proxy_common import RESULTS, start_mitmdump  # noqa: E402
from proxy_addon.addon import ProxyProcess, start_proxy  # noqa: E402


class Proxy(NamedTuple):
    url: str
    pid: int


WAYS = ("direct", "cdp", "mitmdump", "addon", "sandbox")
ABLATIONS = {
    "sandbox-all-addons": ["--all-addons"],
    "sandbox-asyncio": ["--stock-loop"],
    "sandbox-h1-per-request": ["--stock-h2-to-h1"],
}
"""The sandbox's proxy with one of its changes undone (clawbench-proxy's flags); by --way only."""
ORIGINS = ("h1", "h2")
TASK = {
    "instruction": "Order the catalogue",
    "eval_schema": {"url_pattern": r"/checkout$", "method": "POST"},
    "time_limit": 5,
}
"""A task whose commit the page never sends: every request is evaluated, logged and forwarded."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench_pageload.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=8, help="rounds counted (default 8)")
    parser.add_argument(
        "--way", action="append", choices=[*WAYS, *ABLATIONS], help="(default: the five ways)"
    )
    parser.add_argument("--origin", action="append", choices=ORIGINS, help="default: both")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument(
        "--shared-network",
        action="store_true",
        help="run in this machine's network namespace, not a private one with loopback only",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "pageload.json")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if not shutil.which(args.chromium):
        parser.error(f"--chromium {args.chromium}: not found")
    args.way = args.way or list(WAYS)
    args.origin = args.origin or list(ORIGINS)
    return args


@contextmanager
def site(tmp: Path) -> Iterator[dict[str, int]]:
    """The two origins (bench/pageload_site.py in a process of its own): {origin: port}."""
    ports = tmp / "ports.json"
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "pageload_site.py"), str(tmp)])
    try:
        deadline = time.monotonic() + 30
        while not ports.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the page-load site did not start")
            time.sleep(0.05)
        yield json.loads(ports.read_text())
    finally:
        proc.kill()
        proc.wait()


@contextmanager
def plain_mitmdump(tmp: Path) -> Iterator[Proxy]:
    """Stock mitmdump, no script, its own settings (eager connections), verifying the site's
    certificate with the bench's CA."""
    verify = ["--set", f"ssl_verify_upstream_trusted_ca={tmp / 'ca.pem'}"]
    proc, port, _ = start_mitmdump(tmp, "plain", False, 0, verify, lazy=False)
    try:
        yield Proxy(f"http://127.0.0.1:{port}", proc.pid)
    finally:
        proc.terminate()
        proc.wait()


def addon_proxy(
    tmp: Path, name: str, ports: dict[str, int], stock: bool, flags: list[str]
) -> ProxyProcess:
    """The addon as a run has it, the site's loopback origins allowed; stock=True under
    mitmdump's own launch, else the sandbox's."""
    task = tmp / "task.json"
    task.write_text(json.dumps(TASK))
    allow = [f"127.0.0.1:{port}" for port in ports.values()]
    return start_proxy(
        task,
        tmp / f"{name}-data",
        confdir=tmp / "conf",
        options={
            "clawbench_allow_private": allow,
            "ssl_verify_upstream_trusted_ca": str(tmp / "ca.pem"),
        },
        stock=stock,
        extra_args=flags,
    )


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_load(
    browser: Chromium, url: str, way: str, proxies: dict[str, Proxy]
) -> tuple[float, float | None]:
    """(the page's ms, the proxy's CPU ms for it, None without a proxy)."""
    proxy = proxies.get(way)
    before = cpu_seconds(proxy.pid) if proxy else 0.0
    try:
        page = browser.load(url, proxy=proxy.url if proxy else None, intercept=way == "cdp")
    except CdpError as e:
        raise CdpError(f"{way} {url}: {e}") from e
    if page["broken"]:
        raise CdpError(f"{way} {url}: {page['broken']} of {page['images']} images did not load")
    cpu = (cpu_seconds(proxy.pid) - before) * 1000 if proxy else None
    return float(page["ms"]), cpu


FAILED: list[str] = []
"""Loads that failed (a fetch or an image lost) and were made again; in the results file."""
TRIES = 3
"""Loads of one page and way before the benchmark gives up. On a machine where other work
creates and removes network interfaces (Docker) Chromium aborts in-flight requests with
net::ERR_NETWORK_CHANGED, direct loads included."""


def load_until_whole(
    browser: Chromium, url: str, way: str, proxies: dict[str, Proxy], n: int
) -> tuple[float, float | None]:
    for attempt in range(1, TRIES + 1):
        try:
            return one_load(browser, url, way, proxies)
        except CdpError as e:
            FAILED.append(f"round {n}: {e}"[:300])
            print(f"failed ({attempt} of {TRIES}): {FAILED[-1]}", flush=True)
            if attempt == TRIES:
                raise
    raise AssertionError("unreachable")


Figures = dict[str, dict[str, list[float]]]
"""{origin: {way: [one figure per round]}}."""


def run_rounds(
    browser: Chromium, urls: dict[str, str], ways: list[str], proxies: dict[str, Proxy], rounds: int
) -> tuple[Figures, Figures]:
    """The page's ms and the proxy's CPU ms per load; the first (warm-up) round dropped."""
    times: Figures = {o: {w: [] for w in ways} for o in urls}
    cpu: Figures = {o: {w: [] for w in ways if w in proxies} for o in urls}
    for n in range(rounds + 1):
        order = ways[n % len(ways) :] + ways[: n % len(ways)]
        for origin, url in urls.items():
            for way in order:
                ms, cpu_ms = load_until_whole(browser, url, way, proxies, n)
                if n:
                    times[origin][way].append(ms)
                    if cpu_ms is not None:
                        cpu[origin][way].append(cpu_ms)
        if n:
            line = "  ".join(
                f"{o}:" + ",".join(f"{w}={times[o][w][-1]:.0f}" for w in ways) for o in urls
            )
            print(f"round {n}/{rounds} (load {os.getloadavg()[0]:.1f}) {line}", flush=True)
    return times, cpu


def ratios(xs: list[float], base: list[float]) -> dict[str, float]:
    """The median and range of the per-round ratios xs[i] / base[i]."""
    paired = [x / b for x, b in zip(xs, base, strict=True)]
    return {
        "median": round(statistics.median(paired), 3),
        "min": round(min(paired), 3),
        "max": round(max(paired), 3),
    }


def summarise(times: Figures, cpu: Figures) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for origin, by_way in times.items():
        rows: dict[str, Any] = {}
        for way, xs in by_way.items():
            row: dict[str, Any] = {
                "ms": [round(x, 1) for x in xs],
                "median_ms": round(statistics.median(xs), 1),
                "min_ms": round(min(xs), 1),
                "max_ms": round(max(xs), 1),
            }
            if "direct" in by_way and way != "direct":
                row["over_direct"] = ratios(xs, by_way["direct"])
            if "mitmdump" in by_way and way not in ("direct", "cdp", "mitmdump"):
                row["over_mitmdump"] = ratios(xs, by_way["mitmdump"])
            if spent := cpu[origin].get(way):
                row["proxy_cpu_ms"] = {
                    "median": round(statistics.median(spent), 1),
                    "min": round(min(spent), 1),
                    "max": round(max(spent), 1),
                }
            rows[way] = row
        out[origin] = rows
    return out


def table(summary: dict[str, Any]) -> str:
    lines = [
        "| origin | way | median ms (range) | / direct | / mitmdump | proxy CPU ms per load |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for origin, rows in summary.items():
        for way, row in rows.items():
            cells = [f"{row['median_ms']:.0f} ({row['min_ms']:.0f}-{row['max_ms']:.0f})"]
            for key in ("over_direct", "over_mitmdump"):
                r = row.get(key)
                cells.append(f"{r['median']:.2f}x ({r['min']:.2f}-{r['max']:.2f})" if r else "")
            c = row.get("proxy_cpu_ms")
            cells.append(f"{c['median']:.0f} ({c['min']:.0f}-{c['max']:.0f})" if c else "")
            lines.append(f"| {origin} | {way} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


ISOLATED = "CLAWBENCH_PAGELOAD_NETNS"


def isolate(argv: list[str]) -> int | None:
    """Run this benchmark again in a network namespace of its own (loopback only) where one can
    be made: Chromium aborts in-flight requests with net::ERR_NETWORK_CHANGED whenever an
    interface comes or goes, which other work's containers do on a shared machine. None: run
    here (already isolated, asked not to, or no namespace to be had)."""
    unshare, ip = shutil.which("unshare"), shutil.which("ip")
    if os.environ.get(ISOLATED) or not unshare or not ip:
        return None
    root = [] if os.geteuid() == 0 else ["--map-root-user"]
    probe = subprocess.run([unshare, *root, "--net", "true"], capture_output=True)
    if probe.returncode:
        return None
    script = f'"{ip}" link set lo up && exec "$@"'
    cmd = [unshare, *root, "--net", "sh", "-c", script, "sh", sys.executable, __file__, *argv]
    return subprocess.run(cmd, env={**os.environ, ISOLATED: "1"}).returncode


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if not args.shared_network and (code := isolate(argv)) is not None:
        return code
    with tempfile.TemporaryDirectory(prefix="pageload-") as d, ExitStack() as stack:
        tmp = Path(d)
        write_site_certs(tmp)
        ports = stack.enter_context(site(tmp))
        proxies: dict[str, Proxy] = {}
        if "mitmdump" in args.way:
            proxies["mitmdump"] = stack.enter_context(plain_mitmdump(tmp))
        addons = {"addon": (True, []), "sandbox": (False, [])}
        addons |= {way: (False, flags) for way, flags in ABLATIONS.items()}
        for way, (stock, flags) in addons.items():
            if way in args.way:
                proxy = addon_proxy(tmp, way, ports, stock, flags)
                started = stack.enter_context(proxy)
                proxies[way] = Proxy(started.url, started.proc.pid)
        cas = [tmp / "ca.pem", tmp / "conf" / "mitmproxy-ca-cert.pem"]
        browser = Chromium(args.chromium, tmp / "profile", [ca for ca in cas if ca.exists()])
        stack.callback(browser.close)
        urls = {o: f"https://127.0.0.1:{ports[o]}/" for o in args.origin}
        load_before = os.getloadavg()[0]
        try:
            times, cpu = run_rounds(browser, urls, args.way, proxies, args.rounds)
        except CdpError as e:
            print(f"bench_pageload: {e}", file=sys.stderr)
            return 1
    summary = summarise(times, cpu)
    result = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "rounds": args.rounds,
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "pages": summary,
        "failed_loads": FAILED,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = args.out.with_suffix(".tmp")
    tmp_out.write_text(json.dumps(result, indent=2) + "\n")
    tmp_out.replace(args.out)
    print(table(summary))
    print(f"results: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
