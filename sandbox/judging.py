"""`--judge-model`: check the judge before any work, score finished runs with the scorer's CLI.

check_judge resolves the judge as clawbench-score will (same models.yaml, same environment), so
a missing key or an unknown entry stops a command before it starts a container or a run.
score_run calls `clawbench-score` in-process; scoring_failed words its failure for the caller,
which reports it and exits non-zero (the runs stay, and can be scored again).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from sandbox.host.docker_api import EngineError


class JudgeUnavailable(EngineError):
    """The judge cannot be used: the scorer is not installed, or its config does not resolve."""


def _score_main() -> Callable[[Sequence[str] | None], int]:
    try:
        from scorer.cli import main
    except ImportError as e:
        raise JudgeUnavailable(f"--judge-model needs the scorer (scorer.cli.main): {e}") from e
    return main


def check_judge(judge_model: str, models_yaml: Path | None = None) -> None:
    """JudgeUnavailable unless the judge resolves (entry found, key set), as the scorer will."""
    _score_main()
    from scorer.models_yaml import ConfigError, resolve_judge

    try:
        resolve_judge(judge_model, models_yaml)
    except ConfigError as e:
        raise JudgeUnavailable(f"--judge-model: {e}") from e


def score_command(path: Path, judge_model: str, models_yaml: Path | None = None) -> list[str]:
    """The clawbench-score arguments that score path with this judge."""
    argv = [str(path), "--judge-model", judge_model]
    if models_yaml is not None:
        argv += ["--models-yaml", str(models_yaml)]
    return argv


def score_run(run_dir: Path, judge_model: str, models_yaml: Path | None = None) -> int:
    """Run `clawbench-score RUN_DIR --judge-model NAME [--models-yaml F]` in-process: its code."""
    return _score_main()(score_command(run_dir, judge_model, models_yaml))


def scoring_failed(path: Path, code: int, judge_model: str, models_yaml: Path | None) -> str:
    """One line saying scoring failed (clawbench-score printed why) and how to score again."""
    again = " ".join(["clawbench-score", *score_command(path, judge_model, models_yaml)])
    how = "was interrupted" if code == 130 else f"failed (exit {code}, its error above)"
    return f"scoring {how}; the runs are kept, score them again with: {again}"
