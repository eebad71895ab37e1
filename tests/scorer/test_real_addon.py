"""Batches made by the real addon: mitmdump + our addon in front of a real upstream, real clients.

Each run's data/ is what the proxy wrote while a client browsed and committed (or not); the run
directories around it are assembled as the runner does. The scorer then re-checks the recorded
request with the shared matcher and shows the judge a redacted dump, never a header.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.batches import our_run, task_json
from proxy_addon.addon import start_proxy
from scorer.cli import main
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import Call, Reply, start_judge_server, verdict
from tests.support.upstream import start_upstream

SECRET_COOKIE = "sid=cookie-value-4f1d"
SECRET_BEARER = "Bearer upstream-token-88aa"


def proxied_run(tmp: Path, slug: str, task: dict, commit: bool) -> Path:
    """Run the proxy for one task while a client browses (and commits if asked); its data/."""
    upstream = start_upstream()
    task_dir = tmp / "tasks" / slug
    task_dir.mkdir(parents=True)
    (task_dir / "task.json").write_text(json.dumps(task, indent=2))
    data = tmp / "work" / slug / "data"
    route = f"shop.example.com={upstream.url}"
    options = {"clawbench_route": route, "clawbench_block_mode": "respond"}
    try:
        with start_proxy(task_dir / "task.json", data, options=options) as proxy:
            headers = {"cookie": SECRET_COOKIE, "authorization": SECRET_BEARER}
            with httpx.Client(proxy=proxy.url, headers=headers, timeout=10) as client:
                assert client.get("http://shop.example.com/products?page=2").status_code == 200
                if commit:
                    r = client.post(
                        "http://shop.example.com/api/cart?session_token=zzz",
                        json={"item": "red mug", "qty": 1, "csrf_token": "csrf-secret-1"},
                    )
                    assert r.status_code == 403 and r.headers["x-clawbench"] == "blocked"
    finally:
        upstream.close()
    assert all(r.path != "/api/cart?session_token=zzz" for r in upstream.requests)
    return data


@pytest.fixture(scope="module")
def real_batch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("real")
    batch = tmp / "out" / "batch-20260101-120000"
    cart = task_json("cart", task_id=1, judge_context={"rubric": "one red mug"})
    browse = task_json("browse", task_id=2)
    our_run(batch, "cart", cart, proxied_run(tmp, "cart", cart, commit=True))
    our_run(batch, "browse", browse, proxied_run(tmp, "browse", browse, commit=False))
    yield batch


def test_real_runs_are_scored_and_the_judge_sees_no_secret(
    real_batch: Path, tmp_path: Path
) -> None:
    seen: list[Call] = []

    def reply(call: Call) -> Reply:
        seen.append(call)
        return verdict(True, "one red mug")

    with start_judge_server(reply) as judge:
        yaml = models_yaml(tmp_path / "models.yaml", judge)
        args = [str(real_batch), "--models-yaml", str(yaml), "--judge-model", "judge-x"]
        assert main(args) == 0
    s = json.loads((real_batch / "rescore-summary.json").read_text())
    assert (s["n_total"], s["n_intercepted"], s["n_passed"]) == (2, 1, 1)
    cart = next(t for t in s["tasks"] if t["test_case"] == "cart")
    browse = next(t for t in s["tasks"] if t["test_case"] == "browse")
    assert cart["recheck"] == {"status": "pass", "reasons": []}
    assert cart["result_category"] == "passed"
    assert browse["result_category"] == "model_not_intercepted"
    (call,) = seen
    prompt = call.system + call.user
    for secret in ("cookie-value-4f1d", "upstream-token-88aa", "csrf-secret-1", "zzz"):
        assert secret not in prompt
    assert '"item":"red mug"' in call.user and '"csrf_token":"[REDACTED]"' in call.user
    assert "one red mug" in call.user.split("<<<REQUEST")[0]  # judge_context, before the dump
    recorded = json.loads((real_batch / cart["run_dir"] / "data" / "interception.json").read_text())
    assert recorded["request"]["headers"]["cookie"] == "[REDACTED]"
    assert (real_batch / cart["run_dir"] / "data" / "judge.json").exists()
    assert (real_batch / browse["run_dir"] / "data" / "requests.jsonl").stat().st_size > 0
