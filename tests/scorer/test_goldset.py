"""clawbench-score goldset: the blind export gives nothing of the labels away, and the agreement
tool reads a second labeller's file, reports kappa with its interval and every disagreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proxy_addon.records import JudgeVerdict
from scorer.calibrate import set_digest
from scorer.calibration import cases_of, judge_input, load_set
from scorer.cli import main
from scorer.goldset import MARKERS, blind_export, blind_id
from scorer.judge import user_message
from tests.conftest import TEST_CASES

GOLD = TEST_CASES / "judge-calibration" / "v2"
PAIRS = cases_of(load_set(GOLD))


def test_the_blind_export_shows_what_the_judge_sees_and_nothing_of_the_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "blind"
    assert main(["goldset", "blind", "--out", str(out)]) == 0  # the shipped v2 set
    assert capsys.readouterr().out.split() == [str(out / "cases.json"), str(out / "cases.md")]
    data = json.loads((out / "cases.json").read_text())
    assert data["n_cases"] == len(PAIRS) == len(data["cases"])
    assert data["set_sha256"] == set_digest(GOLD)
    views = {c["id"]: c["view"] for c in data["cases"]}
    for task, case in PAIRS:
        assert views[blind_id(case.id)] == user_message(judge_input(task, case), *MARKERS)
    text = (out / "cases.json").read_text() + (out / "cases.md").read_text()
    for task, case in PAIRS:
        context = task.judge_context.model_dump_json() if task.judge_context else ""
        assert case.id not in text
        assert case.why not in text or case.why in context, case.id  # a reason the task gives
    for kind in ("relative-date", "id-only", "near-miss", "extra-fields", "hard-negative"):
        assert f'"{kind}"' not in text
    ids = [c["id"] for c in data["cases"]]
    assert ids == sorted(ids)  # the order is the opaque ids', not the set's
    assert ids != [blind_id(c.id) for _, c in PAIRS]
    assert all(set(c) == {"id", "view"} for c in data["cases"])
    md = (out / "cases.md").read_text()
    assert md.count("\n## b-") == len(PAIRS) and "RUBRIC.md" in md


def _labels(tmp_path: Path, labels: dict[str, str], **extra: object) -> Path:
    body = {"format": "clawbench-second-labels/1", "labeller": "second", "set_sha256":
            set_digest(GOLD), "labels": labels, **extra}  # fmt: skip
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(body))
    return path


def test_agreement_with_a_second_labelling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    labels = {blind_id(c.id): str(c.label) for _, c in PAIRS}
    flipped = [c for _, c in PAIRS if c.label is JudgeVerdict.CANNOT_TELL][:3]
    for c in flipped:
        labels[blind_id(c.id)] = "no_match"
    note = {blind_id(flipped[0].id): "the visible part already says enough"}
    path = _labels(tmp_path, labels, notes=note)
    capsys.readouterr()
    assert main(["goldset", "agree", str(path), "--json"]) == 0
    a = json.loads(capsys.readouterr().out)
    assert (a["n_cases"], a["n_labelled"], a["unlabelled"], a["unknown"]) == (
        len(PAIRS),
        len(PAIRS),
        [],
        [],
    )
    assert a["agreement"]["k"] == len(PAIRS) - 3 and 0.9 < a["kappa"] < 1.0
    assert a["kappa_low"] < a["kappa"] < a["kappa_high"]
    assert a["confusion"]["cannot_tell"]["no_match"] == 3
    assert [d["id"] for d in a["disagreements"]] == sorted(c.id for c in flipped)
    assert (
        a["disagreements"][0]["note"]
        or a["disagreements"][1]["note"]
        or a["disagreements"][2]["note"]
    )
    assert main(["goldset", "agree", str(path)]) == 0
    text = capsys.readouterr().out
    assert f"{len(PAIRS)} of {len(PAIRS)} cases labelled" in text
    assert "Cohen's kappa 0.9" in text and "disagreements: 3" in text and "why:" in text


def test_an_incomplete_or_bad_labels_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    some = {blind_id(c.id): str(c.label) for _, c in PAIRS[:10]}
    some["b-0000000000"] = "match"
    path = _labels(tmp_path, some, set_sha256="old")
    capsys.readouterr()
    assert main(["goldset", "agree", str(path)]) == 1  # incomplete: says so, exits 1
    captured = capsys.readouterr()
    assert "unlabelled: " in captured.out and "unknown ids: 1" in captured.out
    assert "another version of the set" in captured.out
    assert "incomplete" in captured.err
    bad = _labels(tmp_path, {"b-1": "yes"})
    assert main(["goldset", "agree", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"clawbench-score goldset: {bad}: labels.b-1: ") and "match" in err
    assert main(["goldset", "agree", str(tmp_path / "none.json")]) == 2


def test_export_of_a_small_set_is_deterministic(tmp_path: Path) -> None:
    one = GOLD / "01-pet-boarding-stay.json"
    assert blind_export(one) == blind_export(one)
