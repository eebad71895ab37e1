"""Run a judge on a calibration set and score it against the labels (clawbench-score calibrate).

Each case is judged with the prompt a real run gets (scorer.calibration.judge_input builds the
same JudgeInput a run does). No verdict is cached: a calibration measures the judge as it answers
now. The result (`CalibrationResult`) is what `calibrate --json` prints and `--out FILE` writes,
and what `clawbench-report --calibration FILE` reads; the file's format is docs/formats.md's.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from proxy_addon.records import JudgeVerdict, Tokens, write_bytes_atomic
from scorer.calibration import (
    KINDS,
    CalibrationError,
    cases_of,
    judge_input,
    kind_matches,
    load_set,
)
from scorer.calibration_stats import (
    DEFAULT_PASS_RATES,
    Bias,
    Figures,
    Gate,
    KindFigures,
    bias,
    by_kind,
    figures,
    gates,
)
from scorer.judge import DUMP_LIMIT, CallSettings, JudgeJob, JudgeResult, prompt_version, run_judge
from scorer.models_yaml import JudgeConfig

FORMAT = "clawbench-calibration/1"
_FORBID = ConfigDict(extra="forbid")


class Miss(BaseModel):
    """A case the judge did not answer as labelled."""

    model_config = _FORBID

    id: str
    kind: str
    label: JudgeVerdict
    judge: JudgeVerdict | None  # None: a judge error
    reason: str  # the judge's reason, or its error
    why: str  # the label's reason


class CallFigures(Tokens):
    model_config = _FORBID

    calls: int = 0
    errors: int = 0
    wall_s: float = 0.0


class CalibrationResult(BaseModel):
    """A judge's calibration: who judged, with which prompt and settings, on which set, and how
    it did (written by `calibrate --out`, read by `clawbench-report --calibration`)."""

    model_config = _FORBID

    format: Literal["clawbench-calibration/1"] = FORMAT
    judge: str
    judge_settings: dict[str, Any]
    rubric: Literal["strict", "lenient"]
    prompt_version: str
    dump_limit: int
    set: str  # the set's path as given
    set_sha256: str  # of its files' bytes, in name order
    n_cases: int
    figures: Figures
    by_kind: list[KindFigures]
    gates: list[Gate]
    min_kappa: float | None = None
    passed: bool
    bias: list[Bias] = Field(default_factory=list)
    misses: list[Miss] = Field(default_factory=list)
    calls: CallFigures = Field(default_factory=CallFigures)

    def bias_at(self, p: float) -> Bias | None:
        """The bias at another true pass rate (a batch's own), from the same error rates."""
        return bias(p, self.figures.false_positive_rate, self.figures.false_negative_rate)


def set_digest(path: Path) -> str:
    """sha256 over the set's files (name and bytes, in name order)."""
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


def calibrate(
    gold: Path,
    judge: JudgeConfig,
    rubric: str = "strict",
    calls: CallSettings | None = None,
    dump_limit: int = DUMP_LIMIT,
    required: dict[str, float] | None = None,
    min_kappa: float | None = None,
    pass_rates: Sequence[float] = DEFAULT_PASS_RATES,
) -> CalibrationResult:
    """Judge every case of the set at gold and score the verdicts (CalibrationError on a bad
    file or a gate naming no kind; JudgeFatal when the judge cannot serve)."""
    pairs = cases_of(load_set(gold))
    unknown = sorted(
        k for k in (required or {}) if not any(kind_matches(c.kind, k) for _, c in pairs)
    )
    if unknown:
        known = sorted({c.kind.rsplit("/", 1)[-1] for _, c in pairs})
        why = f"--require {', '.join(unknown)}: no case of that kind (kinds: {', '.join(known)})"
        raise CalibrationError(gold, "", why)
    jobs = [
        JudgeJob(i, rubric, judge_input(task, case, dump_limit), judge=judge.name)
        for i, (task, case) in enumerate(pairs)
    ]
    results: dict[int, JudgeResult] = {}

    def keep(res: JudgeResult) -> None:
        results[res.job.key] = res

    stats = asyncio.run(run_judge(judge, jobs, keep, calls or CallSettings()))
    replies = [results[i].reply for i in range(len(pairs))]
    cases = [case for _, case in pairs]
    verdicts = [r.verdict for r in replies]
    scored = figures([c.label for c in cases], verdicts)
    checked = gates(cases, verdicts, dict(required or {}))
    below = min_kappa is not None and (scored.kappa is None or scored.kappa < min_kappa)
    shown_bias = [
        b
        for p in pass_rates
        if (b := bias(p, scored.false_positive_rate, scored.false_negative_rate))
    ]
    misses = [
        Miss(
            id=c.id,
            kind=c.kind,
            label=c.label,
            judge=r.verdict,
            reason=r.reason if r.verdict is not None else (r.error or ""),
            why=c.why,
        )
        for c, r in zip(cases, replies, strict=True)
        if r.verdict is not c.label
    ]
    return CalibrationResult(
        judge=judge.name,
        judge_settings=judge.cache_params(),
        rubric=rubric,  # type: ignore[arg-type]
        prompt_version=prompt_version(rubric),
        dump_limit=dump_limit,
        set=str(gold),
        set_sha256=set_digest(Path(gold)),
        n_cases=len(cases),
        figures=scored,
        by_kind=by_kind(cases, verdicts, KINDS),
        gates=checked,
        min_kappa=min_kappa,
        passed=not below and all(g.passed for g in checked),
        bias=shown_bias,
        misses=misses,
        calls=CallFigures(
            calls=stats.calls,
            errors=stats.errors,
            **stats.tokens.model_dump(),
            wall_s=round(stats.wall_s, 3),
        ),
    )


def write_result(path: Path, result: CalibrationResult) -> None:
    """The result as JSON, atomically."""
    data = result.model_dump_json(indent=1).encode() + b"\n"
    write_bytes_atomic(path, data)


class CalibrationFileError(ValueError):
    """A calibration result file that cannot be read; the message names it and the fix."""


def read_result(path: Path) -> CalibrationResult:
    """A file `calibrate --out` wrote (CalibrationFileError names the file and the fix)."""
    try:
        return CalibrationResult.model_validate_json(path.read_bytes())
    except OSError as e:
        raise CalibrationFileError(f"{path}: cannot read: {e.strerror or e}") from e
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        fix = "write it with: clawbench-score calibrate --out FILE"
        raise CalibrationFileError(f"{path}: {where}: {first['msg']} ({fix})") from e


__all__ = [
    "FORMAT",
    "CalibrationFileError",
    "CalibrationResult",
    "Miss",
    "calibrate",
    "read_result",
    "set_digest",
    "write_result",
]
