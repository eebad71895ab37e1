"""Judging runs as they land (scorer.live, the Ray batch's): each run judged on arrival through
one scheduler for the whole batch, and the batch's final score() asks the judge nothing again."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from bench.batches import task_json
from bench.reference_batches import reference_run
from scorer.live import LiveScoring
from scorer.scoring import ScoreOptions, resolve_judge, score
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import FakeModelAPI, verdict

GOOD = {"url": "https://shop.example.com/api/cart", "method": "POST", "body": {"qty": 1}}


def _wait(predicate: Callable[[], bool], timeout_s: float = 30) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_each_run_is_judged_as_it_lands_and_the_final_pass_reuses_it(
    tmp_path: Path, judge: FakeModelAPI
) -> None:
    judge.script(lambda call: verdict("(yes" in call.user, "by case"))
    batch = tmp_path / "batch-20260101-120000"
    runs = [
        reference_run(batch, case, task_json(case, task_id=i), request=GOOD)
        for i, case in enumerate(("yes-1", "no-2", "yes-3"), start=1)
    ]
    never = reference_run(batch, "none", task_json("none", task_id=9))  # nothing to judge
    config = resolve_judge("judge-x", models_yaml(tmp_path / "models.yaml", judge))
    live = LiveScoring(config, None)
    try:
        live.add(runs[0])
        # judged while the rest of the batch has not landed yet
        assert _wait(lambda: (runs[0] / "data" / "judge.json").is_file())
        assert judge.count == 1
        for run in (*runs[1:], never):
            live.add(run)
    finally:
        live.close()
    assert judge.count == 3 and live.problems == [] and live.fatal is None
    assert all((run / "data" / "judge.json").is_file() for run in runs)
    result = score(ScoreOptions(paths=[batch], judges=[config]))
    assert judge.count == 3 and result.cached == 3  # the final pass asked nothing again
    verdicts = {r.test_case: r.judge_match for r in result.batches[0].runs}
    assert verdicts == {"yes-1": True, "no-2": False, "yes-3": True, "none": None}


def test_one_limiter_serves_the_whole_batch(tmp_path: Path, judge: FakeModelAPI) -> None:
    judge.script(lambda call: verdict(True))
    judge.max_concurrent = 2  # beyond two calls in flight the judge answers 429
    judge.retry_after, judge.latency = "0.2", 0.3
    batch = tmp_path / "batch-20260101-120000"
    runs = [
        reference_run(batch, f"c{i}", task_json(f"c{i}", task_id=i), request=GOOD) for i in range(8)
    ]
    config = resolve_judge("judge-x", models_yaml(tmp_path / "models.yaml", judge))
    live = LiveScoring(config, None)
    try:
        for run in runs:
            live.add(run)
    finally:
        live.close()
    (scheduler,) = live.schedulers.values()
    assert judge.statuses[429] >= 1 and scheduler.limiter.cuts >= 1  # one limiter backed off
    assert all((run / "data" / "judge.json").is_file() for run in runs)
