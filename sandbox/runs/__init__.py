"""The run pipeline every run goes through, whatever executes it (a container, or the demo's
local processes): prepare the run directory, let an executor run the agent, classify how it
ended and record run-meta.json (`pipeline`, `record`); what the agent is shown of a task
(`agentview`); many runs as a batch (`batch`)."""

from __future__ import annotations

from sandbox.runs.agentview import AgentView, agent_view
from sandbox.runs.batch import batch_summary, done_line, finished_job, job_of, run_all, say
from sandbox.runs.pipeline import (
    PreparedRun,
    RunJob,
    RunOutcome,
    SetupFailure,
    finish,
    load,
    prepare,
    run_one,
)

__all__ = [
    "AgentView",
    "PreparedRun",
    "RunJob",
    "RunOutcome",
    "SetupFailure",
    "agent_view",
    "batch_summary",
    "done_line",
    "finish",
    "finished_job",
    "job_of",
    "load",
    "prepare",
    "run_all",
    "run_one",
    "say",
]
