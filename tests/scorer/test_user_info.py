"""The user information the agent had reaches the judge: the runner keeps the task's extra_info
files in <run>/my-info/, and scoring the run without its corpus gives them to the judge, with
the date of the commit."""

from __future__ import annotations

import calendar
import json
from pathlib import Path

from proxy_addon.records import Stopped, StopReason
from sandbox.runs import RunJob, finish, load, prepare
from scorer.cli import main
from tests.conftest import TEST_CASES
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import FakeModelAPI, verdict

TASK = TEST_CASES / "clawbench-demo" / "001-shop-checkout-mug"


def test_the_judge_gets_the_my_info_files_the_agent_had(
    tmp_path: Path, judge: FakeModelAPI
) -> None:
    run = prepare(RunJob(TASK, tmp_path / "batch-20260516-120000", "m", "h"))
    load(run)
    kept = run.run_dir / "my-info" / "shipping_address.json"
    assert kept.read_bytes() == (TASK / "extra_info" / "shipping_address.json").read_bytes()
    # the addon's record of the commit, then the runner's run-meta.json
    run.data.mkdir(exist_ok=True)
    committed = calendar.timegm((2026, 5, 16, 12, 0, 0))
    (run.data / "interception.json").write_text(
        json.dumps(
            {
                "intercepted": True,
                "request": {
                    "url": "https://shop.clawbench.test/api/checkout",
                    "method": "POST",
                    "body": {"sku": "MUG-RED-12", "qty": 1},
                    "headers": {"content-type": "application/json"},
                    "content_type": "application/json",
                    "body_size": 31,
                },
                "schema": {"url_pattern": "x", "method": "POST"},
                "intercepted_at": committed,
            }
        )
    )
    run.execution.stopped = Stopped(StopReason.INTERCEPTED)
    finish(run, None, {})
    judge.script([verdict(True, "ok")])
    yaml = models_yaml(tmp_path / "models.yaml", judge)
    assert main([str(run.run_dir), "--models-yaml", str(yaml), "--judge-model", "judge-x"]) == 0
    (call,) = judge.calls
    before = call.user.split("<<<REQUEST")[0]
    assert "--- /my-info/shipping_address.json (" in before
    assert "the shipping address for this order" in before and "664 Spadina Ave" in before
    assert "RUN DATE: the agent ran on 2026-05-16 (Saturday), UTC." in before
