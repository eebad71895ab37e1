"""Judge replies → verdicts (docs/formats.md): match, no_match, cannot_tell, or no verdict (None),
never a pass by accident (the reference's #305: "false" as a string)."""

from __future__ import annotations

import json

import pytest

from proxy_addon.records import JudgeVerdict, as_match, read_verdict
from proxy_addon.records.verdict import passes
from scorer.judge import JudgeRecord
from scorer.judge.verdict import parse_reply

Y, NO, CT = JudgeVerdict.MATCH, JudgeVerdict.NO_MATCH, JudgeVerdict.CANNOT_TELL


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, Y),
        (False, NO),
        ("true", Y),
        ("false", NO),  # the string "false" is a no_match, never a pass
        (" False ", NO),
        ("TRUE", Y),
        ("match", Y),
        ("no_match", NO),
        ("No-Match", NO),
        ("no match", NO),
        ("cannot_tell", CT),
        ("Cannot tell", CT),
        # a verdict must be explicit: these are none
        ("yes", None),
        ("pass", None),
        ("no", None),
        ("unknown", None),
        (1, None),
        (0, None),
        (None, None),
        ("", None),
        (["true"], None),
        ({"match": True}, None),
    ],
)
def test_read_verdict(value: object, expected: JudgeVerdict | None) -> None:
    assert read_verdict(value) is expected


def test_only_match_passes() -> None:
    assert [passes(v) for v in (Y, NO, CT, None)] == [True, False, False, False]
    assert [as_match(v) for v in (Y, NO, CT, None)] == [True, False, False, None]


def _v2(verdict: object, met: list[str] | None = None, **extra: object) -> str:
    checks = [{"requirement": f"r{i}", "field": "body.x", "value": "1", "met": m}
              for i, m in enumerate(met or ["yes"])]  # fmt: skip
    return json.dumps({"requirements": checks, "verdict": verdict, **extra})


@pytest.mark.parametrize(
    ("reply", "verdict", "error"),
    [
        (_v2("match", reason="right mug"), Y, None),
        (_v2("no_match", ["yes", "no"], reason="wrong size"), NO, None),
        (_v2("cannot_tell", ["yes", "unknown"], missing="the body was cut"), CT, None),
        ('{"match": true, "reason": "the reference shape"}', Y, None),
        ('{"match": "false", "reason": "string false"}', NO, None),
        ('{"verdict": "no_match", "match": false}', NO, None),
        ('```json\n{"verdict": "no_match", "reason": "fenced"}\n```', NO, None),
        ('Thinking... then {"verdict": "match", "reason": "ok"} done.', Y, None),
        ('{"note": {"x": 1}} then {"verdict": "no_match", "reason": "second"}', NO, None),
        # no verdict: never a pass
        ('{"verdict": "match"} and also {"verdict": "no_match"}', None, "conflicting"),
        ('{"verdict": "match", "match": false}', None, "disagree"),
        ('{"verdict": "yes"}', None, "not a verdict"),
        ('{"verdict": null, "match": true}', None, "not a verdict"),
        ('{"reason": "no verdict key", "requirements": []}', None, "no JSON object"),
        (_v2("match", ["yes", "no"]), None, "its own check says 'no'"),
        (_v2("match", ["yes", "unknown"]), None, "its own check says 'unknown'"),
        ("The request matches the instruction.", None, "no JSON object"),
        ('{"verdict": "mat', None, "no JSON object"),
        ("", None, "blank"),
        (None, None, "blank"),
    ],
)
def test_parse_reply(reply: str | None, verdict: JudgeVerdict | None, error: str | None) -> None:
    got = parse_reply(reply)
    assert got.verdict is verdict
    if error is None:
        assert got.error is None
    else:
        assert got.error is not None and error in got.error


def test_requirements_and_what_could_not_be_seen_are_kept() -> None:
    reply = _v2("cannot_tell", ["yes", "unknown"], missing="  the body   was cut ", reason="r")
    got = parse_reply(reply)
    assert [c.met for c in got.checks] == ["yes", "unknown"]
    assert got.missing == "the body was cut"
    assert parse_reply(_v2("cannot_tell", ["unknown"], reason="no body")).missing == "no body"
    assert parse_reply(_v2("no_match", ["no"], missing="ignored")).missing == ""
    odd = json.dumps({"requirements": [{"requirement": "a", "met": True}, "junk", {"met": "NO"}],
                      "verdict": "no_match"})  # fmt: skip
    assert [c.met for c in parse_reply(odd).checks] == ["yes", "no"]


def test_reason_and_checks_are_bounded() -> None:
    many = [{"requirement": "x" * 1000, "met": "yes"}] * 100
    got = parse_reply(json.dumps({"requirements": many, "verdict": "match", "reason": "y" * 999}))
    assert got.verdict is Y and len(got.reason) == 300
    assert len(got.checks) == 30 and len(got.checks[0].requirement) == 300


def test_an_earlier_judge_file_reads_its_verdict_from_match() -> None:
    old = {"match": False, "judge_model": "j", "rubric": "strict", "prompt_version": "v",
           "cache_key": "k"}  # fmt: skip
    assert JudgeRecord.model_validate(old).answer is NO
    assert JudgeRecord.model_validate({**old, "match": None}).answer is None
    new = JudgeRecord.model_validate({**old, "verdict": "cannot_tell"})
    assert new.answer is CT
