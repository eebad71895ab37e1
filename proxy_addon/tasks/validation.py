"""Whether a task.json can be used as is: schema (its url_pattern compiles), instruction,
extra_info (clawbench-tasks validate)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any, Literal

from pydantic import ValidationError

from proxy_addon.records.layout import find_task_dirs
from proxy_addon.tasks.model import (
    FROM_FILE,
    Task,
    TaskError,
    errors_from_validation,
    read_task_json,
)

__all__ = ["Finding", "find_task_files", "validate_file", "validate_task"]


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem in one task file: where, what, and how to fix it."""

    path: str
    field: str
    message: str
    fix: str = ""
    severity: Literal["error", "warning"] = "error"
    rule: str = "schema"

    def line(self) -> str:
        """`FILE: FIELD: problem (fix)`, the one-line form the CLI prints."""
        fix = f" ({self.fix})" if self.fix else ""
        return f"{self.path}: {self.field or '(file)'}: {self.message}{fix}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def find_task_files(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[Finding]]:
    """Task files named by PATHs (files, or directories searched recursively for task.json)."""
    files: list[Path] = []
    problems: list[Finding] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = [d / "task.json" for d in find_task_dirs(p)]
            if not found:
                problems.append(
                    Finding(str(p), "", "no task.json under this directory", "pass a task dir")
                )
            files.extend(found)
        elif p.is_file():
            files.append(p)
        else:
            problems.append(Finding(str(p), "", "no such file or directory", "check the path"))
    unique: dict[Path, Path] = {}
    for f in files:
        unique.setdefault(f.resolve(), f)
    return list(unique.values()), problems


def _from_task_error(err: TaskError) -> Finding:
    return Finding(err.path, err.field, err.message)


def _extra_info(items: Iterable[tuple[int, str]], path: Path) -> Iterator[Finding]:
    """The files that (index, extra_info path) pairs name: inside the task dir, present, unique."""
    task_dir = path.parent.resolve()
    names: dict[str, int] = {}
    for i, rel in items:
        field = f"extra_info[{i}].path"
        if not rel:
            continue  # a note without a file, as the reference's runner allows
        if PurePosixPath(rel).is_absolute() or PureWindowsPath(rel).is_absolute():
            yield Finding(
                str(path), field, f"absolute path {rel!r}", "make it relative to the task dir"
            )
            continue
        target = path.parent / rel
        try:
            inside = target.resolve().is_relative_to(task_dir)
        except (OSError, ValueError) as e:  # a NUL byte, a symlink loop
            yield Finding(str(path), field, f"{rel!r} cannot be resolved: {e}", "fix the path")
            continue
        if not inside:
            yield Finding(
                str(path), field, f"{rel!r} escapes the task directory", "keep files inside it"
            )
            continue
        if not target.exists():
            yield Finding(str(path), field, f"file {rel!r} is missing", "add it or fix the path")
        elif not target.is_file():
            yield Finding(str(path), field, f"{rel!r} is not a file", "point at a file")
        name = PurePosixPath(rel.replace("\\", "/")).name
        if name in names:
            yield Finding(
                str(path),
                field,
                f"same file name as extra_info[{names[name]}] ({name!r}); the agent's /my-info/ "
                "holds only one of them",
                "rename one",
            )
        names.setdefault(name, i)


def _content(instruction: Any, files: Iterable[tuple[int, str]], path: Path) -> list[Finding]:
    """The checks beyond the schema: instruction text, extra_info files."""
    out: list[Finding] = []
    if isinstance(instruction, str) and not instruction.strip():
        out.append(
            Finding(str(path), "instruction", "is empty", "write the prompt; runners refuse it")
        )
    out.extend(_extra_info(files, path))
    return out


def validate_task(task: Task, path: Path) -> list[Finding]:
    """Problems of a task that passed the schema: instruction, extra_info files."""
    files = ((i, item.path) for i, item in enumerate(task.extra_info))
    return _content(task.instruction, files, path)


def _validate_raw(data: dict[str, Any], path: Path) -> list[Finding]:
    """The same checks, best effort, on a task the schema refused: whatever has the right type."""
    items = data.get("extra_info")
    files = [
        (i, item["path"])
        for i, item in enumerate(items if isinstance(items, list) else [])
        if isinstance(item, dict) and isinstance(item.get("path"), str)
    ]
    return _content(data.get("instruction"), files, path)


def _schema_checked(path: Path) -> tuple[Any, Task | None, list[Finding]]:
    """The decoded JSON, the task if it passes the schema, and every schema problem."""
    try:
        data = read_task_json(path)
    except TaskError as e:
        return None, None, [_from_task_error(e)]
    if not isinstance(data, dict):
        got = type(data).__name__
        return (
            data,
            None,
            [Finding(str(path), "", f"must be a JSON object, got {got}", "wrap it in {}")],
        )
    try:
        return data, Task.model_validate(data, context=FROM_FILE), []
    except ValidationError as e:
        return data, None, [_from_task_error(err) for err in errors_from_validation(path, e)]


def load_checked(path: Path) -> tuple[Task | None, list[Finding]]:
    """Read and schema-check one task file, reporting every schema problem, not just the first."""
    _, task, problems = _schema_checked(path)
    return task, problems


def validate_file(path: Path) -> list[Finding]:
    """Every problem of one task file: schema first (the url_pattern among it), then instruction
    and extra_info, which are checked from the raw JSON (best effort) when the schema fails."""
    data, task, problems = _schema_checked(path)
    if task is not None:
        return validate_task(task, path)
    if not isinstance(data, dict):
        return problems  # unreadable, not JSON, or not an object: nothing more to check
    return problems + _validate_raw(data, path)
