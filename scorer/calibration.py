"""A judge calibration set: labelled cases of what a judge is shown, and their loader.

Format: test-cases/judge-calibration/README.md; labelling rules: its RUBRIC.md. A case is what
the judge would be given for one run (the task's instruction, judge_context, run date and user
information; the intercepted request as the proxy records it) and the verdict a careful grader
gives it seeing the same: match, no_match or cannot_tell. The v1 set's files (a boolean label,
its own kinds) load as well: true is match, false is no_match.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from proxy_addon.records import JudgeVerdict
from proxy_addon.tasks import JudgeContext
from scorer.judge import DUMP_LIMIT, USER_FILE_LIMIT, JudgeInput, UserFile, request_view

KindV2 = Literal[
    "plain",
    "choice",
    "relative-date",
    "user-info",
    "id-only",
    "form",
    "multipart",
    "long-body",
    "truncated",
    "unreadable",
    "extra-fields",
    "near-miss",
    "method-override",
    "injection",
]
KindV1 = Literal[
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
Kind = Literal[KindV2, KindV1]
KINDS_V2: tuple[str, ...] = get_args(KindV2)
"""The kinds of the v2 set: what makes a case hard, whatever its label."""
KINDS_V1: tuple[str, ...] = get_args(KindV1)
"""The kinds of the v1 (regression) set: the label's sign and the planted change."""
KINDS: tuple[str, ...] = KINDS_V2 + KINDS_V1
"""Every kind, in report order."""
LABELS: tuple[JudgeVerdict, ...] = tuple(JudgeVerdict)

_MODEL = ConfigDict(extra="forbid", frozen=True, strict=True)


def kind_matches(kind: str, name: str) -> bool:
    """Whether a case's kind is the kind a gate names: itself, or its last part (`injection`
    names the v1 `hard-negative/injection` too)."""
    return kind == name or kind.rsplit("/", 1)[-1] == name


class CalibrationRequest(BaseModel):
    """The recorded request as the proxy wrote it in interception.json (what the judge sees)."""

    model_config = _MODEL

    url: str
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]
    body: Any = None
    params: dict[str, Any] | None = None
    headers: dict[str, str] | None = None
    content_type: str | None = None
    body_size: int | None = Field(default=None, ge=0)
    body_unverified: bool = False
    equivalence: str | None = None

    @field_validator("url")
    @classmethod
    def _absolute(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an absolute http(s) URL with a host")
        return url

    def as_request(self) -> dict[str, Any]:
        """The interception.json `request` shape that scorer.judge.evidence.request_view reads."""
        return self.model_dump(exclude_none=True)


class CalibrationCase(BaseModel):
    """One labelled request: the verdict a careful grader gives it under the strict rubric."""

    model_config = _MODEL

    id: str = Field(min_length=1, pattern=r"^\S+$")
    label: JudgeVerdict
    kind: Kind
    why: str = Field(min_length=1)
    request: CalibrationRequest

    @field_validator("label", mode="before")
    @classmethod
    def _v1_label(cls, value: Any) -> JudgeVerdict:
        """A label, or a v1 file's boolean: true is match, false is no_match."""
        if isinstance(value, bool):
            return JudgeVerdict.MATCH if value else JudgeVerdict.NO_MATCH
        if isinstance(value, str) and value in LABELS:
            return JudgeVerdict(value)
        raise ValueError(
            f"must be match, no_match or cannot_tell (a v1 file: true or false), got "
            f"{json.dumps(value)[:40]}"
        )


class UserInfoFile(BaseModel):
    """A file the agent was given under /my-info/: its text, or for a binary file its size."""

    model_config = _MODEL

    name: str = Field(min_length=1, pattern=r"^[^/\s]+$")
    description: str
    content: str | None = None  # None: not text (a PDF), shown to the judge by size only
    size: int | None = Field(default=None, ge=0)

    def as_user_file(self) -> UserFile:
        """The judge's view of it (scorer.judge.evidence.UserFile), cut as a run's would be."""
        if self.content is None:
            return UserFile(self.name, self.description, None, self.size or 0)
        size = self.size if self.size is not None else len(self.content.encode())
        cut = len(self.content) > USER_FILE_LIMIT
        text = self.content[:USER_FILE_LIMIT]
        return UserFile(self.name, self.description, text, size, cut)


class CalibrationTaskInfo(BaseModel):
    """What the judge is told about the task besides the request."""

    model_config = _MODEL

    slug: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    judge_context: JudgeContext | None = None
    run_date: date | None = None
    user_info: list[UserInfoFile] = Field(default_factory=list)

    @field_validator("run_date", mode="before")
    @classmethod
    def _iso(cls, value: Any) -> Any:
        return date.fromisoformat(value) if isinstance(value, str) else value


class CalibrationTask(BaseModel):
    """One file of the set: a task and its cases."""

    model_config = _MODEL

    task: CalibrationTaskInfo
    cases: list[CalibrationCase] = Field(min_length=1)


def judge_input(
    task: CalibrationTaskInfo, case: CalibrationCase, dump_limit: int = DUMP_LIMIT
) -> JudgeInput:
    """What a judge is given for a case: the same JudgeInput a real run builds."""
    context = task.judge_context.model_dump(exclude_none=True) if task.judge_context else None
    return JudgeInput(
        instruction=task.instruction,
        request=request_view(case.request.as_request(), dump_limit),
        judge_context=context,
        run_date=task.run_date,
        user_info=tuple(f.as_user_file() for f in task.user_info),
    )


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
    "string_pattern_mismatch": "must not contain whitespace (use e.g. 07-pizza-order/c03)",
    "enum": "must be match, no_match or cannot_tell",
}


def _fix(err: Any) -> str:
    kind, msg, found = err["type"], err["msg"], json.dumps(err.get("input"), default=str)[:60]
    if kind in _FIXES:
        return _FIXES[kind] + (f", got {found}" if kind == "enum" else "")
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


def _is_set(directory: Path) -> bool:
    """Whether a directory's first *.json file is a calibration file (a task and its cases)."""
    first = next(iter(sorted(directory.glob("*.json"))), None)
    try:
        data = json.loads(first.read_bytes()) if first is not None else None
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "cases" in data


def load_set(path: Path) -> list[CalibrationTask]:
    """Load a calibration set: a directory of *.json files (sorted by name) or one file."""
    path = Path(path)
    if not path.exists():
        raise CalibrationError(path, "", "no such file or directory")
    files = sorted(p for p in path.glob("*.json") if p.is_file()) if path.is_dir() else [path]
    if not files:
        subsets = sorted(p.name for p in path.iterdir() if p.is_dir() and _is_set(p))
        hint = f" (it holds the sets {', '.join(subsets)}: give one)" if subsets else ""
        raise CalibrationError(path, "", f"no *.json files here{hint}")
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


__all__ = [
    "KINDS",
    "KINDS_V1",
    "KINDS_V2",
    "LABELS",
    "CalibrationCase",
    "CalibrationError",
    "CalibrationRequest",
    "CalibrationTask",
    "CalibrationTaskInfo",
    "Kind",
    "UserInfoFile",
    "cases_of",
    "judge_input",
    "kind_matches",
    "load_file",
    "load_set",
]
