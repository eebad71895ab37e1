"""What clawbench-sandbox's run and batch options turn into: a RunRequest.

Everything is checked here, before any container starts: the task path, the agent (a built-in,
a command, or a harness with its --model resolved from models.yaml), --env and --mitm-set.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from proxy_addon.cli_options import UsageError
from proxy_addon.matching import redact_command
from sandbox.agents import ScriptError, load_script
from sandbox.harnesses import HARNESSES, harness_image
from sandbox.harnesses.models import AgentModel, ModelUnavailable, resolve_agent_model
from sandbox.host import AgentChoice, Limits, RunRequest
from sandbox.option_types import default_image


def _pairs(values: Sequence[str], flag: str, *, from_env: bool = False) -> dict[str, str]:
    out = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not key or (not sep and not from_env):
            raise UsageError(f"{flag} {item!r}: use KEY=VALUE")
        if not sep:
            if key not in os.environ:
                raise UsageError(f"{flag} {key}: not set in this environment; use {key}=VALUE")
            value = os.environ[key]
        out[key] = value
    return out


def _mitm_options(values: Sequence[str]) -> dict[str, str | list[str]]:
    """--mitm-set K=V ...; a key given twice becomes a list (mitmproxy's sequence options)."""
    out: dict[str, str | list[str]] = {}
    for item in values:
        key, value = next(iter(_pairs([item], "--mitm-set").items()))
        if key in out:
            prior = out[key]
            out[key] = [*([prior] if isinstance(prior, str) else prior), value]
        else:
            out[key] = value
    return out


def _agent(args: argparse.Namespace) -> AgentChoice:
    if args.harness in HARNESSES:
        if args.agent_cmd is not None or args.script is not None or args.agent != "null":
            raise UsageError(f"--harness {args.harness} runs its own agent: drop --agent/--script")
        return AgentChoice("harness", harness_name=args.harness)
    if args.agent_cmd is not None:
        if args.script is not None:
            raise UsageError("--script goes with --agent scripted, not with --agent-cmd")
        return AgentChoice("cmd", command=args.agent_cmd)
    if args.agent == "scripted":
        if args.script is None:
            raise UsageError("--agent scripted needs --script FILE (a JSON or YAML list)")
        try:
            return AgentChoice("scripted", script=tuple(load_script(args.script)))
        except ScriptError as e:
            raise UsageError(str(e)) from e
    if args.script is not None:
        raise UsageError("--script goes with --agent scripted")
    return AgentChoice("null")


def with_model(
    model: AgentModel, max_steps: int, env: dict[str, str], mitm: dict[str, str | list[str]]
) -> tuple[dict[str, str], dict[str, str | list[str]]]:
    """A harness run's environment and proxy options: the model's variables and the step cap
    (the user's --env wins), and the model's proxy options: its host among the model hosts (its
    calls pass the proxy like everything else, counted, never matched) and what the run's own
    calls look like (endpoint, model, key hash), so that they tell whether the model API failed
    the run."""
    env = {**model.env(), "CLAWBENCH_AGENT_MAX_STEPS": str(max_steps), **env}
    mitm = dict(mitm)
    for key, value in model.proxy_options().items():
        given = mitm.get(key, [])
        if isinstance(value, list):
            mitm[key] = [*([given] if isinstance(given, str) else given), *value]
        else:
            mitm[key] = value
    return env, mitm


def request_from(
    args: argparse.Namespace, task_dir: Path, out: Path
) -> tuple[RunRequest, AgentModel | None]:
    """A RunRequest from the shared run/batch options, and the harness's model (resolved, for
    the pre-flight) when one runs."""
    if not task_dir.exists():
        raise UsageError(f"{task_dir}: no such task directory or file")
    if args.upstream_ca is not None and not args.upstream_ca.is_file():
        raise UsageError(f"--upstream-ca {args.upstream_ca}: not a file")
    agent = _agent(args)
    image = args.image or default_image()
    env = _pairs(args.env, "--env", from_env=True)
    mitm = _mitm_options(args.mitm_set)
    if args.allow_private:
        mitm["clawbench_allow_private"] = list(args.allow_private)
    model = None
    if agent.kind == "harness":
        harness = HARNESSES[args.harness]
        if args.model is None:
            raise UsageError(
                f"--harness {harness.name} needs --model NAME: the models.yaml entry it calls "
                "(with --models-yaml FILE)"
            )
        try:
            model = resolve_agent_model(harness, args.model, args.models_yaml)
        except ModelUnavailable as e:
            raise UsageError(str(e)) from e
        image = args.image or harness_image(default_image(), harness.name)
        env, mitm = with_model(model, args.max_steps, env, mitm)
    request = RunRequest(
        task_dir=task_dir,
        agent=agent,
        out=out,
        image=image,
        model=args.model or "none",
        harness=args.harness,
        env=env,
        network=args.network,
        upstream_ca=args.upstream_ca,
        mitm_options=mitm,
        limits=Limits(
            memory=args.memory,
            pids=args.pids,
            cpus=args.cpus,
            disk=args.disk,
            records=args.records_budget,
        ),
        stop_grace_s=args.stop_grace,
        proxy_ready_timeout_s=args.proxy_timeout,
    )
    return request, model


def check_ray_options(args: argparse.Namespace) -> None:
    """--backend ray: Ray installed, and no secret on the command line (Ray records the driver's
    command line as its job's entrypoint and shows it in its dashboard)."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError(
            "--backend ray needs Ray: pip install 'clawbench-intercept[ray]' (on every node too)"
        ) from None
    for item in args.env:
        key, sep, _ = item.partition("=")
        if sep:
            raise UsageError(
                f"--env {key}=...: with --backend ray a value on the command line reaches Ray's "
                f"records; export {key} and pass --env {key}"
            )
    if args.agent_cmd is not None and redact_command(args.agent_cmd) != args.agent_cmd:
        raise UsageError(
            "--agent-cmd holds a secret-looking value, which Ray would record with the command "
            "line; pass it with --env NAME from the environment"
        )
