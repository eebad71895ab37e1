"""Judge replies → tri-state verdicts (SPEC section 6): only booleans and "true"/"false" count."""

from __future__ import annotations

import pytest

from scorer.judge.verdict import coerce_match, parse_verdict


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("true", True),
        ("false", False),
        (" False ", False),
        ("TRUE", True),
        # the reference's _coerce_match takes these; a verdict must be explicit, so we do not
        ("yes", None),
        ("pass", None),
        ("mismatch", None),
        ("no", None),
        (1, None),
        (0, None),
        (None, None),
        ("", None),
        (["true"], None),
    ],
)
def test_coerce_match(value: object, expected: bool | None) -> None:
    assert coerce_match(value) is expected


@pytest.mark.parametrize(
    ("reply", "match", "error"),
    [
        ('{"match": true, "reason": "right mug"}', True, None),
        ('{"match": false, "reason": "wrong size"}', False, None),
        ('{"match": "false", "reason": "string false"}', False, None),
        ('{"match": "true"}', True, None),
        ('```json\n{"match": false, "reason": "fenced"}\n```', False, None),
        ('```\n{"match": true, "reason": "bare fence"}\n```', True, None),
        ('Sure. Here is my verdict: {"match": true, "reason": "ok"} Hope it helps.', True, None),
        ('{"note": {"x": 1}} then {"match": false, "reason": "second object"}', False, None),
        ('{"match": true} and also {"match": false}', None, "conflicting"),
        ('{"match": "yes", "reason": "not a verdict"}', None, "not a boolean"),
        ('{"match": null}', None, "not a boolean"),
        ('{"reason": "no match key"}', None, "no JSON object"),
        ('{"verdict": {"match": true}}', None, "no JSON object"),
        ("The request matches the instruction.", None, "no JSON object"),
        ('{"match": tru', None, "no JSON object"),
        ("", None, "blank"),
        ("   \n ", None, "blank"),
        (None, None, "blank"),
    ],
)
def test_parse_verdict(reply: str | None, match: bool | None, error: str | None) -> None:
    verdict = parse_verdict(reply)
    assert verdict.match is match
    if error is None:
        assert verdict.error is None
    else:
        assert verdict.error is not None and error in verdict.error


def test_reason_is_capped_at_300_characters() -> None:
    verdict = parse_verdict('{"match": true, "reason": "' + "x" * 1000 + '"}')
    assert verdict.match is True and len(verdict.reason) == 300
