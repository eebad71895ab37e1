"""run-meta.json's one model and one reader: every key we write typed, the reference's files read
with their own keys kept (their stop reasons and categories as text), nothing lost on rewrite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.batches import task_json
from bench.reference_batches import reference_meta, reference_run
from proxy_addon.records import (
    RUN_META,
    Category,
    RecordError,
    RunMeta,
    StopReason,
    merged_run_meta,
    read_run_meta_raw,
    write_run_meta,
)
from scorer.html_report.runtext import single_run_view


def _reference(tmp_path: Path, **changes: object) -> Path:
    meta = reference_meta("a", task_json("a"), model="m", harness="h", intercepted=False, ts="t")
    meta.update(changes)
    path = tmp_path / RUN_META
    path.write_text(json.dumps(meta))
    return path


def test_the_references_file_reads_with_its_own_words_and_keys(tmp_path: Path) -> None:
    path = _reference(tmp_path, result_category="api_or_credit", stop_reason="chrome_cdp_timeout")
    meta, raw = read_run_meta_raw(path)
    assert meta.result_category == "api_or_credit" and type(meta.result_category) is str
    assert meta.stop_reason == "chrome_cdp_timeout" and type(meta.stop_reason) is str
    assert meta.class_ == task_json("a")["metadata"]["class"]
    assert meta.provenance is not None and meta.provenance.package is None
    assert meta.provenance.model_extra["clawbench_version"] == "0.11.0"  # its shape, kept
    assert raw["run_metrics"] == meta.model_extra["run_metrics"]
    # the scorer's rewrite keeps every key of theirs, in order
    merged = merged_run_meta(raw, {"result_category": Category.INFRA_FAILURE})
    assert merged is not None and list(merged) == list(raw)


def test_our_words_read_as_the_enums(tmp_path: Path) -> None:
    meta, _ = read_run_meta_raw(
        _reference(tmp_path, result_category="model_not_intercepted", stop_reason="agent_exited")
    )
    assert meta.result_category is Category.MODEL_NOT_INTERCEPTED
    assert meta.stop_reason is StopReason.AGENT_EXITED
    assert meta.runner_said is Category.MODEL_NOT_INTERCEPTED


def test_what_we_write_reads_back_with_every_key_typed(tmp_path: Path) -> None:
    meta = RunMeta.model_validate(
        {
            "test_case": "a",
            "class": "shopping",
            "stop_reason": "agent_exited",
            "result_category": "model_not_intercepted",
            "infra_failure": False,
            "agent_claim": {"success": True, "text": "done", "steps": 3, "error": None},
            "sandbox": {"image": "img", "timings": {"agent_started": 1.5}, "node": None},
            "collection_warnings": ["data/traffic.har: not written"],
            "provenance": {"package": "clawbench-intercept", "git_sha": None},
        }
    )
    write_run_meta(tmp_path / RUN_META, meta)
    raw = json.loads((tmp_path / RUN_META).read_text())
    assert raw["class"] == "shopping" and "class_" not in raw
    back, _ = read_run_meta_raw(tmp_path / RUN_META)
    assert back == meta and back.model_extra == {}
    assert back.sandbox is not None and back.sandbox.timings == {"agent_started": 1.5}


def test_a_block_of_ours_in_the_wrong_shape_names_the_file_and_field(tmp_path: Path) -> None:
    path = _reference(tmp_path, sandbox={"image": "img", "timings": "soon"})
    with pytest.raises(RecordError, match=r"run-meta\.json: sandbox\.timings"):
        read_run_meta_raw(path)


def test_a_reference_run_of_its_own_category_shows_as_one_run(tmp_path: Path) -> None:
    run = reference_run(tmp_path, "a", task_json("a"), result_category="api_or_credit")
    view = single_run_view(run)
    assert view.row.result_category == "api_or_credit" and view.meta is not None
