"""clawbench-demo: the whole pipeline once, on this machine, in under a minute.

    clawbench-demo [--out DIR] [--no-browser] [--models-yaml FILE] [--judge-model NAME]

A demo website on 127.0.0.1, one mitmdump + addon per run, agents (headless Chromium, python,
curl) doing the demo tasks right and wrong, a batch in the reference's layout, scored by
clawbench-score (the real judge when a key is set, Stage 1 only otherwise).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from proxy_addon.records.batchsummary import now_iso, write_summary
from proxy_addon.records.layout import stamp
from sandbox.demo.browser_use import find_browser_use
from sandbox.demo.chromium import find_chromium
from sandbox.demo.local import RunResult, Setup, execute
from sandbox.demo.scenarios import HARNESSES, MODEL, DemoRun, PlanError, load_plan
from sandbox.demo.show import SiteSeen, commits_reaching_site, files_written, show_runs, show_site
from sandbox.demo.site import HOSTS, DemoSite
from sandbox.harnesses import BROWSER_USE
from sandbox.harnesses.models import ModelUnavailable, resolve_agent_model
from sandbox.host.image import REPO
from sandbox.interrupt import sigterm_as_interrupt
from sandbox.judging import JudgeUnavailable, check_judge
from sandbox.option_types import positive_int
from sandbox.runs.batch import batch_summary, job_of, run_all
from scorer.cli import NO_JUDGE_HINT
from scorer.display import print_result
from scorer.models_yaml import DEFAULT_JUDGE, JudgeConfig
from scorer.scoring import SCORING_ERRORS, ScoreOptions, score

CORPUS = REPO / "test-cases" / "clawbench-demo"
EXPECTED = {"correct": True, "wrong": True, "gives-up": False}
"""Whether each variant must be intercepted: anything else is a failed demo (exit 1)."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="clawbench-demo",
        description="Run agents through the interception proxy on the demo tasks, write a batch "
        "in the reference's layout and score it.",
        epilog="exit codes:\n  0    every run ended as planned and the batch was scored\n"
        "  1    a run did not end as planned, a commit reached the site, or scoring failed\n"
        "  2    bad input (corpus, task.json, --out, judge settings), before any run\n"
        "  130  interrupted (Ctrl-C or SIGTERM): every agent and mitmdump is stopped first",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--out", type=Path, default=Path("out"), help="where the batch goes (out/)")
    p.add_argument("--tasks", type=Path, default=CORPUS, help="the demo corpus")
    p.add_argument("--no-browser", action="store_true", help="skip the headless Chromium agent")
    p.add_argument("--models-yaml", type=Path, help="judge endpoints (the reference's format)")
    p.add_argument("--judge-model", default=DEFAULT_JUDGE, help=f"default {DEFAULT_JUDGE}")
    p.add_argument("--no-judge", action="store_true", help="Stage 1 only even with a key set")
    p.add_argument(
        "--concurrency", type=positive_int, default=3, metavar="N", help="runs at a time (3)"
    )
    p.add_argument(
        "--agent-model",
        metavar="NAME",
        help="browser-use calls this models.yaml entry (--models-yaml) instead of the scripted "
        "model; its key comes from the entry",
    )
    return p


def _judges(args: argparse.Namespace, console: Console) -> list[JudgeConfig]:
    """The judge, resolved here (JudgeUnavailable), or none: Stage 1 only."""
    if args.no_judge:
        return []
    chosen = args.models_yaml or args.judge_model != DEFAULT_JUDGE
    if chosen or os.environ.get("DEEPSEEK_API_KEY"):
        return [check_judge(args.judge_model, args.models_yaml, NO_JUDGE_HINT)]
    console.print(
        "No judge key: scoring Stage 1 only (--no-judge). For the LLM judge, set "
        "DEEPSEEK_API_KEY or pass --models-yaml FILE [--judge-model NAME].",
        highlight=False,
    )
    return []


def _batch_summary(
    batch: Path,
    corpus: Path,
    results: list[RunResult],
    started: str,
    t0: float,
    workers: int,
    interrupted: bool = False,
) -> None:
    jobs = []
    for r in results:
        job = job_of(r.run_dir, MODEL, r.run.slug)
        job.run_dir = str(r.run_dir.relative_to(batch))
        jobs.append(job)
    summary = batch_summary(
        started_at=started,
        elapsed_s=time.monotonic() - t0,
        concurrency=workers,
        harness=",".join(sorted({r.run.harness for r in results})),
        image="none (clawbench-demo runs on the host)",
        corpus=corpus,
        jobs=jobs,
        interrupted=interrupted,
    )
    write_summary(batch, summary)


def _new_batch(out: Path, ts: str) -> Path:
    batch = (out / f"batch-{ts}").resolve()
    try:
        batch.mkdir(parents=True, exist_ok=False)
    except OSError as e:
        raise PlanError(f"--out {out}: cannot create {batch}: {e.strerror or e}") from e
    return batch


def _run_all(runs: list[DemoRun], setup: Setup, workers: int) -> tuple[list[RunResult], bool]:
    """Every run, workers at a time: (results, interrupted). On Ctrl-C or SIGTERM no new run
    starts and each run in flight ends its agent's session and its mitmdump before this returns
    (a second Ctrl-C does not cut that short)."""
    futures, interrupted = run_all(runs, lambda run: execute(run, setup), workers, setup.stop)
    setup.stop.set()
    done = [f for f in futures if f.done() and not f.cancelled() and f.exception() is None]
    return [f.result() for f in done], interrupted


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; 0 when every run ended as planned, 1 otherwise, 2 on bad input, 130 when
    interrupted (Ctrl-C or SIGTERM: every agent and mitmdump is stopped first)."""
    args = parser().parse_args(argv)
    try:
        with sigterm_as_interrupt():  # SIGTERM stops the demo like Ctrl-C
            return _demo(args)
    except KeyboardInterrupt:
        print("clawbench-demo: interrupted; nothing is left running", file=sys.stderr)
        return 130


def _agents(args: argparse.Namespace, console: Console) -> tuple[str | None, tuple[str, ...]]:
    """(Chromium's path, the agents that can run here): each missing tool skips its runs."""
    chromium = None if args.no_browser else find_chromium()
    browsers = ("chromium", "browser-use")
    harnesses = HARNESSES if chromium else tuple(h for h in HARNESSES if h not in browsers)
    if not args.no_browser and chromium is None:
        console.print("Chromium not found: the browser agents' runs are skipped.")
    if "browser-use" in harnesses and find_browser_use() is None:
        console.print(
            "browser-use not installed: its runs are skipped (scripts/setup.sh --with-browser-use)."
        )
        harnesses = tuple(h for h in harnesses if h != "browser-use")
    if shutil.which("curl") is None:
        console.print("curl not found: the curl agent's runs are skipped.")
        harnesses = tuple(h for h in harnesses if h != "curl")
    return chromium, harnesses


def _execute(
    runs: list[DemoRun], setup: Setup, workers: int
) -> tuple[list[RunResult], bool, SiteSeen]:
    """Every run against the demo site: (results, interrupted, what the site saw)."""
    with DemoSite() as site:
        setup = replace(setup, routes=site.routes)
        results, interrupted = _run_all(runs, setup, workers)
        leaked = commits_reaching_site(site.received, runs)
        demo_hosts = sum(r.host in HOSTS for r in site.received)
    return results, interrupted, SiteSeen(leaked, demo_hosts, len(site.received) - demo_hosts)


def _score(
    console: Console, batch: Path, judges: list[JudgeConfig], models_yaml: Path | None
) -> int:
    """The scorer's library on the batch (its table is printed), then the HTML report; 0, or
    clawbench-score's exit code for what went wrong. models_yaml prices the agent's tokens."""
    from scorer.html_report import load_report, write_report

    how = f"--judge-model {judges[0].name}" if judges else "--no-judge"
    console.rule(f"clawbench-score {batch.name} {how}", characters="─")
    try:
        opts = ScoreOptions(
            paths=[batch], judges=judges, models_yaml=models_yaml, dataset="clawbench-demo"
        )
        result = score(opts)
    except SCORING_ERRORS as e:
        console.print(f"clawbench-score: {e}", highlight=False)
        return 2
    except KeyboardInterrupt:
        console.print("clawbench-score: interrupted; the verdicts received are saved")
        return 130
    print_result(result, console)
    scored = 1 if result.write_errors else 0
    if scored == 0:
        out = batch / "report.html"
        write_report(load_report([batch], out), out, "ClawBench demo")
        console.print(f"Report: {out}", highlight=False)
    return scored


def _demo(args: argparse.Namespace) -> int:
    console = Console()
    chromium, harnesses = _agents(args, console)
    t0, started, ts = time.monotonic(), now_iso(), stamp()
    try:  # every check before the batch directory exists
        runs = load_plan(args.tasks, harnesses)
        judges = _judges(args, console)
        agent_model = None
        if args.agent_model:
            agent_model = resolve_agent_model(
                BROWSER_USE, args.agent_model, args.models_yaml, "--agent-model"
            )
        batch = _new_batch(args.out, ts)
    except (PlanError, JudgeUnavailable, ModelUnavailable) as e:
        print(f"clawbench-demo: {e}", file=sys.stderr)
        return 2
    confdir = batch / ".mitmproxy"
    from mitmproxy.certs import CertStore

    CertStore.from_store(confdir, "mitmproxy", 2048)  # one CA for every run, made once
    workers = args.concurrency
    console.print(
        f"Demo: {len(runs)} runs ({', '.join(harnesses)}) through mitmdump -s "
        f"proxy_addon/clawbench.py, {workers} at a time → {batch}",
        highlight=False,
    )
    setup = Setup(
        batch, [], confdir, ts, chromium, browser_use=find_browser_use(), agent_model=agent_model
    )
    results, interrupted, site = _execute(runs, setup, workers)
    _batch_summary(batch, args.tasks.resolve(), results, started, t0, workers, interrupted)
    if interrupted:
        print(
            f"clawbench-demo: interrupted; every agent and mitmdump was stopped, "
            f"{len(results)} of {len(runs)} runs recorded in {batch}",
            file=sys.stderr,
        )
        return 130
    show_runs(console, results, batch)
    show_site(console, site)
    scored = _score(console, batch, judges, args.models_yaml)
    console.print(
        f"\n{files_written(batch, ts)} Took {time.monotonic() - t0:.1f} s.", highlight=False
    )
    unexpected = [r for r in results if r.intercepted != EXPECTED[r.run.variant] or r.failure]
    for r in unexpected:
        console.print(f"[red]unexpected: {r.run.slug} ({r.run.harness}, {r.run.variant})[/]")
    if scored == 130:  # the scorer was interrupted and said so; its verdicts so far are kept
        return 130
    return 0 if not unexpected and not site.leaked and scored == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
