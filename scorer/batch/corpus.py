"""A task corpus given with --tasks: every task.json below a directory, keyed by its slug.

The slug is the task's directory name, which is the reference's test_case. The same slug twice
with identical files (v1-lite repeats v1) counts once; with different files it is an error, since
a run could not say which one it ran.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from proxy_addon.records import find_task_dirs
from proxy_addon.tasks import Task, TaskError, read_task_bytes, task_from_bytes


class CorpusError(ValueError):
    """The corpus cannot be used; the message names the file."""


@dataclass(frozen=True)
class CorpusTask:
    slug: str
    path: Path
    task: Task
    sha256: str


@dataclass
class Corpus:
    root: Path
    tasks: dict[str, CorpusTask] = field(default_factory=dict)
    by_sha: dict[str, CorpusTask] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The dataset name a leaderboard row shows: the corpus directory's name."""
        return self.root.resolve().name

    def find(self, test_case: str | None, sha256: str | None) -> CorpusTask | None:
        """The corpus task a run ran: by slug, else by the task file's hash."""
        if test_case and test_case in self.tasks:
            return self.tasks[test_case]
        if sha256:
            return self.by_sha.get(sha256)
        return None


def load_corpus(root: Path) -> Corpus:
    """Load every task under root; CorpusError on a bad task or a clashing slug."""
    if not root.is_dir():
        raise CorpusError(f"--tasks {root}: not a directory")
    corpus = Corpus(root)
    for path in (d / "task.json" for d in find_task_dirs(root)):
        try:
            raw = read_task_bytes(path)
            task = task_from_bytes(raw, path)
        except TaskError as e:
            raise CorpusError(f"--tasks: {e}") from e
        slug = path.parent.name
        sha = hashlib.sha256(raw).hexdigest()
        seen = corpus.tasks.get(slug)
        if seen is not None:
            if seen.sha256 != sha:
                raise CorpusError(
                    f"--tasks {root}: task {slug!r} appears twice with different contents "
                    f"({seen.path} and {path}); point --tasks at one suite"
                )
            continue
        entry = CorpusTask(slug, path, task, sha)
        corpus.tasks[slug] = entry
        corpus.by_sha.setdefault(sha, entry)
    if not corpus.tasks:
        raise CorpusError(f"--tasks {root}: no task.json found below it")
    return corpus


__all__ = ["Corpus", "CorpusError", "CorpusTask", "load_corpus"]
