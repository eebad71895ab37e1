"""One batch, four views: rescore-summary.json, the terminal table, the leaderboard CSV and the
HTML report (its leaderboard and its matrix) give the same numbers, and without a judge none of
them shows a pass: an intercepted wrong payload is intercepted, never passed."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from bench.batches import task_json, write_corpus
from bench.reference_batches import reference_run
from scorer.cli import main as score
from scorer.html_report.cli import main as report
from tests.report.conftest import summary
from tests.report.test_report_files import Page
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import Call, Reply, start_judge_server, verdict
from tests.support.table_text import read_table

CART = "https://shop.example.com/api/cart"
RIGHT = {"url": CART, "method": "POST", "body": {"item": "red mug"}}
WRONG = {"url": CART, "method": "POST", "body": {"item": "blue mug"}}


def _judge(call: Call) -> Reply:
    return verdict("blue mug" not in call.user, "checked the colour")


def _batch(tmp_path: Path) -> tuple[Path, Path]:
    tasks = {s: task_json(s, task_id=i) for i, s in enumerate(("a-right", "b-wrong", "c-none"))}
    corpus = write_corpus(tmp_path / "corpus", tasks)
    batch = tmp_path / "out" / "batch-20260101-120000"
    reference_run(batch, "a-right", tasks["a-right"], request=RIGHT)
    reference_run(batch, "b-wrong", tasks["b-wrong"], request=WRONG)  # the wrong payload
    reference_run(batch, "c-none", tasks["c-none"], stop_reason="agent_exited")
    return batch, corpus


def _views(batch: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    board = batch.parent / "board.csv"
    board.unlink(missing_ok=True)
    capsys.readouterr()
    assert score([str(batch), *args, "--csv", str(board)]) == 0
    (table,) = read_table(capsys.readouterr().out).values()  # one entry: its row
    with board.open(newline="") as f:
        (row,) = csv.DictReader(f)
    out = batch.parent / "report.html"
    assert report([str(batch), "-o", str(out)]) == 0
    page = Page(out.read_text(encoding="utf-8"))
    (entry,) = [a for t, a in page.tags if t == "tr" and a.get("class") == "entry"]
    foot = [
        a for t, a in page.tags if t == "th" and ("data-passed" in a or "data-intercepted" in a)
    ]
    per_task = [a["data-passed"] for t, a in page.tags if t == "td" and "data-passed" in a]
    return {
        "summary": summary(batch),
        "table": table,
        "csv": row,
        "entry": entry,
        "foot": foot,
        "per_task": per_task,
    }


def test_without_a_judge_nothing_is_passed_in_any_view(tmp_path, capsys) -> None:
    batch, corpus = _batch(tmp_path)
    v = _views(batch, ["--tasks", str(corpus), "--no-judge"], capsys)
    s = v["summary"]
    assert (s["n_total"], s["n_intercepted"], s["n_unjudged"]) == (3, 2, 2)
    assert s["n_passed"] is None and s["pass_rate_with_judge"] is None
    assert v["table"]["intercepted"] == "2" and v["table"]["N"] == "3"
    assert v["table"]["passed"] == "not judged" and "pass rate (95% CI)" not in v["table"]
    row = v["csv"]
    assert (row["passed"], row["pass_rate"], row["pass_rate_ci_low"]) == ("", "", "")
    assert (row["intercepted"], row["total"], row["judge"]) == ("2", "3", "not judged")
    entry = v["entry"]
    assert "data-passed" not in entry and entry["data-intercepted"] == "2"
    assert {a.get("data-passed") for a in v["foot"] if "data-passed" in a} == {"not judged"}
    assert [a["data-intercepted"] for a in v["foot"] if "data-intercepted" in a] == ["2"]
    assert v["per_task"] == ["not judged"] * 3  # the matrix's per-task column: no 0/1 either
    shown = "".join(Page((batch.parent / "report.html").read_text(encoding="utf-8")).text)
    assert "not judged" in shown and "pass rate" in shown


def test_with_a_judge_every_view_gives_the_same_numbers(tmp_path, capsys) -> None:
    batch, corpus = _batch(tmp_path)
    with start_judge_server(_judge) as server:
        yaml = models_yaml(tmp_path / "models.yaml", server)
        args = ["--tasks", str(corpus), "--models-yaml", str(yaml), "--judge-model", "judge-x"]
        v = _views(batch, args, capsys)
    s = v["summary"]
    assert (s["n_total"], s["n_intercepted"], s["n_passed"], s["n_judge_mismatch"]) == (3, 2, 1, 1)
    assert v["table"]["passed"] == "1" and v["table"]["intercepted"] == "2"
    assert v["table"]["pass rate (95% CI)"].startswith("33.3% (")
    row = v["csv"]
    assert (row["passed"], row["total"], row["pass_rate"], row["intercepted"]) == (
        "1",
        "3",
        "33.33",
        "2",
    )
    assert row["judge"] == "judge-x"
    entry = v["entry"]
    assert (entry["data-passed"], entry["data-intercepted"], entry["data-total"]) == ("1", "2", "3")
    assert [a["data-passed"] for a in v["foot"] if "data-passed" in a] == ["1"]
    assert [a["data-intercepted"] for a in v["foot"] if "data-intercepted" in a] == ["2"]
    assert v["per_task"] == ["1", "0", "0"]  # the matrix's per-task passes add up to the total
