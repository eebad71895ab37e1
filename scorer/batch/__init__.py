"""A batch of runs, from the directories on disk to rescore-summary.json (docs/formats.md,
"The run directory" and "rescore-summary.json").

- discovery: the runs and batches under a path
- corpus: the task corpus given with --tasks
- rundir: one run directory read (a bad file recorded, never raised)
- recheck: the Stage-1 re-check with the shared matcher
- runplan: per run, Stage 1, the task behind it and the judge calls it needs
- scored_run: a run scored (Stage 1, verdicts, result category)
- rescore_summary: rescore-summary.json's model and the aggregation into it
- leaderboard: the leaderboard CSV
- writer: judge files and run-meta.json, written atomically as verdicts arrive
"""
