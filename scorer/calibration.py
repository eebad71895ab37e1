"""The judge calibration set: labelled requests, their loader, and how a judge scores on them.

Format: test-cases/judge-calibration/README.md. A verdict of None (judge error, unparseable
reply) counts as the wrong answer, never as a pass or a skip: errors lower every figure and are
reported apart as n_errors.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from proxy_addon.tasks.model import JudgeContext
from scorer.stats import cohen_kappa

Kind = Literal[
    "positive",
    "negative",
    "hard-positive/format",
    "hard-positive/synonym",
    "hard-positive/extra-fields",
    "hard-positive/shape",
    "hard-negative/quantity",
    "hard-negative/variant",
    "hard-negative/date",
    "hard-negative/recipient",
    "hard-negative/item",
    "hard-negative/empty-field",
    "hard-negative/intent",
    "hard-negative/extra-action",
    "hard-negative/injection",
    "hard-negative/other",
]
KINDS: tuple[str, ...] = get_args(Kind)
"""Every kind of case, in report order."""

_MODEL = ConfigDict(extra="forbid", frozen=True, strict=True)


class CalibrationRequest(BaseModel):
    """The recorded request as the proxy parsed it (what the judge is shown)."""

    model_config = _MODEL

    url: str
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]
    body: Any = None
    params: dict[str, Any] | None = None

    @field_validator("url")
    @classmethod
    def _absolute(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an absolute http(s) URL with a host")
        return url

    def as_request(self) -> dict[str, Any]:
        """The interception.json `request` shape that scorer.judge.prompts.request_dump reads."""
        return {"url": self.url, "method": self.method, "params": self.params, "body": self.body}


class CalibrationCase(BaseModel):
    """One labelled request: label true means a strict grader calls it a match."""

    model_config = _MODEL

    id: str = Field(min_length=1, pattern=r"^\S+$")
    label: bool
    kind: Kind
    why: str = Field(min_length=1)
    request: CalibrationRequest


class CalibrationTaskInfo(BaseModel):
    """What the judge is told about the task: the instruction and the hidden grading context."""

    model_config = _MODEL

    slug: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    judge_context: JudgeContext | None = None


class CalibrationTask(BaseModel):
    """One file of the set: a task and its cases."""

    model_config = _MODEL

    task: CalibrationTaskInfo
    cases: list[CalibrationCase] = Field(min_length=1)


class CalibrationError(ValueError):
    """A calibration file that cannot be used; the message names the file, the field and the fix."""

    def __init__(self, path: str | Path, field: str, message: str) -> None:
        self.path, self.field, self.message = str(path), field, message
        super().__init__(f"{self.path}: {field}: {message}" if field else f"{self.path}: {message}")


def _field(loc: Iterable[Any]) -> str:
    out = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    return out or "(top level)"


_FIXES = {
    "extra_forbidden": "unknown key (remove it or check its spelling against the README's format)",
    "missing": "required key is missing (add it)",
    "string_too_short": "must not be empty (write it)",
    "too_short": "must hold at least one case (add one)",
    "string_pattern_mismatch": "must not contain whitespace (use e.g. 07-pizza-order/neg-quantity)",
}


def _fix(err: Any) -> str:
    kind, msg, found = err["type"], err["msg"], json.dumps(err.get("input"), default=str)[:60]
    if kind in _FIXES:
        return _FIXES[kind]
    if kind == "literal_error":
        return f"{msg}, got {found} (use one of those)"
    if kind.endswith("_type"):
        return f"{msg}, got {found} (write the JSON type the README gives)"
    return f"{msg.removeprefix('Value error, ')} (fix the value)"


def load_file(path: Path) -> CalibrationTask:
    """Read and validate one calibration file; the first problem raised as CalibrationError."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise CalibrationError(path, "", f"cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise CalibrationError(path, "", "not UTF-8 text (save the file as UTF-8)") from e
    except json.JSONDecodeError as e:
        at = f"line {e.lineno} column {e.colno}"
        raise CalibrationError(path, "", f"invalid JSON at {at}: {e.msg}") from e
    if not isinstance(data, dict):
        raise CalibrationError(path, "", 'must be a JSON object {"task": ..., "cases": [...]}')
    try:
        return CalibrationTask.model_validate(data)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        loc = [p for p in err["loc"] if not str(p).startswith("function-")]
        raise CalibrationError(path, _field(loc), _fix(err)) from e


def load_set(path: Path) -> list[CalibrationTask]:
    """Load a calibration set: a directory of *.json files (sorted by name) or one file."""
    path = Path(path)
    if not path.exists():
        raise CalibrationError(path, "", "no such file or directory")
    files = sorted(p for p in path.glob("*.json") if p.is_file()) if path.is_dir() else [path]
    if not files:
        raise CalibrationError(path, "", "no *.json files here (give the set's directory)")
    tasks, seen = [], {}
    for file in files:
        tasks.append(task := load_file(file))
        for i, case in enumerate(task.cases):
            if case.id in seen:
                fix = f"duplicate id {case.id!r}, first in {seen[case.id]} (give each its own)"
                raise CalibrationError(file, f"cases[{i}].id", fix)
            seen[case.id] = f"{file.name} cases[{i}]"
    return tasks


def cases_of(tasks: Iterable[CalibrationTask]) -> list[tuple[CalibrationTaskInfo, CalibrationCase]]:
    """Every (task, case) pair of a set, in file and case order."""
    return [(t.task, c) for t in tasks for c in t.cases]


@dataclass(frozen=True, slots=True)
class CalibrationMetrics:
    """A judge against the labels; a None verdict counts as the wrong answer (see n_errors)."""

    n: int
    n_errors: int  # verdicts that were None (judge error or unparseable reply)
    tp: int
    fp: int
    tn: int
    fn: int
    accuracy: float | None
    precision: float | None  # tp / (tp + fp); None when the judge matched nothing
    recall: float | None  # tp / (tp + fn): labelled matches the judge matched
    specificity: float | None  # tn / (tn + fp): labelled mismatches the judge refused
    kappa: float | None  # Cohen's kappa of labels and verdicts; None when undefined


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def metrics(labels: Sequence[bool], predictions: Sequence[bool | None]) -> CalibrationMetrics:
    """Accuracy, precision, recall, specificity and kappa of predictions against labels.

    A None prediction is a miss: it is scored as the opposite of its label (a false negative on
    a positive case, a false positive on a negative one) and counted in n_errors.
    """
    if len(labels) != len(predictions):
        raise ValueError(f"{len(labels)} labels but {len(predictions)} predictions")
    effective = [(not y) if p is None else p for y, p in zip(labels, predictions, strict=True)]
    table = Counter(zip(labels, effective, strict=True))
    tp, fn, fp, tn = table[True, True], table[True, False], table[False, True], table[False, False]
    return CalibrationMetrics(
        n=len(labels),
        n_errors=sum(p is None for p in predictions),
        tp=tp,
        fp=fp,
        tn=tn,
        fn=fn,
        accuracy=_ratio(tp + tn, len(labels)),
        precision=_ratio(tp, tp + fp),
        recall=_ratio(tp, tp + fn),
        specificity=_ratio(tn, tn + fp),
        kappa=cohen_kappa(list(labels), effective),
    )


def metrics_by_kind(
    cases: Sequence[CalibrationCase], predictions: Sequence[bool | None]
) -> dict[str, CalibrationMetrics]:
    """metrics() per kind of case, in KINDS order (kinds without cases left out)."""
    if len(cases) != len(predictions):
        raise ValueError(f"{len(cases)} cases but {len(predictions)} predictions")
    out = {}
    for kind in KINDS:
        rows = [(c.label, p) for c, p in zip(cases, predictions, strict=True) if c.kind == kind]
        if rows:
            out[kind] = metrics([y for y, _ in rows], [p for _, p in rows])
    return out


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _verdict(value: bool | None) -> str:
    return "error" if value is None else str(value).lower()


def render_report(
    cases: Sequence[CalibrationCase],
    predictions: Sequence[bool | None],
    reasons: Sequence[str | None] | None = None,
    judge: str = "",
) -> str:
    """Plain text: overall metrics, a row per kind, then every miss with the judge's reason."""
    if reasons is not None and len(reasons) != len(cases):
        raise ValueError(f"{len(cases)} cases but {len(reasons)} reasons")
    m = metrics([c.label for c in cases], predictions)
    lines = [
        f"Judge calibration{f' of {judge}' if judge else ''}: {m.n} cases, "
        f"{m.n_errors} judge errors (counted as wrong)",
        f"accuracy {_num(m.accuracy)}  precision {_num(m.precision)}  recall {_num(m.recall)}  "
        f"specificity {_num(m.specificity)}  kappa {_num(m.kappa)}",
        f"TP {m.tp}  FN {m.fn}  FP {m.fp}  TN {m.tn}",
        "",
        f"{'kind':<28} {'n':>4} {'right':>6} {'errors':>7} {'accuracy':>9}",
    ]
    for kind, k in metrics_by_kind(cases, predictions).items():
        right = k.tp + k.tn
        lines.append(f"{kind:<28} {k.n:>4} {right:>6} {k.n_errors:>7} {_num(k.accuracy):>9}")
    misses = [(i, c) for i, c in enumerate(cases) if predictions[i] != c.label]
    lines += ["", f"Misses: {len(misses)}"]
    for i, case in misses:
        lines.append(
            f"- {case.id} [{case.kind}] label {_verdict(case.label)}, "
            f"judge {_verdict(predictions[i])}"
        )
        if reasons is not None and (reason := reasons[i]):
            lines.append(f"    judge: {' '.join(reason.split())}")
        lines.append(f"    why:   {case.why}")
    return "\n".join(lines) + "\n"


__all__ = [
    "KINDS",
    "CalibrationCase",
    "CalibrationError",
    "CalibrationMetrics",
    "CalibrationRequest",
    "CalibrationTask",
    "CalibrationTaskInfo",
    "Kind",
    "cases_of",
    "load_file",
    "load_set",
    "metrics",
    "metrics_by_kind",
    "render_report",
]
