"""task.json: the reference schema as pydantic models (`model`), corpus checks (`validation`),
the curator's linter (`lint`, `patterns`) and the `clawbench-tasks` command (`cli`)."""
