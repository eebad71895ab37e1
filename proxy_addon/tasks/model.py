"""task.json as the reference schema in pydantic models; loader errors name file and field."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_core import PydanticCustomError

PLACEHOLDER = "__PLACEHOLDER_WILL_NOT_MATCH__"
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")

_FORBID = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

REGEX_FIX = r"escape literal ( ) [ ] ? + * with a backslash"
"""How to fix a url_pattern that does not compile."""


FROM_FILE: dict[str, Any] = {"task.json": True}
"""Validation context for a task.json's content (parse_task, validation): JSON null is refused
where the schema has none, while Python callers may still pass None for "not given"."""


def _not_null(kind: str) -> BeforeValidator:
    """An optional key may be left out, but the schema has no null for it (`"body": null`)."""

    def check(value: Any, info: ValidationInfo) -> Any:
        if value is None and info.context and info.context.get("task.json"):
            raise PydanticCustomError("null_forbidden", "must be {kind}", {"kind": kind})
        return value

    return BeforeValidator(check)


_OBJECT = _not_null("an object")
_STRING = _not_null("a string")


class EvalSchema(BaseModel):
    """What the interceptor blocks: URL regex, method, optional body and query filters."""

    model_config = _FORBID

    url_pattern: str
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    body: Annotated[dict[str, Any] | None, _OBJECT] = None
    params: Annotated[dict[str, Any] | None, _OBJECT] = None

    @property
    def is_placeholder(self) -> bool:
        """True for a log-only task: empty pattern or the reference's placeholder token."""
        return _log_only(self.url_pattern)

    @field_validator("url_pattern")
    @classmethod
    def _compiles(cls, pattern: str) -> str:
        """The one check that url_pattern compiles (a log-only pattern is never compiled)."""
        if not _log_only(pattern):
            try:
                re.compile(pattern)
            except re.error as e:
                raise PydanticCustomError(
                    "url_pattern_invalid",
                    "regex does not compile: {error} ({fix})",
                    {"error": str(e), "fix": REGEX_FIX},
                ) from e
        return pattern


def _log_only(pattern: str) -> bool:
    return not pattern or PLACEHOLDER in pattern


class CommonInfo(BaseModel):
    model_config = _FORBID

    email_credentials: Literal["credentials to use the assigned disposable email account"]
    user_info: Literal["alex_green_personal_info.json; the dummy user's personal information"]
    user_resume: Literal["PDF resume with disposable email account injected"]


class Metadata(BaseModel):
    """Human-readable metadata; the reference schema allows extra keys here."""

    model_config = ConfigDict(extra="allow", strict=True, populate_by_name=True)

    task_id: int
    metaclass: str
    class_: str = Field(alias="class")
    description: str
    sites_involved: list[str]
    platform: str
    common_info: CommonInfo


class ExtraInfo(BaseModel):
    model_config = _FORBID

    path: str
    description: str


class JudgeContext(BaseModel):
    """Hidden context for the judge only; never shown to the agent."""

    model_config = _FORBID

    rubric: Annotated[str | None, _STRING] = None
    reference_solution: Annotated[str | None, _STRING] = None
    source_task_yaml: Annotated[str | None, _STRING] = None


class Task(BaseModel):
    """One task.json."""

    model_config = _FORBID

    schema_ref: Any = Field(default=None, alias="$schema")
    metadata: Annotated[Metadata | None, _OBJECT] = None
    instruction: str
    eval_schema: EvalSchema
    time_limit: Annotated[float, Field(ge=1, allow_inf_nan=False)]
    extra_info: list[ExtraInfo] = Field(default_factory=list)
    judge_context: Annotated[JudgeContext | None, _OBJECT] = None

    @property
    def task_id(self) -> int | None:
        return self.metadata.task_id if self.metadata else None


class TaskError(ValueError):
    """A task.json that cannot be used; the message names the file, the field and the fix."""

    def __init__(self, path: str | os.PathLike[str], field: str, message: str) -> None:
        self.path = str(path)
        self.field = field
        self.message = message
        super().__init__(f"{self.path}: {field}: {message}" if field else f"{self.path}: {message}")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "a string", list: "an array", dict: "an object"}.get(type(value), "a value")


def _message(err: Any, loc: tuple[Any, ...]) -> str:
    """pydantic's message plus what was found and how to fix it."""
    kind, msg, found = err["type"], err["msg"], err.get("input")
    if kind == "extra_forbidden":
        return f"unknown key {loc[-1]!r} (remove it or check its spelling against task.schema.json)"
    if kind == "missing":
        return "required key is missing (add it)"
    if kind == "null_forbidden":
        return f"{msg}, got null (give one, or remove the key to leave it out)"
    if kind == "literal_error":
        return f"{msg}, got {json.dumps(found, ensure_ascii=False, default=str)} (use one of those)"
    if kind == "greater_than_equal":
        return f"must be at least 1 (minutes), got {found!r} (raise it)"
    if kind == "finite_number":
        return f"must be a finite number of minutes, got {found!r}"
    if kind.endswith("_type"):
        return f"{msg}, got {_json_type(found)} (fix the value's type)"
    return msg


def _field(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def errors_from_validation(path: str | os.PathLike[str], exc: ValidationError) -> list[TaskError]:
    """Turn pydantic's errors into one TaskError per problem, each with file, field and fix."""
    out = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if p not in ("function-after", "str", "int", "float"))
        out.append(TaskError(path, _field(loc), _message(err, loc)))
    return out


def parse_task(data: Any, path: str | os.PathLike[str] = "<task>") -> Task:
    """Validate an already-decoded task.json; raise the first problem as TaskError."""
    if not isinstance(data, dict):
        raise TaskError(path, "", f"must be a JSON object, got {type(data).__name__}")
    try:
        return Task.model_validate(data, context=FROM_FILE)
    except ValidationError as e:
        raise errors_from_validation(path, e)[0] from e


class _NotJson(Exception):
    """NaN or Infinity: Python's json reads them, JSON has no such values."""


def _not_json(constant: str) -> Any:
    raise _NotJson(constant)


def read_task_bytes(path: str | os.PathLike[str]) -> bytes:
    """A task file's bytes (a directory means its task.json), with errors naming the file."""
    p = task_path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise TaskError(p, "", "file not found; pass a task.json or its directory") from None
    except OSError as e:
        raise TaskError(p, "", f"cannot read: {e}") from e


def decode_task_json(raw: bytes, path: str | os.PathLike[str]) -> Any:
    """A task file's bytes as JSON, strictly: UTF-8, and no NaN or Infinity (Python's json reads
    them, JSON has no such values); TaskError naming the file. The one decoder of task.json."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TaskError(path, "", f"cannot read: {e}") from e
    try:
        return json.loads(text, parse_constant=_not_json)
    except json.JSONDecodeError as e:
        raise TaskError(
            path, "", f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}"
        ) from e
    except _NotJson as e:
        raise TaskError(
            path, "", f"{e} is not JSON (a filter value must be a number, string, bool or null)"
        ) from e
    except ValueError as e:  # valid JSON Python will not read: an integer of > 4300 digits
        why = str(e).split(";")[0]
        raise TaskError(path, "", f"JSON not readable: {why} (shorten the number)") from e


def read_task_json(path: str | os.PathLike[str]) -> Any:
    """Read and JSON-decode a task file (strictly, as decode_task_json), errors naming the file."""
    return decode_task_json(read_task_bytes(path), task_path(path))


def task_from_bytes(raw: bytes, path: str | os.PathLike[str]) -> Task:
    """A task file's bytes decoded and validated: what load_task does once the file is read."""
    return parse_task(decode_task_json(raw, path), path)


def task_path(path: str | os.PathLike[str]) -> Path:
    """A task directory or file → the task.json path."""
    p = Path(path)
    return p / "task.json" if p.is_dir() else p


def load_task(path: str | os.PathLike[str]) -> Task:
    """Load and validate one task.json (or a directory holding one)."""
    return task_from_bytes(read_task_bytes(path), task_path(path))
