"""`run --judge-model`: score a finished run right away with the scorer's own CLI entry point."""

from __future__ import annotations

from pathlib import Path

from sandbox.engine import EngineError


class JudgeUnavailable(EngineError):
    """The scorer cannot be called (not installed in this environment)."""


def score_run(run_dir: Path, judge_model: str) -> int:
    """Run `clawbench-score RUN_DIR --judge-model NAME` in-process; return its exit code."""
    try:
        from scorer.cli import main as score_main
    except ImportError as e:
        raise JudgeUnavailable(f"--judge-model needs the scorer (scorer.cli.main): {e}") from e
    return score_main([str(run_dir), "--judge-model", judge_model])
