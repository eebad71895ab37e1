"""`run --judge-model`: score a finished run right away with the scorer's own CLI entry point."""

from __future__ import annotations

from pathlib import Path

from sandbox.engine import EngineError


class JudgeUnavailable(EngineError):
    """The scorer cannot be called (not installed in this environment)."""


def score_run(run_dir: Path, judge_model: str, models_yaml: Path | None = None) -> int:
    """Run `clawbench-score RUN_DIR --judge-model NAME [--models-yaml F]` in-process."""
    try:
        from scorer.cli import main as score_main
    except ImportError as e:
        raise JudgeUnavailable(f"--judge-model needs the scorer (scorer.cli.main): {e}") from e
    argv = [str(run_dir), "--judge-model", judge_model]
    if models_yaml is not None:
        argv += ["--models-yaml", str(models_yaml)]
    return score_main(argv)
