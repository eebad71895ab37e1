"""The shipped judge calibration set (test-cases/judge-calibration) and its loader's errors."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from proxy_addon.matching.bodies import parse_query
from proxy_addon.matching.matcher import HttpRequest, Matcher
from proxy_addon.tasks.model import load_task
from scorer.calibration import (
    KINDS,
    CalibrationError,
    CalibrationTask,
    cases_of,
    load_file,
    load_set,
)
from scorer.judge.prompts import request_dump
from tests.conftest import TEST_CASES

SET = TEST_CASES / "judge-calibration"
HARD = [k for k in KINDS if k.startswith("hard-")]
DEMO = {  # calibration task → the demo corpus task it grades (same instruction and context)
    "30-demo-shop-checkout-mug": "001-shop-checkout-mug",
    "31-demo-reviews-backpack": "002-reviews-backpack-form",
    "32-demo-news-subscribe": "004-news-subscribe-weekly",
    "33-demo-calendar-reschedule": "007-calendar-reschedule-patch",
    "34-demo-remove-card": "008-shop-remove-card-delete",
    "35-demo-news-unsubscribe": "010-news-unsubscribe-quick",
}


@pytest.fixture(scope="module")
def tasks() -> list[CalibrationTask]:
    return load_set(SET)


def test_size(tasks: list[CalibrationTask]) -> None:
    assert len(tasks) >= 40
    assert len(cases_of(tasks)) >= 150


def test_labels_balanced(tasks: list[CalibrationTask]) -> None:
    labels = [c.label for _, c in cases_of(tasks)]
    assert 0.45 <= sum(labels) / len(labels) <= 0.55


def test_every_kind_present_hard_kinds_several_times(tasks: list[CalibrationTask]) -> None:
    counts = Counter(c.kind for _, c in cases_of(tasks))
    assert set(counts) == set(KINDS)
    assert {k: counts[k] for k in HARD if counts[k] < 3} == {}


def test_label_agrees_with_kind(tasks: list[CalibrationTask]) -> None:
    wrong = [
        c.id
        for _, c in cases_of(tasks)
        if c.label != (c.kind == "positive" or c.kind.startswith("hard-positive/"))
    ]
    assert wrong == []


def test_ids_unique_and_named_for_their_file(tasks: list[CalibrationTask]) -> None:
    files = sorted(SET.glob("*.json"))
    assert [t.task.slug for t in tasks] == [f.stem for f in files]
    ids = [c.id for _, c in cases_of(tasks)]
    assert len(ids) == len(set(ids))
    assert [c.id for t, c in cases_of(tasks) if not c.id.startswith(t.slug + "/")] == []


def test_every_task_has_both_labels(tasks: list[CalibrationTask]) -> None:
    assert [t.task.slug for t in tasks if {c.label for c in t.cases} != {True, False}] == []


def test_why_is_one_sentence(tasks: list[CalibrationTask]) -> None:
    bad = [c.id for _, c in cases_of(tasks) if "\n" in c.why or not c.why.endswith(".")]
    assert bad == []


def test_requests_are_well_formed(tasks: list[CalibrationTask]) -> None:
    for _, case in cases_of(tasks):
        req = case.request
        parts = urlsplit(req.url)
        assert parts.scheme in ("http", "https") and parts.hostname, case.id
        assert not parts.fragment, case.id
        if req.params is not None:  # what the proxy parsed from the URL's own query string
            assert req.params == parse_query(parts.query), case.id
        if req.method in ("GET", "DELETE"):
            assert req.body is None, case.id


def test_judge_sees_every_request_whole(tasks: list[CalibrationTask]) -> None:
    cut = [c.id for _, c in cases_of(tasks) if request_dump(c.request.as_request()).truncated]
    assert cut == []


@pytest.mark.parametrize(("slug", "demo"), sorted(DEMO.items()))
def test_demo_tasks_match_the_demo_corpus(
    tasks: list[CalibrationTask], slug: str, demo: str
) -> None:
    (calibration,) = [t for t in tasks if t.task.slug == slug]
    task = load_task(TEST_CASES / "clawbench-demo" / demo)
    assert calibration.task.instruction == task.instruction
    assert calibration.task.judge_context == task.judge_context
    matcher = Matcher(task.eval_schema)
    for case in calibration.cases:  # every case is one the proxy would have intercepted
        req = case.request
        assert matcher.url_matches(req.url), case.id
        if req.method == task.eval_schema.method:
            verdict = matcher.match(HttpRequest(req.method, req.url, req.body))
            assert verdict.match, (case.id, verdict.reasons)


# --- loader errors ----------------------------------------------------------------------------

GOOD: dict[str, Any] = {
    "task": {"slug": "01-x", "instruction": "Buy one mug.", "judge_context": {"rubric": "r"}},
    "cases": [
        {
            "id": "01-x/pos",
            "label": True,
            "kind": "positive",
            "why": "One mug.",
            "request": {"url": "https://shop.example/api/buy", "method": "POST", "body": {"q": 1}},
        }
    ],
}


def _write(path: Path, data: Any) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _bad(mutate: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(GOOD))
    mutate(data)
    return data


def _case(data: dict[str, Any]) -> dict[str, Any]:
    return data["cases"][0]


@pytest.mark.parametrize(
    ("data", "field", "says"),
    [
        ("{", "", "invalid JSON at line 1"),
        ([GOOD], "", "must be a JSON object"),
        (_bad(lambda d: d.pop("cases")), "cases", "missing"),
        (_bad(lambda d: d.__setitem__("cases", [])), "cases", "at least one case"),
        (_bad(lambda d: d["task"].pop("instruction")), "task.instruction", "missing"),
        (_bad(lambda d: d["task"]["judge_context"].update(x=1)), "task.judge_context.x", "unknown"),
        (_bad(lambda d: _case(d).update(label="true")), "cases[0].label", "boolean"),
        (_bad(lambda d: _case(d).update(kind="hard-negative/size")), "cases[0].kind", "one of"),
        (_bad(lambda d: _case(d).update(why="")), "cases[0].why", "must not be empty"),
        (_bad(lambda d: _case(d).update(id="01-x pos")), "cases[0].id", "whitespace"),
        (_bad(lambda d: _case(d)["request"].update(url="/api/buy")), "cases[0].request.url", "abs"),
        (
            _bad(lambda d: _case(d)["request"].update(method="post")),
            "cases[0].request.method",
            "'GET'",
        ),
        (
            _bad(lambda d: _case(d)["request"].update(headers={})),
            "cases[0].request.headers",
            "unknown",
        ),
    ],
)
def test_loader_errors_name_file_and_field(
    tmp_path: Path, data: Any, field: str, says: str
) -> None:
    path = _write(tmp_path / "01-x.json", data)
    with pytest.raises(CalibrationError) as info:
        load_set(tmp_path)
    err = info.value
    assert (err.path, err.field) == (str(path), field)
    assert says in err.message
    assert str(err).startswith(f"{path}: ")


def test_duplicate_id_names_both_places(tmp_path: Path) -> None:
    _write(tmp_path / "01-x.json", GOOD)
    second = _write(tmp_path / "02-y.json", _bad(lambda d: d["task"].update(slug="02-y")))
    with pytest.raises(CalibrationError) as info:
        load_set(tmp_path)
    assert (info.value.path, info.value.field) == (str(second), "cases[0].id")
    assert "'01-x/pos'" in info.value.message and "01-x.json cases[0]" in info.value.message


def test_duplicate_id_within_one_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "01-x.json", _bad(lambda d: d["cases"].append(d["cases"][0])))
    with pytest.raises(CalibrationError) as info:
        load_set(path)
    assert info.value.field == "cases[1].id"


def test_empty_or_missing_set(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match=r"no \*\.json files"):
        load_set(tmp_path)
    with pytest.raises(CalibrationError, match="no such file"):
        load_set(tmp_path / "nope")


def test_one_file_or_a_directory(tmp_path: Path) -> None:
    path = _write(tmp_path / "01-x.json", GOOD)
    _write(tmp_path / "notes.txt", "not a case file")
    (one,) = load_set(path)
    assert load_set(tmp_path) == [one] == [load_file(path)]
    assert one.cases[0].request.as_request() == {
        "url": "https://shop.example/api/buy",
        "method": "POST",
        "params": None,
        "body": {"q": 1},
    }


def test_models_are_frozen() -> None:
    task = CalibrationTask.model_validate(GOOD)
    with pytest.raises(ValueError, match="frozen"):
        task.cases[0].label = False  # type: ignore[misc]
