"""What the agent is given of a task (docs/security.md, "What the agent is given"): the instruction,
/my-info/, a submit page.

Nothing else of task.json reaches the agent: eval_schema and judge_context stay in the
proxy-only copy. The instruction gets the reference's listing of the extra_info files appended.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from proxy_addon.tasks import Task

SUBMIT_HINTS = ("127.0.0.1:7878/submit", "localhost:7878/submit")
SUBMIT_PATH = "/api/task-submit"


@dataclass
class AgentView:
    """The instruction text, the files for /my-info/ (name → host path) and problems found."""

    instruction: str
    files: dict[str, Path] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    submit_page: bool = False


def needs_submit_page(task: Task) -> bool:
    """True for claw-eval style tasks: the instruction sends the agent to 127.0.0.1:7878/submit."""
    return SUBMIT_PATH in task.eval_schema.url_pattern or any(
        hint in task.instruction for hint in SUBMIT_HINTS
    )


def instruction_text(task: Task) -> str:
    """The task's instruction plus the reference's listing of the /my-info/ files."""
    parts = [task.instruction]
    listed = [(PurePosixPath(e.path).name, e.description) for e in task.extra_info if e.path]
    if listed:
        parts.append("\nAdditional files are also available under /my-info/ for this task:")
        parts += [f"- {name}: {desc}" for name, desc in listed]
    return "\n".join(parts)


def _resolve(task_dir: Path, rel: str) -> Path:
    if PurePosixPath(rel).is_absolute():
        raise ValueError(f"extra_info path must be relative, got {rel!r}")
    src = task_dir / rel
    try:
        src.resolve().relative_to(task_dir.resolve())
    except ValueError:
        raise ValueError(f"extra_info path escapes the task directory: {rel!r}") from None
    return src


def agent_view(task: Task, task_dir: Path) -> AgentView:
    """Collect the agent's view of a task; missing or unsafe extra_info files become warnings."""
    view = AgentView(instruction_text(task), submit_page=needs_submit_page(task))
    for index, entry in enumerate(task.extra_info):
        where = f"extra_info[{index}].path"
        try:
            src = _resolve(task_dir, entry.path)
        except ValueError as e:
            view.warnings.append(f"{where}: {e}")
            continue
        name = PurePosixPath(entry.path).name
        if not src.is_file():
            view.warnings.append(f"{where}: {src} is missing (not copied to /my-info/)")
        elif name in view.files:
            view.warnings.append(f"{where}: a second file named {name!r}; the first is kept")
        else:
            view.files[name] = src
    return view
