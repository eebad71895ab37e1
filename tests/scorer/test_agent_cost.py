"""The agents' model usage in the scores: run-meta.json's agent_usage totalled per entry and batch,
priced by models.yaml's price_per_million_tokens, in rescore-summary.json, the table and the CSV."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from bench.batches import our_run, task_json
from proxy_addon.records import AgentUsage, ModelUsage
from proxy_addon.records.usage import UnmeteredReplies
from scorer.batch.agent_cost import model_cost, run_cost
from scorer.cli import main as score
from scorer.display import agent_usage_line
from scorer.models_yaml import ConfigError, Price, read_prices
from tests.support.table_text import read_table


def usage(**models: tuple[int, int, int]) -> AgentUsage:
    """calls 2 per model; (input, cached, output) tokens."""
    return AgentUsage(
        calls=2 * len(models),
        models={
            name: ModelUsage(calls=2, input_tokens=i, cached_tokens=c, output_tokens=o)
            for name, (i, c, o) in models.items()
        },
    )


def test_cached_input_is_priced_apart_and_defaults_to_the_input_price() -> None:
    tokens = ModelUsage(
        calls=1, input_tokens=1_000_000, cached_tokens=400_000, output_tokens=10_000
    )
    assert model_cost(tokens, Price(input=2, output=8, cached_input=0.5)) == pytest.approx(
        0.6 * 2 + 0.4 * 0.5 + 0.01 * 8
    )
    assert model_cost(tokens, Price(input=2, output=8)) == pytest.approx(2 + 0.08)


def test_a_model_is_priced_by_its_own_entry_else_by_the_runs_model() -> None:
    prices = {"gpt-x": Price(input=1, output=10), "gpt-x-mini": Price(input=0.1, output=1)}
    both = usage(**{"gpt-x-2026-01-01": (1_000_000, 0, 100_000), "gpt-x-mini": (1_000_000, 0, 0)})
    # the dated id the provider answers with takes the run's entry; the mini model its own
    assert run_cost(both, "gpt-x", prices) == pytest.approx(1 + 1 + 0.1)
    assert run_cost(both, "other", prices) is None  # the dated id has no price of its own
    assert run_cost(usage(), "gpt-x", prices) == 0.0  # no call, no cost


def write_batch(tmp_path: Path) -> Path:
    """Three runs of one model: two priced runs of one task (the newest counts, both cost) and
    one run of a second task that recorded no usage (not a harness run)."""
    batch = tmp_path / "batch-20260101-000000"
    task = task_json("cart-00", body={"item": "mug"})
    for ts, tokens in (("20260101-120000", (3000, 1000, 200)), ("20260101-130000", (1000, 0, 50))):
        run = our_run(batch, "cart-00", task, model="gpt-x", harness="browser-use", ts=ts)
        meta = json.loads((run / "run-meta.json").read_text())
        meta["agent_usage"] = usage(**{"gpt-x-2026": tokens}).model_dump(mode="json")
        (run / "run-meta.json").write_text(json.dumps(meta))
    our_run(batch, "cart-01", task_json("cart-01"), model="gpt-x", harness="browser-use")
    return batch


def test_scored_batch_totals_usage_and_cost_in_summary_table_and_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = write_batch(tmp_path)
    models = tmp_path / "models.yaml"
    models.write_text(  # an agent entry: its key's variable need not be set to price it
        "gpt-x:\n  base_url: https://api.example.test/v1\n  api_type: openai-completions\n"
        "  api_key: ${NOT_SET_HERE}\n"
        "  price_per_million_tokens: {input: 2.5, output: 10, cached_input: 0.25}\n"
    )
    board = tmp_path / "board.csv"
    args = [str(batch), "--no-judge", "--models-yaml", str(models), "--csv", str(board)]
    assert score(args) == 0
    s = json.loads((batch / "rescore-summary.json").read_text())
    cost = (2000 * 2.5 + 1000 * 0.25 + 200 * 10 + 1000 * 2.5 + 50 * 10) / 1e6
    expected = {
        "runs_with_usage": 2,  # the re-run cost money too
        "runs_without_usage": 1,
        "calls": 4,
        "calls_without_usage": 0,
        "input_tokens": 4000,
        "output_tokens": 250,
        "cached_tokens": 1000,
        "cost_usd": pytest.approx(cost),
        "runs_unpriced": 0,
        "runs_usage_incomplete": 0,
    }
    assert s["agent_usage"] == expected and s["entries"][0]["agent_usage"] == expected
    row = next(csv.DictReader(board.open()))
    assert (row["agent_input_tokens"], row["agent_output_tokens"]) == ("4000", "250")
    assert row["agent_cost_usd"] == f"{cost:.4f}"
    (shown,) = read_table(capsys.readouterr().out).values()
    assert shown["agent tokens in / out"] == "4,000 / 250"
    assert shown["agent cost"] == f"${cost:.4f}"

    assert score([str(batch), "--no-judge"]) == 0  # no prices given: tokens, and no cost
    s = json.loads((batch / "rescore-summary.json").read_text())
    assert s["agent_usage"]["cost_usd"] is None and s["agent_usage"]["runs_unpriced"] == 2
    said = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert "cost unknown: 2 runs' models have no price (price_per_million_tokens in their" in said


def test_a_bad_price_is_one_error_naming_the_file_entry_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = write_batch(tmp_path)
    models = tmp_path / "models.yaml"
    models.write_text("gpt-x:\n  price_per_million_tokens: {input: -1, output: 10}\n")
    with pytest.raises(ConfigError, match=r"entry 'gpt-x' key 'price_per_million_tokens.input'"):
        read_prices(models)
    assert score([str(batch), "--no-judge", "--models-yaml", str(models)]) == 2
    err = capsys.readouterr().err
    assert str(models) in err and "price_per_million_tokens.input" in err and "USD" in err
    assert not (batch / "rescore-summary.json").exists()  # nothing written


def test_an_old_nine_column_csv_is_merged_and_rewritten_with_every_column(tmp_path: Path) -> None:
    batch = write_batch(tmp_path)
    board = tmp_path / "board.csv"
    board.write_text(
        "model,harness,dataset,passed,total,pass_rate,wall_hours,pass_rate_ci_low,"
        "pass_rate_ci_high\nold,curl,v1,1,2,50.00,0.10,9.45,90.55\n"
    )
    assert score([str(batch), "--no-judge", "--csv", str(board)]) == 0
    rows = list(csv.DictReader(board.open()))
    assert [r["model"] for r in rows] == ["old", "gpt-x"]
    assert rows[0]["agent_cost_usd"] == "" and rows[1]["agent_input_tokens"] == "4000"


def test_usage_incomplete_reaches_the_table_and_the_report(tmp_path: Path) -> None:
    """A run whose usage.json says unmetered is counted in runs_usage_incomplete and said."""
    batch = tmp_path / "batch-20260101-120000"
    run = our_run(batch, "c0", task_json("c0"))
    meta = json.loads((run / "run-meta.json").read_text())
    usage = AgentUsage(calls=1, unmetered=UnmeteredReplies(calls=2, hosts=["api.other.test:443"]))
    meta["agent_usage"] = usage.model_dump(mode="json")
    (run / "run-meta.json").write_text(json.dumps(meta))
    assert score([str(batch), "--no-judge"]) == 0
    totals = json.loads((batch / "rescore-summary.json").read_text())["agent_usage"]
    assert totals["runs_usage_incomplete"] == 1
    assert "usage incomplete in 1 runs" in (agent_usage_line(totals) or "")
