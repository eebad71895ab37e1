"""clawbench-sandbox: build the agent image, run one task in it, or run a corpus as a batch.

    clawbench-sandbox build [--base-image IMG] [--ca-bundle FILE] [--tag NAME] [--chromium]
    clawbench-sandbox run TASK_DIR (--agent null | --agent scripted --script FILE
                                    | --agent-cmd CMD) [--image NAME] [--model M] [--harness H]
                                   [--out DIR] [--env K=V ...] [--judge-model NAME]
    clawbench-sandbox batch CORPUS_DIR (same agent options) [--out DIR] [--concurrency N]
                                   [--resume BATCH_DIR] [--include-placeholders]
                                   [--stop-after N] [--allow-incomplete]
                                   [--backend local|ray] [--ray-address HEAD:PORT]
    clawbench-sandbox check [--model ENTRY] [--judge-model NAME] --models-yaml FILE

Exit codes: sandbox.options (RUN_EXIT_CODES, BATCH_EXIT_CODES; `--help` shows them).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from proxy_addon.cli_options import UsageError
from proxy_addon.records import find_task_dirs
from sandbox.corpus_check import CorpusCheck, check_corpus
from sandbox.harnesses import get_harness, harness_image
from sandbox.host import BuildError, build_harness_image, build_image, host_ca_bundle, run_task
from sandbox.host import docker_api as engine
from sandbox.interrupt import sigterm_as_interrupt
from sandbox.options import parser
from sandbox.preflight import preflight, run_check
from sandbox.run_request import check_ray_options, request_from
from scorer.preflight import PreflightFailed

if TYPE_CHECKING:
    from sandbox.harnesses.models import AgentModel
    from scorer.models_yaml import JudgeConfig


def _build(args: argparse.Namespace) -> int:
    """The sandbox image, then each --harness layer on it (Chromium included for those)."""
    client = engine.connect()

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    ca_bundle = args.ca_bundle
    if ca_bundle is None and (host := host_ca_bundle()) is not None:
        variable, ca_bundle = host
        progress(f"the build's downloads trust {ca_bundle} (${variable}; or give --ca-bundle)")
    image_id = build_image(
        client,
        tag=args.tag,
        base_image=args.base_image,
        ca_bundle=ca_bundle,
        chromium=args.chromium or any(get_harness(h).chromium for h in args.harness),
        extra_packages=args.extra_packages,
        progress=progress,
    )
    print(f"{args.tag} {image_id}")
    for name in args.harness:
        tag = harness_image(args.tag, name)
        layer = build_harness_image(
            client,
            get_harness(name),
            base=args.tag,
            tag=tag,
            ca_bundle=ca_bundle,
            progress=progress,
        )
        print(f"{tag} {layer}")
    return 0


def _check_judge(args: argparse.Namespace) -> JudgeConfig | None:
    """--judge-model: the judge, resolved (entry, key) before any container starts."""
    if not args.judge_model:
        return None
    from sandbox.judging import check_judge

    return check_judge(args.judge_model, args.models_yaml)


def _preflight(
    args: argparse.Namespace, model: AgentModel | None, judge: JudgeConfig | None
) -> None:
    """Unless --no-preflight: the agent's model and the judge each answering one tiny call,
    after every local check and before any container starts."""
    if not args.no_preflight:
        preflight(model, judge)


def _run(args: argparse.Namespace) -> int:
    req, model = request_from(args, args.task_dir, args.out)
    judge = _check_judge(args)
    client = engine.connect()
    req.check_image(client)  # before any run directory or container
    _preflight(args, model, judge)
    outcome = run_task(client, req)
    judge_match = judge_verdict = None
    scored, result = 0, None
    if judge is not None and outcome.intercepted:
        from sandbox.judging import score_run

        scored, result = score_run(outcome.run_dir, judge, args.models_yaml)
        if result is not None:
            judge_match = result.batches[0].runs[0].judge_match
            judge_verdict = result.batches[0].runs[0].judge_verdict
    ending = outcome.ending
    if args.json:
        out = {
            "run_dir": str(outcome.run_dir),
            "result_category": ending.category,
            "stop_reason": ending.stop_reason,
            "failure_reason": ending.failure_reason,
            "exit_code": outcome.exit_code,
        }
        if args.judge_model:
            out["judge_match"] = judge_match
            out["judge_verdict"] = judge_verdict
        print(json.dumps(out))
    else:
        label = {0: "INTERCEPTED", 1: "NOT INTERCEPTED", 2: "INFRA FAILURE"}[outcome.exit_code]
        why = ending.failure_reason or ending.stop_reason
        judged = ""
        if args.judge_model and outcome.intercepted:
            judged = f", judge_match={judge_match}, judge_verdict={judge_verdict or 'none'}"
        print(f"{label} ({why}{judged}) — results in {outcome.run_dir}")
    if scored:
        from sandbox.judging import scoring_failed

        failed = scoring_failed(outcome.run_dir, scored, args.judge_model, args.models_yaml)
        print(f"clawbench-sandbox: {failed}", file=sys.stderr)
        return 130 if scored == 130 else 2
    if result is not None:
        from scorer.completeness import (
            EXIT_INCOMPLETE,
            incomplete_line,
            incompleteness,
            score_command,
        )

        if found := incompleteness(result):
            again = score_command(outcome.run_dir, [args.judge_model], args.models_yaml)
            print(f"clawbench-sandbox: {incomplete_line(found, again)}", file=sys.stderr)
            if not args.allow_incomplete:
                return EXIT_INCOMPLETE
    return outcome.exit_code


def _checked_corpus(args: argparse.Namespace) -> CorpusCheck | None:
    """The corpus read before anything starts; None (said on stderr) when invalid tasks stop
    the batch."""
    if not args.corpus.is_dir() or not find_task_dirs(args.corpus):
        raise UsageError(f"{args.corpus}: no */task.json in it (give a corpus directory)")
    check = check_corpus(args.corpus)
    for line in check.warnings:
        print(f"clawbench-sandbox: warning: {line}", file=sys.stderr)
    for line in check.invalid.values():
        skipping = "skipped (--skip-invalid): " if args.skip_invalid else ""
        print(f"clawbench-sandbox: {skipping}{line}", file=sys.stderr)
    if check.invalid and not args.skip_invalid:
        print(f"clawbench-sandbox: {check.refusal()}", file=sys.stderr)
        return None
    return check


def _batch(args: argparse.Namespace) -> int:
    from sandbox.host import BatchOptions, run_batch

    template, model = request_from(args, args.corpus, args.out)
    if args.backend == "ray":
        check_ray_options(args)
    elif args.ray_address is not None:
        raise UsageError("--ray-address goes with --backend ray")
    check = _checked_corpus(args)
    if check is None:
        return 2
    judge = _check_judge(args)
    client = engine.connect()
    template.check_image(client)  # once here, before the calls that cost
    _preflight(args, model, judge)
    options = BatchOptions(
        corpus=args.corpus,
        out=args.out,
        concurrency=args.concurrency if args.backend == "ray" else args.concurrency or 2,
        resume=args.resume,
        include_placeholders=args.include_placeholders,
        invalid=frozenset(check.invalid),
        judge=judge,
        models_yaml=args.models_yaml,
        stop_after=args.stop_after,
        allow_incomplete=args.allow_incomplete,
    )
    if args.backend == "ray":
        from sandbox.cluster.batch import RayOptions, run_ray_batch

        ray_options = RayOptions(args.ray_address)
        return run_ray_batch(client, template, options, ray_options, json_output=args.json)
    return run_batch(client, template, options, json_output=args.json)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of clawbench-sandbox."""
    try:
        args = parser().parse_args(argv)
    except UsageError as e:
        print(f"clawbench-sandbox: {e}", file=sys.stderr)
        return 2
    try:
        with sigterm_as_interrupt():  # SIGTERM cleans up like Ctrl-C
            commands = {"build": _build, "run": _run, "batch": _batch, "check": run_check}
            return commands[args.command](args)
    except (UsageError, engine.EngineError, BuildError, PreflightFailed) as e:
        if args.debug:
            raise
        print(f"clawbench-sandbox: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("clawbench-sandbox: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        # A bug or an unforeseen error: exit 2, never Python's 1, which means "not intercepted".
        if args.debug:
            raise
        print(
            f"clawbench-sandbox: unexpected {type(e).__name__}: {e} (--debug for the traceback)",
            file=sys.stderr,
        )
        return 2
