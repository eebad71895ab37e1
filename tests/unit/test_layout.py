"""Finding the tasks of a corpus: one function, so the sandbox, the scorer and the validator
agree on a nested corpus."""

from __future__ import annotations

import json
from pathlib import Path

from proxy_addon.records import find_task_dirs
from proxy_addon.tasks.validation import find_task_files
from scorer.batch import load_corpus

TASK = {
    "instruction": "Subscribe to the newsletter",
    "eval_schema": {"url_pattern": "/subscribe", "method": "POST"},
    "time_limit": 5,
}


def _task(d: Path) -> None:
    d.mkdir(parents=True)
    (d / "task.json").write_text(json.dumps(TASK))


def test_a_nested_corpus_is_found_the_same_way_by_every_part(tmp_path: Path) -> None:
    for rel in ("v1/010-b", "v1/002-a", "v2/group/001-c", ".hidden/003-d"):
        _task(tmp_path / rel)
    # a task's own files hold no tasks, even a task.json among them
    _task(tmp_path / "v1/002-a/extra_info/old")
    dirs = find_task_dirs(tmp_path)
    assert [d.name for d in dirs] == ["001-c", "002-a", "010-b"]
    files, problems = find_task_files([tmp_path])
    assert not problems and [f.parent for f in files] == dirs
    assert sorted(load_corpus(tmp_path).tasks) == ["001-c", "002-a", "010-b"]


def test_a_task_dir_or_file_is_its_own_corpus(tmp_path: Path) -> None:
    _task(tmp_path / "001-a")
    assert find_task_dirs(tmp_path / "001-a") == [tmp_path / "001-a"]
    assert find_task_dirs(tmp_path / "001-a" / "task.json") == [tmp_path / "001-a"]
