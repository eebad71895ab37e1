"""clawbench-demo: the whole pipeline once, on this machine, in under a minute.

    clawbench-demo [--out DIR] [--no-browser] [--models-yaml FILE] [--judge-model NAME]
    clawbench-demo --sandbox [--image NAME] [--agent NAME ...]

A demo website, one mitmdump + addon per run, agents (headless Chromium, python, curl,
browser-use with a scripted model) doing the demo tasks right and wrong, a batch in the
reference's layout, scored by clawbench-score (the real judge when a key is set, Stage 1 only
otherwise), and the HTML report. On the host by default (sandbox.demo.onhost: no Docker);
with --sandbox each run in its own sandbox container, the site in one of its own on an internal
Docker network (sandbox.demo.sandboxed).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from proxy_addon.cli_options import OneLineParser, UsageError, positive_int
from proxy_addon.records import Category, now_iso, stamp, write_summary
from sandbox.demo.local import RunResult
from sandbox.demo.onhost import BROWSERS, OnHost
from sandbox.demo.sandboxed import Sandboxed, SandboxUnavailable
from sandbox.demo.scenarios import HARNESSES, MODEL, PlanError, load_plan
from sandbox.demo.show import files_written, show_runs, show_site
from sandbox.harnesses import BROWSER_USE
from sandbox.harnesses.models import ModelUnavailable, resolve_agent_model
from sandbox.host import DEFAULT_IMAGE, REPO, EngineError
from sandbox.interrupt import sigterm_as_interrupt
from sandbox.judging import JudgeUnavailable, check_judge
from sandbox.option_types import default_image
from sandbox.preflight import preflight
from sandbox.runs import batch_summary, job_of
from scorer.cli import NO_JUDGE_HINT
from scorer.completeness import EXIT_INCOMPLETE, incomplete_line, incompleteness
from scorer.display import print_result
from scorer.models_yaml import DEFAULT_JUDGE, JudgeConfig
from scorer.preflight import PreflightFailed
from scorer.scoring import SCORING_ERRORS, ScoreOptions, score

CORPUS = REPO / "test-cases" / "clawbench-demo"
EXPECTED = {"correct": True, "wrong": True, "gives-up": False}
"""Whether each variant must be intercepted: anything else is a failed demo (exit 1)."""


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="clawbench-demo",
        description="Run agents through the interception proxy on the demo tasks, write a batch "
        "in the\nreference's layout and score it.",
        epilog="exit codes:\n  0    every run ended as planned and the batch was scored\n"
        "  1    a run did not end as planned, a commit reached the site, or scoring failed\n"
        "  2    bad input (corpus, task.json, --out, judge settings), a failed pre-flight of\n"
        "       the judge or --agent-model, or, with --sandbox, no Docker engine or no image:\n"
        "       said before any run\n"
        "  3    incomplete: a verdict is missing or a run is an infra failure, such as\n"
        "       model_api_failure when --agent-model's API fails its calls (the line says\n"
        "       which and how to complete it; --allow-incomplete exits 0)\n"
        "  130  interrupted (Ctrl-C or SIGTERM): every agent and mitmdump is stopped first",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("out"),
        metavar="DIR",
        help="where the batch directory goes (default: out/)",
    )
    p.add_argument(
        "--tasks",
        type=Path,
        default=CORPUS,
        metavar="DIR",
        help="the corpus with the demo's plan (default: test-cases/clawbench-demo)",
    )
    p.add_argument(
        "--no-browser", action="store_true", help="skip the browser agents (Chromium, browser-use)"
    )
    p.add_argument(
        "--agent",
        action="append",
        choices=HARNESSES,
        metavar="NAME",
        help=f"run only this agent's runs, repeatable ({', '.join(HARNESSES)}; default: all)",
    )
    p.add_argument(
        "--sandbox",
        action="store_true",
        help="run each agent in its own sandbox container (needs Docker and the sandbox image)",
    )
    p.add_argument(
        "--image",
        metavar="NAME",
        help="with --sandbox: the sandbox image (default: $CLAWBENCH_SANDBOX_IMAGE or "
        f"{DEFAULT_IMAGE}; browser-use runs use its -browser-use layer)",
    )
    p.add_argument(
        "--models-yaml",
        type=Path,
        metavar="FILE",
        help="endpoints of the judge and --agent-model, with their prices (the reference's "
        "models.yaml)",
    )
    p.add_argument(
        "--judge-model",
        default=DEFAULT_JUDGE,
        metavar="NAME",
        help=f"the judge: a --models-yaml entry (default: {DEFAULT_JUDGE}, built in, with "
        "DEEPSEEK_API_KEY)",
    )
    p.add_argument("--no-judge", action="store_true", help="Stage 1 only even with a key set")
    p.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip the one-token call to the judge and --agent-model before any run",
    )
    p.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="exit 0 when verdicts are missing or a run is an infra failure (instead of 3)",
    )
    p.add_argument(
        "--concurrency",
        type=positive_int,
        default=3,
        metavar="N",
        help="runs at a time (default: %(default)s)",
    )
    p.add_argument(
        "--agent-model",
        metavar="NAME",
        help="browser-use calls this models.yaml entry (--models-yaml) instead of the scripted "
        "model; its key comes from the entry (not with --sandbox)",
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


@dataclass(frozen=True)
class _BatchSummary:
    """batch-summary.json of the demo's batch, written once the runs ended."""

    batch: Path
    corpus: Path
    image: str
    started: str
    t0: float
    workers: int

    def write(self, results: list[RunResult], interrupted: bool) -> None:
        jobs = []
        for r in results:
            job = job_of(r.run_dir, MODEL, r.run.slug)
            job.run_dir = str(r.run_dir.relative_to(self.batch))
            jobs.append(job)
        summary = batch_summary(
            started_at=self.started,
            elapsed_s=time.monotonic() - self.t0,
            concurrency=self.workers,
            harness=",".join(sorted({r.run.harness for r in results})),
            image=self.image,
            corpus=self.corpus,
            jobs=jobs,
            interrupted=interrupted,
        )
        write_summary(self.batch, summary)


def _new_batch(out: Path, ts: str) -> Path:
    batch = (out / f"batch-{ts}").resolve()
    try:
        batch.mkdir(parents=True, exist_ok=False)
    except OSError as e:
        raise PlanError(f"--out {out}: cannot create {batch}: {e.strerror or e}") from e
    return batch


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo; 0 when every run ended as planned, 1 otherwise, 2 on bad input, 130 when
    interrupted (Ctrl-C or SIGTERM: every agent and mitmdump is stopped first)."""
    try:
        args = parser().parse_args(argv)
    except UsageError as e:
        print(f"clawbench-demo: {e}", file=sys.stderr)
        return 2
    given = sys.argv[1:] if argv is None else argv
    args.command = shlex.join(["clawbench-demo", *given])  # what re-runs it, for messages
    try:
        with sigterm_as_interrupt():  # SIGTERM stops the demo like Ctrl-C
            return _demo(args)
    except KeyboardInterrupt:
        print("clawbench-demo: interrupted; nothing is left running", file=sys.stderr)
        return 130


def _score(
    console: Console,
    batch: Path,
    judges: list[JudgeConfig],
    models_yaml: Path | None,
    allow_incomplete: bool = False,
    rerun: str = "clawbench-demo",
) -> int:
    """The scorer's library on the batch (its table is printed), then the HTML report; 0, or
    clawbench-score's exit code for what went wrong (3: incomplete, unless allow_incomplete).
    models_yaml prices the agent's tokens; rerun: the demo's command, which re-runs its infra
    failures."""
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
    found = incompleteness(result)
    if scored == 0 and found:
        again = f"clawbench-score {batch}" + "".join(f" --judge-model {j.name}" for j in judges)
        again += f" --models-yaml {models_yaml}" if models_yaml else ""
        line = incomplete_line(found, again, rerun)
        print(f"clawbench-demo: {line}", file=sys.stderr)
        scored = 0 if allow_incomplete else EXIT_INCOMPLETE
    return scored


def _as_planned(r: RunResult) -> bool:
    """The run ended as its variant plans; a run its model API failed (--agent-model) is an
    infra failure, not the demo's: the scorer's incomplete line counts it (exit 3)."""
    if r.category == Category.MODEL_API_FAILURE:
        return True
    return r.intercepted == EXPECTED[r.run.variant] and not r.failure


def _wanted(args: argparse.Namespace) -> tuple[str, ...]:
    """The agents asked for (--agent, --no-browser), in the plan's order."""
    chosen = [h for h in HARNESSES if not args.agent or h in args.agent]
    return tuple(h for h in chosen if not (args.no_browser and h in BROWSERS))


def _mode(args: argparse.Namespace, console: Console) -> OnHost | Sandboxed:
    """Where the runs go: this machine, or sandbox containers (SandboxUnavailable)."""
    if not args.sandbox:
        if args.image:
            raise PlanError("--image goes with --sandbox")
        return OnHost(_wanted(args), console)
    if args.agent_model:
        raise PlanError(
            "--agent-model goes without --sandbox: the sandbox demo's network is internal, no "
            "model API is reachable from it (run a real model with clawbench-sandbox batch)"
        )
    return Sandboxed(_wanted(args), args.image or default_image(), console)


def _demo(args: argparse.Namespace) -> int:
    console = Console()
    t0, started, ts = time.monotonic(), now_iso(), stamp()
    try:  # every check before the batch directory exists
        mode = _mode(args, console)
        runs = load_plan(args.tasks, mode.harnesses)
        judges = _judges(args, console)
        if args.agent_model and isinstance(mode, OnHost):
            mode.agent_model = resolve_agent_model(
                BROWSER_USE, args.agent_model, args.models_yaml, "--agent-model"
            )
        if not args.no_preflight:
            agent_model = mode.agent_model if isinstance(mode, OnHost) else None
            preflight(agent_model, judges[0] if judges else None)
        batch = _new_batch(args.out, ts)
    except (
        PlanError,
        JudgeUnavailable,
        ModelUnavailable,
        SandboxUnavailable,
        PreflightFailed,
    ) as e:
        print(f"clawbench-demo: {e}", file=sys.stderr)
        return 2
    workers = args.concurrency
    console.print(
        f"Demo: {len(runs)} runs ({', '.join(mode.harnesses)}) through {mode.how}, {workers} "
        f"at a time → {batch}",
        highlight=False,
    )
    try:
        results, interrupted, site = mode.run(runs, batch, ts, workers)
    except EngineError as e:  # the sandbox's own setup (its network, the site): nothing ran
        with contextlib.suppress(OSError):
            batch.rmdir()
        print(f"clawbench-demo: {e}", file=sys.stderr)
        return 2
    summary = _BatchSummary(batch, args.tasks.resolve(), mode.image, started, t0, workers)
    summary.write(results, interrupted)
    if interrupted:
        print(
            f"clawbench-demo: interrupted; every agent and mitmdump was stopped, "
            f"{len(results)} of {len(runs)} runs recorded in {batch}",
            file=sys.stderr,
        )
        return 130
    show_runs(console, results, batch)
    show_site(console, site, {r.run.harness for r in results})
    scored = _score(console, batch, judges, args.models_yaml, args.allow_incomplete, args.command)
    console.print(
        f"\n{files_written(batch, ts)} Took {time.monotonic() - t0:.1f} s.", highlight=False
    )
    unexpected = [r for r in results if not _as_planned(r)]
    for r in unexpected:
        console.print(f"[red]unexpected: {r.run.slug} ({r.run.harness}, {r.run.variant})[/]")
    if scored == 130:  # the scorer was interrupted and said so; its verdicts so far are kept
        return 130
    if unexpected or site.leaked or scored not in (0, EXIT_INCOMPLETE):
        return 1
    return scored


if __name__ == "__main__":
    sys.exit(main())
