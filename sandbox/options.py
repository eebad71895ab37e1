"""clawbench-sandbox's command line: the parser and its option types.

Bad options are a UsageError (one line, exit 2) naming the option and the fix; what the options
turn into (a RunRequest) is sandbox.run_request's.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from proxy_addon.cli_options import OneLineParser, count
from sandbox.container.contract import MIN_RECORDS_BUDGET
from sandbox.harnesses import HARNESSES
from sandbox.host import DEFAULT_BASE, DEFAULT_IMAGE, Limits
from sandbox.option_types import (
    command,
    cpus,
    default_image,
    positive_int,
    seconds,
    size,
)

DOCKER_MIN_MEMORY = 6 << 20
"""The least memory limit Docker accepts."""

RUN_EXIT_CODES = """exit codes:
  0    intercepted
  1    not intercepted (the agent's failure)
  2    setup or infra error: bad options, missing image, the pre-flight failed (the model or
       the judge answered an error, or nothing answered; checked before any container starts),
       the judge does not resolve, proxy never ready, container failed, the model API failed
       the run's own calls (model_api_failure), or scoring the run failed (the run is kept)
  3    incomplete: with --judge-model, the run intercepted but its verdict is missing (a judge
       error or timeout); one line says so and the clawbench-score command that asks for it
       (--allow-incomplete exits 0 instead)
  130  interrupted (Ctrl-C or SIGTERM; containers are stopped and removed)"""
BATCH_EXIT_CODES = """exit codes:
  0    every run finished without an infra failure (intercepted or not) and, with
       --judge-model, every verdict is in (or --allow-incomplete)
  2    setup error before any run (bad options, a task.json of the corpus that does not load
       without --skip-invalid, missing image, the pre-flight failed, the judge does not
       resolve; --backend ray: no cluster answers, or no node can take a run), or scoring the
       batch failed (the runs are kept)
  3    incomplete: a run ended as an infra failure (model_api_failure included), a verdict
       is missing, or the batch stopped after --stop-after consecutive model_api_failures;
       one line says which and the command that completes it (--resume BATCH_DIR)
  130  interrupted (Ctrl-C or SIGTERM; no new runs start, containers are removed)"""


def _agent_options(p: argparse.ArgumentParser) -> None:
    """Which agent runs, in which image, under which names, with which environment."""
    who = p.add_mutually_exclusive_group()
    who.add_argument(
        "--agent",
        choices=("null", "scripted"),
        default="null",
        help="built-in agent: null does nothing, scripted replays --script (default: %(default)s)",
    )
    who.add_argument(
        "--agent-cmd",
        type=command,
        metavar="CMD",
        help="run CMD with /bin/sh as the unprivileged agent user",
    )
    p.add_argument(
        "--script",
        type=Path,
        metavar="FILE",
        help="requests for --agent scripted (JSON or YAML list)",
    )
    p.add_argument(
        "--image",
        metavar="IMAGE",
        help=f"sandbox image (default: $CLAWBENCH_SANDBOX_IMAGE or {DEFAULT_IMAGE}; with "
        "--harness, its layer: <image>-<harness>)",
    )
    p.add_argument(
        "--model",
        metavar="NAME",
        help="with --harness: the models.yaml entry the agent calls (--models-yaml, required); "
        "else the model name for the run directory (default: none)",
    )
    p.add_argument(
        "--harness",
        metavar="NAME",
        help=f"run a real agent: {', '.join(sorted(HARNESSES))} (with --model); any other "
        "name only labels the run directory (default: the agent's kind)",
    )
    p.add_argument(
        "--max-steps",
        type=positive_int,
        default=30,
        metavar="N",
        help="a harness's step (turn) cap (default: %(default)s)",
    )


def _limit_options(p: argparse.ArgumentParser) -> None:
    """The agent container's resource limits (recorded in run-meta.json)."""
    d = Limits()
    p.add_argument(
        "--memory",
        type=size(DOCKER_MIN_MEMORY),
        default=d.memory,
        metavar="SIZE",
        help="memory for the whole container, no swap (default: 4g)",
    )
    p.add_argument(
        "--pids",
        type=positive_int,
        default=d.pids,
        metavar="N",
        help="processes and threads in the container (default: %(default)s)",
    )
    p.add_argument(
        "--cpus",
        type=cpus,
        default=d.cpus,
        metavar="N",
        help="CPUs for the container (default: %(default)s)",
    )
    p.add_argument(
        "--disk",
        type=size(),
        default=d.disk,
        metavar="SIZE",
        help="size of each of the agent's writable mounts: /tmp, its home, /dev/shm (default: 1g)",
    )
    p.add_argument(
        "--records-budget",
        type=size(MIN_RECORDS_BUDGET),
        default=d.records,
        metavar="SIZE",
        help="bytes the proxy's records (requests.jsonl and mitmdump.log) may take on the host, "
        "together: past 3/4 of it a request is logged as its method, host, path, verdict and "
        "sizes, past it only counted; an agent that fills it has exhausted its own resources "
        "(default: 256m)",
    )


def _run_options(p: argparse.ArgumentParser) -> None:
    """Where a run goes, how its container and proxy are set up, and how it is scored."""
    _limit_options(p)
    p.add_argument(
        "--out",
        type=Path,
        default=Path("out"),
        metavar="DIR",
        help="output directory (default: %(default)s)",
    )
    p.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="K=V",
        help="agent environment variable, repeatable (K alone copies it from here); "
        "run-meta.json lists the names only",
    )
    p.add_argument(
        "--network",
        metavar="NAME",
        help="Docker network for the agent's container (default: Docker's default bridge)",
    )
    p.add_argument(
        "--upstream-ca",
        type=Path,
        metavar="PEM",
        help="also trust this CA for upstream servers (a local test or demo site)",
    )
    p.add_argument(
        "--allow-private",
        action="append",
        default=[],
        metavar="CIDR",
        help="a private range the proxy may reach (a test or intranet site), repeatable; "
        "loopback, link-local, cloud metadata and private addresses are refused otherwise",
    )
    p.add_argument(
        "--mitm-set",
        action="append",
        default=[],
        metavar="K=V",
        help="extra mitmproxy option for the proxy inside the container, repeatable",
    )
    p.add_argument(
        "--stop-grace",
        type=seconds(zero_ok=True),
        default=10,
        metavar="S",
        help="seconds between SIGTERM and SIGKILL when stopping the agent (default: %(default)s)",
    )
    p.add_argument(
        "--proxy-timeout",
        type=seconds(zero_ok=False),
        default=60,
        metavar="S",
        help="seconds to wait for the proxy to become ready; past it the run is an infra "
        "failure, stop_reason proxy_failed (default: %(default)s)",
    )
    p.add_argument("--judge-model", metavar="NAME", help="score the run(s) right away")
    p.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip the one-token call to the agent's model and the judge before any container "
        "starts (a wrong key, model name, base_url or port is then found run by run)",
    )
    p.add_argument(
        "--models-yaml",
        type=Path,
        metavar="FILE",
        help="models (the reference's models.yaml) for --judge-model and a harness's --model",
    )
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")


FMT = argparse.RawDescriptionHelpFormatter  # keeps the exit-code tables as written


def parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="clawbench-sandbox",
        description="Build the agent image, run one task in it, or run a corpus as a batch.",
        epilog=f"run {RUN_EXIT_CODES}\n\nbatch {BATCH_EXIT_CODES}",
        formatter_class=FMT,
    )
    parser.add_argument("--debug", action="store_true", help="tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)
    _build_parser(sub)
    _run_parser(sub)
    _batch_parser(sub)
    _check_parser(sub)
    return parser


def _build_parser(sub: Any) -> None:
    b = sub.add_parser(
        "build",
        help="build the sandbox image",
        description="Build the sandbox image (never pulls anything but the base image's packages).",
        epilog="exit codes:\n  0    built\n  2    the build failed (its last lines are shown)",
        formatter_class=FMT,
    )
    b.add_argument(
        "--base-image",
        default=DEFAULT_BASE,
        metavar="IMAGE",
        help="the image to build on: a local one, or one Docker can pull (default: %(default)s)",
    )
    b.add_argument(
        "--ca-bundle",
        type=Path,
        metavar="PEM",
        help="CA bundle for the build's own downloads, pip and apt, never kept in the image "
        "(default: the file $PIP_CERT, $SSL_CERT_FILE or $REQUESTS_CA_BUNDLE names, if any)",
    )
    b.add_argument(
        "--tag", default=default_image(), metavar="IMAGE", help="the tag (default: %(default)s)"
    )
    b.add_argument("--chromium", action="store_true", help="install Chromium in the image")
    b.add_argument(
        "--harness",
        action="append",
        default=[],
        choices=sorted(HARNESSES),
        help="also build this harness's layer on the image, tagged <tag>-<harness> (repeatable;"
        " implies --chromium)",
    )
    b.add_argument(
        "--extra-packages",
        default="",
        metavar="PKGS",
        help="more apt packages, space-separated (e.g. nodejs; default: none)",
    )


def _run_parser(sub: Any) -> None:
    r = sub.add_parser(
        "run",
        help="run one task in the sandbox",
        description="Run one task in the sandbox and leave a run directory under --out.",
        epilog=RUN_EXIT_CODES,
        formatter_class=FMT,
    )
    r.add_argument(
        "task_dir", type=Path, metavar="TASK_DIR", help="the task's directory (holds task.json)"
    )
    _agent_options(r)
    _run_options(r)
    _allow_incomplete(r, "exit by the run's category when its verdict is missing, instead of 3")


def _batch_parser(sub: Any) -> None:
    t = sub.add_parser(
        "batch",
        help="run every task of a corpus",
        description="Run every */task.json of a corpus into <out>/batch-<timestamp>/.",
        epilog=BATCH_EXIT_CODES,
        formatter_class=FMT,
    )
    t.add_argument(
        "corpus",
        type=Path,
        metavar="CORPUS_DIR",
        help="a directory of task directories (each holds task.json)",
    )
    _agent_options(t)
    _run_options(t)
    t.add_argument(
        "--concurrency",
        type=positive_int,
        metavar="N",
        help="containers running at once (default: 2; --backend ray: as many as the cluster's "
        "clawbench_docker resources allow)",
    )
    t.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="where the runs go: this machine's Docker engine, or the nodes of a Ray cluster "
        "(pip install 'clawbench-intercept[ray]'; docs/scale-out.md) (default: %(default)s)",
    )
    t.add_argument(
        "--ray-address",
        metavar="HEAD:PORT",
        help="--backend ray: the cluster's head (default: $RAY_ADDRESS, else a cluster "
        "started on this machine)",
    )
    t.add_argument(
        "--resume",
        type=Path,
        metavar="BATCH_DIR",
        help="continue a batch: finished runs are kept, infra failures and the rest run",
    )
    t.add_argument(
        "--skip-invalid",
        action="store_true",
        help="run the corpus's valid tasks when some task.json do not load (by default the "
        "batch stops before it starts, one line per bad task); the skipped ones are listed in "
        "batch-summary.json",
    )
    t.add_argument(
        "--include-placeholders",
        action="store_true",
        help="also run log-only tasks that can never intercept (skipped by default)",
    )
    t.add_argument(
        "--stop-after",
        type=count,
        default=3,
        metavar="N",
        help="start no new run once N runs in a row ended model_api_failure (the key, quota or "
        "endpoint is broken: fix it, then --resume); 0 never stops (default: %(default)s)",
    )
    _allow_incomplete(
        t, "exit 0 on an incomplete batch (infra failures, missing verdicts) instead of 3"
    )


def _allow_incomplete(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--allow-incomplete", action="store_true", help=help_text)


def _check_parser(sub: Any) -> None:
    c = sub.add_parser(
        "check",
        help="check the agent's model and the judge with one tiny call each",
        description="The pre-flight of run and batch alone: one one-token call to each "
        "endpoint, and one line naming the entry, the URL and what came back.",
        epilog="exit codes:\n  0    every endpoint answered\n  2    bad input, or an "
        "endpoint failed (its entry, URL and what came back are named)",
        formatter_class=FMT,
    )
    c.add_argument("--model", metavar="ENTRY", help="the agent's models.yaml entry")
    c.add_argument(
        "--harness",
        metavar="NAME",
        help="also check that this harness can call --model (its api_type)",
    )
    c.add_argument("--judge-model", metavar="NAME", help="the judge (default entry built in)")
    c.add_argument("--models-yaml", type=Path, metavar="FILE", help="the models.yaml")
