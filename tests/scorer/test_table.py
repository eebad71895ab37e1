"""clawbench-score's table for many entries: one row per entry (model, harness) where it fits the
console, a list where it does not (a pipe: 80 columns), never a cell cut or a word wrapped; the
judges' own tokens and cost beside the agents'; the dataset label whatever --tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.batches import our_run, task_json, write_corpus
from proxy_addon.records import BatchSummary, now_iso, write_summary
from scorer.cli import main as score
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import start_judge_server, verdict
from tests.support.table_text import read_table

MODELS = [f"vendor-{i}/a-rather-long-model-name-{i}" for i in range(3)]
HARNESSES = ("browser-use", "claude-code")
CASES = ("t0", "t1")
REQUEST = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"item": "x"}}


def _batch(tmp_path: Path) -> tuple[Path, Path]:
    """Six entries (three models, two harnesses), two tasks each; our batch-summary.json names
    the corpus it ran, as a sandbox batch writes it."""
    tasks = {c: task_json(c, task_id=i) for i, c in enumerate(CASES)}
    corpus = write_corpus(tmp_path / "tasks" / "shop-suite", tasks)
    batch = tmp_path / "out" / "batch-20260301-120000"
    for model in MODELS:
        for harness in HARNESSES:
            intercepted = {"intercepted": True, "request": REQUEST, "intercepted_at": 1.0}
            our_run(
                batch,
                "t0",
                tasks["t0"],
                model=model,
                harness=harness,
                interception={**intercepted, "schema": tasks["t0"]["eval_schema"]},
            )
            our_run(batch, "t1", tasks["t1"], model=model, harness=harness)  # fmt: skip
    stamp = now_iso()
    summary = BatchSummary(
        started_at=stamp,
        finished_at=stamp,
        elapsed_seconds=60,
        max_concurrent=2,
        harness="several",
        image="clawbench-sandbox:test",
        corpus=str(corpus),
    )
    write_summary(batch, summary)
    return batch, corpus


def _shown(capsys: pytest.CaptureFixture[str], monkeypatch, columns: int, *argv: str) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    assert score(list(argv)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("columns", [80, 250])
def test_every_entry_is_one_row_or_one_block_and_nothing_is_cut(
    tmp_path: Path, capsys, monkeypatch, columns: int
) -> None:
    batch, _ = _batch(tmp_path)
    out = _shown(capsys, monkeypatch, columns, str(batch), "--no-judge")
    rows = read_table(out)
    labels = [f"{m} · {h}" for m in MODELS for h in HARNESSES]
    assert sorted(rows) == sorted([*labels, "all"])
    for label in labels:
        assert rows[label]["N"] == "2" and rows[label]["intercepted"] == "1", rows[label]
        assert rows[label]["Stage-1 rate (95% CI)"] == "50.0% (9.5–90.5)"
    assert rows["all"]["N"] == "12" and rows["all"]["intercepted"] == "6"
    assert "…" not in out  # no cell cut short
    table = [line for line in out.splitlines() if "│" in line]
    if columns == 80:  # too wide for a pipe: the list, each line within the width
        assert table == []
        assert max(len(line) for line in out.splitlines() if line.startswith("  ")) <= 80
    else:
        assert len(table) == len(labels) + 1  # one line per entry and the total
        assert max(len(line) for line in out.splitlines()) <= columns


def test_the_judges_tokens_and_cost_stand_beside_the_agents(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    batch, _ = _batch(tmp_path)
    with start_judge_server(lambda call: verdict(True, "as asked")) as server:
        yaml = models_yaml(
            tmp_path / "models.yaml", server, price_per_million_tokens="{input: 2, output: 10}"
        )
        args = [str(batch), "--models-yaml", str(yaml), "--judge-model", "judge-x"]
        out = _shown(capsys, monkeypatch, 250, *args)
    s = json.loads((batch / "rescore-summary.json").read_text())
    usage = s["judge_usage"]
    assert usage["verdicts"] == 6 and usage["input_tokens"] == s["tokens"]["input_tokens"] > 0
    expected = (usage["input_tokens"] * 2 + usage["output_tokens"] * 10) / 1_000_000
    assert usage["cost_usd"] == pytest.approx(expected) and usage["unpriced"] == []
    assert sum(e["judge_usage"]["verdicts"] for e in s["entries"]) == 6
    rows = read_table(out)
    assert rows["all"]["judge cost"] == f"${expected:.4f}"
    assert rows["all"]["judge tokens in / out"] == (
        f"{usage['input_tokens']:,} / {usage['output_tokens']:,}"
    )
    assert f"cost ${expected:.4f}" in out  # the judge's line too
    # scored again: the verdicts are re-used, and what they cost is still the batch's cost
    out = _shown(capsys, monkeypatch, 250, *args)
    assert read_table(out)["all"]["judge cost"] == f"${expected:.4f}"
    # a judge without a price: its cost is unknown, and the line says which entry to price
    (tmp_path / "models.yaml").write_text(
        "\n".join(line for line in yaml.read_text().splitlines() if "price" not in line) + "\n"
    )
    out = _shown(capsys, monkeypatch, 250, *args)
    assert read_table(out)["all"]["judge cost"] == "-"
    assert "no price_per_million_tokens for judge-x" in " ".join(out.split())


def test_the_dataset_is_the_corpus_the_batch_ran_whatever_tasks(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    batch, corpus = _batch(tmp_path)
    renamed = corpus.rename(corpus.with_name("a-copy-of-it"))
    datasets = []
    for extra in ([], ["--tasks", str(renamed)]):
        _shown(capsys, monkeypatch, 250, str(batch), "--no-judge", *extra)
        s = json.loads((batch / "rescore-summary.json").read_text())
        datasets.append((s["dataset"], {e["dataset"] for e in s["entries"]}))
    assert datasets == [("shop-suite", {"shop-suite"})] * 2
