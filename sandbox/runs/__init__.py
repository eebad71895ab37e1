"""The run pipeline every run goes through, whatever executes it (a container, or the demo's
local processes): prepare the run directory, let an executor run the agent, classify how it
ended and record run-meta.json (`pipeline`, `record`); what the agent is shown of a task
(`agentview`); many runs as a batch (`batch`)."""
