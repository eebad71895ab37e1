"""clawbench-score compare on two built and scored batches with known flips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.batches import task_json, write_corpus
from bench.reference_batches import reference_run
from scorer.cli import main
from scorer.stats import mcnemar_exact

GOOD = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"qty": 1}}
A_PASSES = {"t0", "t1", "t2", "t3", "t4"}
B_PASSES = {"t0", "t5"}
TASKS = [f"t{i}" for i in range(7)]  # t6: neither passes


def scored_batch(root: Path, model: str, passes: set[str], tasks: list[str] = TASKS) -> Path:
    """A batch of one model, intercepted exactly on `passes`, scored Stage 1 only."""
    batch = root / model / "batch-20260101-120000"
    for i, case in enumerate(tasks):
        request = GOOD if case in passes else None
        reference_run(batch, case, task_json(case, task_id=i), model=model, request=request)
    assert main([str(batch), "--no-judge", "--json"]) == 0
    return batch


def compare_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    capsys.readouterr()
    assert main(["compare", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_paired_by_task_with_the_known_flips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = scored_batch(tmp_path, "m-a", A_PASSES)
    b = scored_batch(tmp_path, "m-b", B_PASSES)
    c = compare_json(capsys, str(a), str(b))
    assert (c["label_a"], c["label_b"]) == ("m-a · openclaw", "m-b · openclaw")
    assert (c["n_paired"], c["a_pass"], c["b_pass"]) == (7, 5, 2)
    assert (c["won"], c["lost"], c["tied_pass"], c["tied_fail"]) == (4, 1, 1, 1)
    assert [(f["task"], f["a"], f["b"]) for f in c["flipped"]] == [
        ("t1", True, False),
        ("t2", True, False),
        ("t3", True, False),
        ("t4", True, False),
        ("t5", False, True),
    ]
    assert c["difference"] == pytest.approx(3 / 7)
    assert c["mcnemar_p"] == pytest.approx(mcnemar_exact(4, 1)) == pytest.approx(0.375)
    assert c["difference_ci_low"] < 3 / 7 < c["difference_ci_high"]
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert "won 4, lost 1" in text and "McNemar exact p = 0.375" in text and "+ t1" in text


def test_the_newest_run_counts_and_a_corpus_sets_the_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = scored_batch(tmp_path, "m-a", A_PASSES, TASKS[:5])  # t5 and t6 not run by A
    b = tmp_path / "m-b" / "batch-20260101-120000"
    for i, case in enumerate(TASKS):
        reference_run(b, case, task_json(case, task_id=i), model="m-b", request=GOOD)
    # a newer run of t0 that failed: it is the one that counts
    reference_run(b, "t0", task_json("t0", task_id=0), model="m-b", ts="20260102-120000")
    assert main([str(b), "--no-judge"]) == 0
    c = compare_json(capsys, str(a), str(b))
    assert c["n_paired"] == 5 and c["only_b"] == ["t5", "t6"] and c["only_a"] == []
    assert ("t0", True, False) in [(f["task"], f["a"], f["b"]) for f in c["flipped"]]
    corpus = write_corpus(tmp_path / "corpus", {t: task_json(t) for t in [*TASKS, "t7"]})
    c = compare_json(capsys, str(a), str(b), "--tasks", str(corpus))
    assert c["n_paired"] == 8 and c["only_a"] == c["only_b"] == []
    assert c["b_pass"] == 6 and c["a_pass"] == 5  # t7: run by neither, not passed by either


@pytest.mark.parametrize("problem", ["not scored", "two models"])
def test_what_cannot_be_compared_is_said_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], problem: str
) -> None:
    a = scored_batch(tmp_path, "m-a", A_PASSES)
    b = tmp_path / "b" / "batch-20260101-120000"
    reference_run(b, "t0", task_json("t0"), model="m-b", request=GOOD)
    if problem == "two models":
        reference_run(b, "t0", task_json("t0"), model="m-c", request=GOOD)
        assert main([str(b), "--no-judge"]) == 0
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("clawbench-score compare: ")
    expected = "score the batch first" if problem == "not scored" else "holds 2 entries"
    assert expected in err
