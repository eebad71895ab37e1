"""The sandbox's pre-flight: the agent's model and the judge, one tiny call each, before any
container starts (scorer.preflight makes the call and words what came back); and
`clawbench-sandbox check --model M --judge-model J --models-yaml F`, the same check alone.

    clawbench-sandbox check [--model ENTRY] [--harness H] [--judge-model NAME] --models-yaml F
"""

from __future__ import annotations

import argparse

from proxy_addon.cli_options import UsageError
from sandbox.harnesses import get_harness
from sandbox.harnesses.models import AgentModel, ModelUnavailable, model_entry, resolve_agent_model
from sandbox.judging import check_judge
from scorer.models_yaml import JudgeConfig
from scorer.preflight import (
    Endpoint,
    chat_endpoint,
    check_endpoint,
    judge_endpoint,
    messages_endpoint,
)

ROLE = "agent model"


def agent_endpoint(model: AgentModel) -> Endpoint:
    """The agent model's endpoint, called as its harness calls it."""
    if model.api_type == "anthropic-messages":
        return messages_endpoint(
            ROLE, model.name, model.source, model.call_url, model.name, model.api_key
        )
    return chat_endpoint(ROLE, model.name, model.source, model.base_url, model.name, model.api_key)


def endpoints(model: AgentModel | None, judge: JudgeConfig | None) -> list[Endpoint]:
    """The endpoints a command will spend on: its agent's model, then its judge."""
    found = [agent_endpoint(model)] if model is not None else []
    return found + ([judge_endpoint(judge)] if judge is not None else [])


def preflight(model: AgentModel | None, judge: JudgeConfig | None) -> None:
    """One tiny call to each endpoint; scorer.preflight.PreflightFailed names the one that
    failed (its entry, URL and what came back)."""
    for endpoint in endpoints(model, judge):
        check_endpoint(endpoint)


def run_check(args: argparse.Namespace) -> int:
    """`check`: resolve, then call each endpoint; 0, or PreflightFailed / UsageError raised."""
    if not args.model and not args.judge_model:
        raise UsageError("check: give --model ENTRY, --judge-model NAME, or both")
    model = None
    if args.model:
        if args.models_yaml is None:
            raise UsageError(f"check --model {args.model}: give --models-yaml FILE")
        try:
            if args.harness:
                model = resolve_agent_model(get_harness(args.harness), args.model, args.models_yaml)
            else:
                model = model_entry(args.model, args.models_yaml)
        except (ModelUnavailable, KeyError) as e:
            raise UsageError(str(e).strip("'\"")) from e
    judge = check_judge(args.judge_model, args.models_yaml) if args.judge_model else None
    for endpoint in endpoints(model, judge):
        check_endpoint(endpoint)
        print(f"ok: {endpoint.role} {endpoint.entry!r} ({endpoint.source}) at {endpoint.url}")
    return 0


__all__ = ["agent_endpoint", "endpoints", "preflight", "run_check"]
