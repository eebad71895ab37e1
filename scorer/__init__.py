"""The offline scorer: re-grade recorded runs (Stage 1 re-check, Stage 2 LLM judges) into
rescore-summary.json and leaderboard rows.

- scoring: the library entry point, score(ScoreOptions) -> ScoreResult; cli: clawbench-score
  (cli_compare, cli_calibrate: its compare and calibrate commands)
- judge/: one judge call and everything around it; batch/: runs on disk to the summary
- models_yaml: judge entries; display: the table and progress; stats, compare, agreement,
  calibration, calibrate: intervals, paired comparisons, judge agreement and calibration
- html_report/: clawbench-report, one self-contained page from scored batches
"""
