"""A corpus checked before a batch starts: every task.json read and schema-checked first.

A task that does not load could only end as an infra failure after a container started, so a
batch refuses the corpus (one line per bad task, exit 2) unless --skip-invalid runs the rest.
Problems a run survives (a missing extra_info file: the agent's /my-info/ lacks it, as the
reference's runner does) are warnings, shown once before the batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from proxy_addon.records import case_name, find_task_dirs
from proxy_addon.tasks import load_checked, validate_task


@dataclass
class CorpusCheck:
    """What checking a corpus found."""

    corpus: Path
    tasks: list[Path] = field(default_factory=list)
    invalid: dict[Path, str] = field(default_factory=dict)
    """Task dir → one line: its file, field and fix (and how many more problems it has)."""
    warnings: list[str] = field(default_factory=list)

    @property
    def invalid_cases(self) -> list[str]:
        return sorted(case_name(d) for d in self.invalid)

    def refusal(self) -> str:
        """The closing line when invalid tasks stop the batch."""
        return (
            f"{len(self.invalid)} of {len(self.tasks)} tasks in {self.corpus} do not load "
            f"(above); fix them (clawbench-tasks validate {self.corpus}) or pass --skip-invalid "
            "to run the rest"
        )


def check_corpus(corpus: Path) -> CorpusCheck:
    """Every task of the corpus read and checked, none run."""
    check = CorpusCheck(corpus, find_task_dirs(corpus))
    for task_dir in check.tasks:
        path = task_dir / "task.json"
        task, problems = load_checked(path)
        if task is not None:
            content = validate_task(task, path)
            problems = [f for f in content if not f.field.startswith("extra_info")]
            check.warnings += [
                f"{f.line()}; the run goes on without it"
                for f in content
                if f.field.startswith("extra_info")
            ]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            check.invalid[task_dir] = problems[0].line() + more
    return check


__all__ = ["CorpusCheck", "check_corpus"]
