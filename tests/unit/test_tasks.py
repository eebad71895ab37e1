"""The task model (docs/formats.md, "task.json"): the reference schema, strictly; errors name file
and field."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from proxy_addon.tasks import Task, TaskError, load_task, parse_task
from proxy_addon.tasks.model import PLACEHOLDER
from tests.support.json_errors import json_error

COMMON_INFO = {
    "email_credentials": "credentials to use the assigned disposable email account",
    "user_info": "alex_green_personal_info.json; the dummy user's personal information",
    "user_resume": "PDF resume with disposable email account injected",
}
MINIMAL: dict[str, Any] = {
    "instruction": "Buy two mugs",
    "eval_schema": {"url_pattern": r"shop\.test/api/checkout", "method": "POST"},
    "time_limit": 5,
}
FULL: dict[str, Any] = {
    "$schema": "../../task.schema.json",
    "metadata": {
        "task_id": 1,
        "metaclass": "shopping",
        "class": "checkout",
        "description": "Buy two mugs",
        "sites_involved": ["shop.test"],
        "platform": "shop",
        "common_info": COMMON_INFO,
        "anything_else": "metadata allows extra keys",
    },
    "instruction": "Buy two mugs",
    "eval_schema": {
        "url_pattern": r"shop\.test/api/checkout",
        "method": "POST",
        "body": {"sku": "MUG"},
        "params": {"v": "2"},
    },
    "time_limit": 7.5,
    "extra_info": [{"path": "extra_info/a.json", "description": "the address"}],
    "judge_context": {"rubric": "r", "reference_solution": "s", "source_task_yaml": "y"},
}


def test_every_reference_task_loads(reference_corpus: Path) -> None:
    files = sorted(reference_corpus.glob("*/*/task.json"))
    assert len(files) == 332
    tasks = [load_task(f) for f in files]
    assert sum(t.eval_schema.is_placeholder for t in tasks) == 90
    assert {f.parent.parent.name for f in files} == {
        "v1",
        "v1-lite",
        "v2",
        "claw-eval",
        "environmental-observation",
    }


def test_minimal_and_full_tasks_load() -> None:
    assert parse_task(MINIMAL).time_limit == 5
    task = parse_task(FULL)
    assert task.metadata is not None and task.metadata.class_ == "checkout"
    assert task.task_id == 1
    assert task.eval_schema.body == {"sku": "MUG"}
    assert task.extra_info[0].path == "extra_info/a.json"
    assert task.judge_context is not None and task.judge_context.rubric == "r"


def _with(base: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    data = copy.deepcopy(base)
    *parents, last = dotted.split(".")
    node = data
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return data


_DELETE = object()


@pytest.mark.parametrize(
    ("dotted", "value", "field", "words"),
    [
        # unknown keys, anywhere the schema forbids them, name the key
        ("instructions", "typo", "instructions", ["unknown key 'instructions'", "spelling"]),
        ("eval_schema.query", {}, "eval_schema.query", ["unknown key 'query'"]),
        ("extra_info.0.file", "x", "extra_info[0].file", ["unknown key 'file'"]),
        ("judge_context.notes", "x", "judge_context.notes", ["unknown key 'notes'"]),
        ("metadata.common_info.x", "y", "metadata.common_info.x", ["unknown key 'x'"]),
        # required keys
        ("instruction", _DELETE, "instruction", ["required key is missing"]),
        ("eval_schema.method", _DELETE, "eval_schema.method", ["required key is missing"]),
        ("metadata.class", _DELETE, "metadata.class", ["required key is missing"]),
        ("extra_info.0.description", _DELETE, "extra_info[0].description", ["missing"]),
        # wrong types name the field and what was found
        ("instruction", 5, "instruction", ["valid string", "got a number"]),
        ("eval_schema.url_pattern", None, "eval_schema.url_pattern", ["got null"]),
        ("eval_schema.body", ["commit"], "eval_schema.body", ["dictionary", "got an array"]),
        ("eval_schema.params", "type=RCO", "eval_schema.params", ["got a string"]),
        ("time_limit", "30", "time_limit", ["valid number", "got a string"]),
        ("time_limit", True, "time_limit", ["got a boolean"]),
        ("metadata.task_id", "873", "metadata.task_id", ["valid integer", "got a string"]),
        ("metadata.sites_involved", "resy.com", "metadata.sites_involved", ["got a string"]),
        ("extra_info", {"path": "a"}, "extra_info", ["valid list", "got an object"]),
        ("judge_context.rubric", 1, "judge_context.rubric", ["got a number"]),
        # optional keys may be left out, but the schema has no null for them
        ("eval_schema.body", None, "eval_schema.body", ["must be an object, got null", "remove"]),
        ("eval_schema.params", None, "eval_schema.params", ["must be an object, got null"]),
        ("metadata", None, "metadata", ["must be an object, got null", "remove the key"]),
        ("judge_context", None, "judge_context", ["must be an object, got null"]),
        ("judge_context.rubric", None, "judge_context.rubric", ["must be a string, got null"]),
        # wrong values
        ("eval_schema.method", "post", "eval_schema.method", ["'POST'", 'got "post"']),
        ("eval_schema.method", "HEAD", "eval_schema.method", ["'DELETE'", 'got "HEAD"']),
        ("time_limit", 0, "time_limit", ["at least 1", "got 0"]),
        ("time_limit", 0.5, "time_limit", ["at least 1"]),
        ("time_limit", float("inf"), "time_limit", ["finite"]),
        ("time_limit", float("nan"), "time_limit", ["finite"]),
        (
            "metadata.common_info.user_info",
            "alex.json",
            "metadata.common_info.user_info",
            ["alex_green_personal_info.json", 'got "alex.json"'],
        ),
    ],
)
def test_bad_task_names_file_and_field(
    dotted: str, value: Any, field: str, words: list[str]
) -> None:
    with pytest.raises(TaskError) as info:
        parse_task(_with(FULL, dotted, value), "corpus/x/task.json")
    err = info.value
    assert err.path == "corpus/x/task.json"
    assert err.field == field
    for word in words:
        assert word in err.message, err.message
    assert str(err).startswith(f"corpus/x/task.json: {field}: ")


@pytest.mark.parametrize("data", [[], "task", 3, None])
def test_non_object_task(data: Any) -> None:
    with pytest.raises(TaskError, match="must be a JSON object"):
        parse_task(data, "t.json")


def test_load_task_file_errors(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="file not found"):
        load_task(tmp_path / "missing")
    bad = tmp_path / "bad" / "task.json"
    bad.parent.mkdir()
    bad.write_text('{\n  "instruction": "x",\n}\n')
    why = f"invalid JSON at {json_error(bad.read_text())}"  # this Python's words for it
    with pytest.raises(TaskError, match=re.escape(why)) as info:
        load_task(bad.parent)  # a directory means its task.json
    assert info.value.path == str(bad)
    bad.write_bytes(b"\xff\xfe")
    with pytest.raises(TaskError, match="cannot read"):
        load_task(bad)
    bad.write_text('{"instruction": "x", "n": ' + "1" * 5000 + "}")  # json.loads: ValueError
    with pytest.raises(TaskError, match=r"JSON not readable: .*4300 digits.*shorten"):
        load_task(bad)
    for constant in ("NaN", "Infinity", "-Infinity"):
        body = '{"instruction": "x", "eval_schema": {"body": {"qty": ' + constant + "}}}"
        bad.write_text(body)
        with pytest.raises(TaskError, match=rf"{constant} is not JSON \(a filter value"):
            load_task(bad)


def test_load_task_from_directory(tmp_path: Path) -> None:
    (tmp_path / "task.json").write_text(json.dumps(MINIMAL))
    assert isinstance(load_task(tmp_path), Task)


@pytest.mark.parametrize(
    ("pattern", "placeholder"),
    [("", True), (PLACEHOLDER, True), (f"x{PLACEHOLDER}", True), (r"shop\.test", False)],
)
def test_placeholder(pattern: str, placeholder: bool) -> None:
    task = parse_task(_with(MINIMAL, "eval_schema.url_pattern", pattern))
    assert task.eval_schema.is_placeholder is placeholder


_NAN_TASK = (
    '{"instruction": "Buy two mugs", "time_limit": 5, "eval_schema": {"url_pattern": '
    '"shop\\\\.test/api/checkout", "method": "POST", "body": {"qty": NaN}}}'
)


def test_every_reader_of_task_json_refuses_nan(tmp_path: Path) -> None:
    """task.json has one decoder: NaN is not JSON for the loader, the corpus check before a
    batch, a run's preparation, the scorer's --tasks and a run directory's copy alike (the
    scorer's two readers once read it as a float)."""
    from sandbox.corpus_check import check_corpus
    from sandbox.runs import RunJob, load, prepare
    from scorer.batch import CorpusError, load_corpus, load_run

    task_dir = tmp_path / "corpus" / "nan-task"
    task_dir.mkdir(parents=True)
    (task_dir / "task.json").write_text(_NAN_TASK)
    assert json.loads(_NAN_TASK)["eval_schema"]["body"]["qty"] != 0  # Python's json reads it
    refusal = "NaN is not JSON"

    with pytest.raises(TaskError, match=refusal):
        load_task(task_dir)
    assert refusal in check_corpus(tmp_path / "corpus").invalid[task_dir]
    run = prepare(RunJob(task_dir, tmp_path / "runs", "m", "scripted"))
    with pytest.raises(TaskError, match=refusal):
        load(run)
    with pytest.raises(CorpusError, match=refusal):
        load_corpus(tmp_path / "corpus")
    rec = load_run(run.run_dir)  # the verbatim copy the run kept
    assert rec.task is None and rec.task_problem and refusal in rec.task_problem
