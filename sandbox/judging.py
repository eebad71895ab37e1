"""`--judge-model`: resolve the judge before any work, then score finished runs with the scorer.

check_judge resolves the judge once (scorer.scoring.resolve_judge: the same models.yaml, the same
environment), so a missing key or an unknown entry stops a command before it starts a container
or a run; the JudgeConfig it returns goes on to score_runs, which calls scorer.scoring.score and
returns its typed result (per run: intercepted, judge_match, final_pass, result_category).
score_run is the same as an exit code, for callers that only report; scoring_failed words a
failure for the caller, which reports it and exits non-zero (the runs stay, and can be scored
again).
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from sandbox.host import EngineError
from scorer.completeness import score_command
from scorer.display import print_result
from scorer.models_yaml import ConfigError, JudgeConfig, JudgeKeyMissing, read_prices
from scorer.scoring import SCORING_ERRORS, ScoreOptions, ScoreResult, resolve_judge, score


class JudgeUnavailable(EngineError):
    """The judge cannot be used: its configuration does not resolve."""


WITHOUT_JUDGE = ", or leave out --judge-model and score the runs later with clawbench-score"
"""clawbench-sandbox's way on without the built-in judge's key (it has no --no-judge)."""


def check_judge(
    judge_model: str, models_yaml: Path | None = None, without: str = WITHOUT_JUDGE
) -> JudgeConfig:
    """The judge resolved as the scorer resolves it, and the prices it will read from
    models_yaml checked; JudgeUnavailable (entry, key) if either is wrong. `without` ends the
    message of a missing built-in key: the calling command's way to go on without a judge."""
    try:
        if models_yaml is not None:
            read_prices(models_yaml)
        return resolve_judge(judge_model, models_yaml)
    except JudgeKeyMissing as e:
        raise JudgeUnavailable(f"--judge-model: {e}{without}") from e
    except ConfigError as e:
        raise JudgeUnavailable(f"--judge-model: {e}") from e


def score_runs(
    path: Path, judge: JudgeConfig | str, models_yaml: Path | None = None
) -> ScoreResult:
    """Score a run or a batch with this judge (its table on stderr); the scorer's errors raise
    (scorer.scoring.SCORING_ERRORS, KeyboardInterrupt)."""
    result = score(ScoreOptions(paths=[path], judges=[judge], models_yaml=models_yaml))
    print_result(result, Console(stderr=True))
    return result


def score_run(
    path: Path, judge: JudgeConfig | str, models_yaml: Path | None = None
) -> tuple[int, ScoreResult | None]:
    """score_runs with clawbench-score's exit code: (0, result), (1, result) when a write
    failed, (2, None) on bad input or a judge that cannot serve (said on stderr), (130, None)
    when interrupted."""
    try:
        result = score_runs(path, judge, models_yaml)
    except SCORING_ERRORS as e:
        print(f"clawbench-score: {e}", file=sys.stderr)
        return 2, None
    except KeyboardInterrupt:
        print("clawbench-score: interrupted; the verdicts received are saved", file=sys.stderr)
        return 130, None
    return (1 if result.write_errors else 0), result


def scoring_failed(path: Path, code: int, judge_model: str, models_yaml: Path | None) -> str:
    """One line saying scoring failed (its error above) and how to score again."""
    again = score_command(path, [judge_model], models_yaml)
    how = "was interrupted" if code == 130 else f"failed (exit {code}, its error above)"
    return f"scoring {how}; the runs are kept, score them again with: {again}"


__all__ = [
    "WITHOUT_JUDGE",
    "JudgeUnavailable",
    "check_judge",
    "score_run",
    "score_runs",
    "scoring_failed",
]
