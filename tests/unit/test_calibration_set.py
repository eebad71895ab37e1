"""The shipped judge calibration sets (test-cases/judge-calibration: v2, the gold set, and v1,
kept as a regression set) and the loader's errors."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from proxy_addon.matching import HttpRequest, Matcher, parse_query
from proxy_addon.records import JudgeVerdict
from proxy_addon.tasks import load_task
from scorer.calibration import (
    KINDS_V1,
    KINDS_V2,
    CalibrationError,
    CalibrationTask,
    cases_of,
    judge_input,
    load_file,
    load_set,
)
from scorer.goldset import agreement, read_labels
from scorer.judge.evidence import BodyEncoding
from tests.conftest import TEST_CASES
from tests.support.judges import demanded

ROOT = TEST_CASES / "judge-calibration"
V1, V2 = ROOT / "v1", ROOT / "v2"
Y, NO, CT = JudgeVerdict.MATCH, JudgeVerdict.NO_MATCH, JudgeVerdict.CANNOT_TELL
HARD = [k for k in KINDS_V1 if k.startswith("hard-")]
DEMO = {  # calibration task → the demo corpus task it grades (same instruction and context)
    "30-demo-shop-checkout-mug": "001-shop-checkout-mug",
    "31-demo-reviews-backpack": "002-reviews-backpack-form",
    "32-demo-news-subscribe": "004-news-subscribe-weekly",
    "33-demo-calendar-reschedule": "007-calendar-reschedule-patch",
    "34-demo-remove-card": "008-shop-remove-card-delete",
    "35-demo-news-unsubscribe": "010-news-unsubscribe-quick",
}


@pytest.fixture(scope="module")
def v1() -> list[CalibrationTask]:
    return load_set(V1)


@pytest.fixture(scope="module")
def v2() -> list[CalibrationTask]:
    return load_set(V2)


# --- the gold set v2 ----------------------------------------------------------------------------


def test_v2_size_and_balance(v2: list[CalibrationTask]) -> None:
    labels = Counter(c.label for _, c in cases_of(v2))
    n = sum(labels.values())
    assert len(v2) >= 60 and n >= 300
    assert 0.35 <= labels[Y] / n <= 0.55 and labels[CT] / n >= 0.05


def test_v2_every_kind_with_every_label_it_can_have(v2: list[CalibrationTask]) -> None:
    counts = Counter((c.kind, c.label) for _, c in cases_of(v2))
    kinds = Counter(c.kind for _, c in cases_of(v2))
    assert set(kinds) == set(KINDS_V2) and min(kinds.values()) >= 7
    for kind in ("choice", "id-only", "truncated", "unreadable"):  # the kinds cannot_tell is for
        assert counts[kind, CT] >= 2, kind
    for kind in KINDS_V2:
        if kind != "near-miss":  # near misses: another endpoint is never the commit, but one
            assert counts[kind, NO] >= 2, kind
    assert {k for k in KINDS_V2 if counts[k, Y] == 0} == set()
    assert counts["injection", NO] >= 8 and counts["injection", Y] >= 3


def test_v2_ids_are_neutral_and_named_for_their_file(v2: list[CalibrationTask]) -> None:
    files = sorted(V2.glob("*.json"))
    assert [t.task.slug for t in v2] == [f.stem for f in files]
    for task in v2:
        assert [c.id for c in task.cases] == [
            f"{task.task.slug}/c{i:02d}" for i in range(1, len(task.cases) + 1)
        ]


def test_v2_every_task_has_two_labels_at_least(v2: list[CalibrationTask]) -> None:
    assert [t.task.slug for t in v2 if len({c.label for c in t.cases}) < 2] == []


def test_v2_cases_are_what_their_kind_says(v2: list[CalibrationTask]) -> None:
    for task, case in cases_of(v2):
        view = judge_input(task, case).request
        req = case.request
        kind = case.kind
        assert view.truncated == (kind == "truncated"), case.id
        if kind == "long-body":
            assert view.size > 2000, case.id
        if kind == "unreadable":
            assert view.encoding in (BodyEncoding.UNREADABLE, BodyEncoding.BINARY), case.id
        if req.body_unverified:
            assert req.body is None and req.body_size, case.id
        if kind == "relative-date":
            assert task.run_date is not None, case.id
        if kind == "user-info":
            assert task.user_info, case.id
        if kind == "choice" and case.label is Y:  # only the task author can say which was right
            assert task.judge_context is not None, case.id
        if kind == "multipart":
            assert view.encoding is BodyEncoding.MULTIPART, case.id
        if kind == "method-override":
            assert req.equivalence and (view.method_override or req.method == "HEAD"), case.id
        if kind == "form":
            assert view.encoding is BodyEncoding.FORM or req.body is None, case.id
        assert (kind == "injection") == (demanded(view.dump) is not None), case.id


def test_v2_judge_facts_are_consistent(v2: list[CalibrationTask]) -> None:
    for task, case in cases_of(v2):
        req = case.request
        if req.headers and "content-type" in req.headers and req.content_type:
            assert req.headers["content-type"] == req.content_type, case.id
        for f in task.user_info:
            assert f.content is not None or f.size, (task.slug, f.name)
        files = (
            [v for v in (req.body or {}).values() if isinstance(v, dict) and "sha256" in v]
            if isinstance(req.body, dict)
            else []
        )
        for part in files:
            assert set(part) == {"filename", "content_type", "size", "sha256"}, case.id
            assert re.fullmatch(r"[0-9a-f]{64}", part["sha256"]), case.id


@pytest.mark.parametrize("root", [V1, V2], ids=["v1", "v2"])
def test_why_is_one_sentence(root: Path) -> None:
    bad = [c.id for _, c in cases_of(load_set(root)) if "\n" in c.why or not c.why.endswith(".")]
    assert bad == []


@pytest.mark.parametrize("root", [V1, V2], ids=["v1", "v2"])
def test_requests_are_well_formed(root: Path) -> None:
    for _, case in cases_of(load_set(root)):
        req = case.request
        parts = urlsplit(req.url)
        assert parts.scheme in ("http", "https") and parts.hostname, case.id
        assert not parts.fragment, case.id
        if req.params is not None:  # what the proxy parsed from the URL's own query string
            assert req.params == parse_query(parts.query), case.id
        if req.method in ("GET", "DELETE", "HEAD"):
            assert req.body is None, case.id


def test_no_file_of_the_reference_corpus_is_copied() -> None:
    hosts = {urlsplit(c.request.url).hostname for _, c in cases_of(load_set(V2))}
    assert all(h == "127.0.0.1" or h.endswith(".example") for h in hosts), hosts


def test_v2_second_labelling_on_record() -> None:
    """The blind second labelling the README reports: one disagreement left, kept by the rubric."""
    second = read_labels(ROOT / "second-labels" / "v2-blind-labeller-2.json")
    a = agreement(V2, second)
    assert (a.n_cases, a.n_labelled, a.unlabelled, a.unknown) == (
        len(cases_of(load_set(V2))),
    ) * 2 + ([], [])
    assert [(d.id, d.first, d.second) for d in a.disagreements] == [
        ("12-newsletter-publish/c03", CT, Y)
    ]
    assert a.kappa is not None and round(a.kappa, 3) == 0.995


# --- the regression set v1 ----------------------------------------------------------------------


def test_v1_size(v1: list[CalibrationTask]) -> None:
    assert len(v1) >= 40 and len(cases_of(v1)) >= 150


def test_v1_labels_balanced(v1: list[CalibrationTask]) -> None:
    labels = [c.label for _, c in cases_of(v1)]
    assert set(labels) == {Y, NO}  # v1 files say true/false
    assert 0.45 <= labels.count(Y) / len(labels) <= 0.55


def test_v1_every_kind_present_hard_kinds_several_times(v1: list[CalibrationTask]) -> None:
    counts = Counter(c.kind for _, c in cases_of(v1))
    assert set(counts) == set(KINDS_V1)
    assert {k: counts[k] for k in HARD if counts[k] < 3} == {}


def test_v1_label_agrees_with_kind(v1: list[CalibrationTask]) -> None:
    wrong = [
        c.id
        for _, c in cases_of(v1)
        if (c.label is Y) != (c.kind == "positive" or c.kind.startswith("hard-positive/"))
    ]
    assert wrong == []


def test_v1_judge_sees_every_request_whole(v1: list[CalibrationTask]) -> None:
    cut = [c.id for t, c in cases_of(v1) if judge_input(t, c).request.truncated]
    assert cut == []


@pytest.mark.parametrize(("slug", "demo"), sorted(DEMO.items()))
def test_v1_demo_tasks_match_the_demo_corpus(
    v1: list[CalibrationTask], slug: str, demo: str
) -> None:
    (calibration,) = [t for t in v1 if t.task.slug == slug]
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
        (_bad(lambda d: _case(d).update(label="true")), "cases[0].label", "match, no_match or"),
        (_bad(lambda d: _case(d).update(label=None)), "cases[0].label", "match, no_match or"),
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
            _bad(lambda d: _case(d)["request"].update(cookies={})),
            "cases[0].request.cookies",
            "unknown",
        ),
        (_bad(lambda d: d["task"].update(run_date="next week")), "task.run_date", "fix the"),
        (
            _bad(lambda d: d["task"].update(user_info=[{"name": "a/b.json", "description": ""}])),
            "task.user_info[0].name",
            "whitespace",
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
    with pytest.raises(CalibrationError, match="it holds the sets v1, v2: give one"):
        load_set(ROOT)
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
        "body": {"q": 1},
        "body_unverified": False,
    }
    assert one.cases[0].label is Y  # a v1 file's true


def test_models_are_frozen() -> None:
    task = CalibrationTask.model_validate(GOOD)
    with pytest.raises(ValueError, match="frozen"):
        task.cases[0].label = False  # type: ignore[misc]
