"""browser-use, installed in the image's harness layer, does a task through the proxy.

The fake model API with the demo's browser-use steps (tests.support.fake_api) runs in its own
container on the tests' internal network and answers browser-use's real requests with its
action format: open the order form, fill it, submit. The commit is blocked and credited, the
fake site never receives it, the agent's trace and claim are in the run, and the judge passes
the right order and fails the wrong one.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proxy_addon.records import read_interception
from sandbox.cli import main as sandbox_main
from sandbox.harnesses import BROWSER_USE
from sandbox.host.image import HARNESS_VERSION_LABEL
from scorer.cli import main as score_main
from scorer.html_report.runtext import single_run_view
from tests.sandbox.conftest import CASES
from tests.sandbox.model_servers import MODEL_HOST, ModelServer, harness_layer
from tests.support.fake_api import Call, start_judge_server, verdict

pytestmark = pytest.mark.docker
KEY = "sk-browser-use-test-0123456789"
CASE = CASES / "form-order"
STALE = "browser-use==0.0.1"


def _steps(qty: str) -> list[dict[str, Any]]:
    return [
        {"navigate": "https://shop.clawbench.test/order"},
        {
            "actions": [
                {"input": {"field": "qty", "text": qty}},
                {"input": {"field": "Full name", "text": "Alex Green"}},
            ]
        },
        {"click": "Place order"},
        {"done": "Ordered the lamps.", "success": True},
    ]


@pytest.fixture(scope="module")
def bu_image(docker_client, sandbox_image) -> str:
    return harness_layer(docker_client, sandbox_image, BROWSER_USE)


@pytest.fixture(scope="module")
def stale_bu_image(docker_client, bu_image) -> Iterator[str]:
    """The harness image labelled as an older build of it (what a stale image says of itself)."""
    tag = f"{bu_image}-stale"
    dockerfile = f"FROM {bu_image}\nLABEL {HARNESS_VERSION_LABEL}={STALE}\n"
    docker_client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    yield tag
    docker_client.images.remove(tag)


@pytest.fixture
def model_server(docker_client, sandbox_image, internet) -> Iterator[Any]:
    servers: list[ModelServer] = []

    def start(steps: list[dict[str, Any]]) -> ModelServer:
        server = ModelServer(
            docker_client, sandbox_image, internet.network_name, {"browser_use": steps}
        )
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def _models_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(
        f"scripted-bu:\n  base_url: http://{MODEL_HOST}:8000/v1\n"
        "  api_type: openai-completions\n  api_key: ${BU_TEST_KEY}\n"
    )
    return path


def _run(bu_image: str, internet: Any, out: Path, models: Path) -> tuple[int, Path]:
    os.environ["BU_TEST_KEY"] = KEY
    try:
        code = sandbox_main(
            [
                "run",
                str(CASE),
                "--harness",
                "browser-use",
                "--model",
                "scripted-bu",
                "--models-yaml",
                str(models),
                "--image",
                bu_image,
                "--network",
                internet.network_name,
                "--upstream-ca",
                str(internet.ca),
                *(a for net in internet.subnets for a in ("--allow-private", net)),
                "--out",
                str(out),
                "--stop-grace",
                "5",
                "--max-steps",
                "8",
                "--no-preflight",  # the model's name resolves only on the tests' network
            ]
        )
    finally:
        del os.environ["BU_TEST_KEY"]
    (run_dir,) = (p.parent for p in out.rglob("run-meta.json"))
    return code, run_dir


def test_browser_use_orders_through_the_proxy_and_the_judge_grades_it(
    bu_image, stale_bu_image, internet, model_server, tmp_path, capsys
) -> None:
    models = _models_yaml(tmp_path)

    def judge(call: Call) -> Any:
        return verdict('"qty":"2"' in call.user.replace(" ", ""), "checked the quantity")

    runs, costs = {}, {}
    for qty in ("2", "3"):
        server = model_server(_steps(qty))
        before = len(internet.log())
        # the second run from an image that says it holds an older browser-use
        image = bu_image if qty == "2" else stale_bu_image
        code, run_dir = _run(image, internet, tmp_path / f"out-{qty}", models)
        assert code == 0, (run_dir / "data" / "agent.log").read_text()[-3000:]
        got = read_interception(run_dir / "data" / "interception.json")
        assert got.request is not None
        assert got.request["body"] == {"item": "lamp", "qty": qty, "name": "Alex Green"}
        assert not any(e["path"] == "/api/order-form" for e in internet.log()[before:])
        meta = json.loads((run_dir / "run-meta.json").read_text())
        assert meta["harness"] == "browser-use" and meta["model"] == "scripted-bu"
        # stopped right after the blocked commit: it never got to say "done"
        claim = meta["agent_claim"]
        assert claim["success"] is None and claim["steps"] >= 2, meta
        # harness_version is what the image says it holds, not this checkout's pins
        assert meta["harness_version"] == (BROWSER_USE.version if qty == "2" else STALE)
        # the trace ends with the step that sent the commit: its click, written as it started
        trace = [json.loads(line) for line in (run_dir / "agent" / "trace.jsonl").open()]
        assert [(t["step"], t["event"]) for t in trace][:6] == [
            (1, "actions"), (1, "result"), (1, "screenshot"),
            (2, "actions"), (2, "result"), (2, "screenshot"),
        ]  # fmt: skip
        last = trace[-1]["step"]
        (acted,) = [t for t in trace if t["step"] == last and t["event"] == "actions"]
        assert [list(a) for a in acted["actions"]] == [["click"]], trace[-2:]
        assert trace[-1]["event"] in ("stopped", "result", "screenshot")
        assert trace[-1]["step"] == last
        # a JPEG of the page after each finished step, named by its screenshot line, and the
        # run page: the steps, the step that clicked the commit, then the block
        shots = [t["path"] for t in trace if t["event"] == "screenshot" and "path" in t]
        assert shots and all(
            (run_dir / "agent" / s).read_bytes()[:3] == b"\xff\xd8\xff" for s in shots
        )
        timeline = single_run_view(run_dir).timeline
        assert timeline is not None
        order = [e.kind.value for e in timeline.events]
        steps = [i for i, k in enumerate(order) if k == "step"]
        assert len(steps) == last and max(steps) < order.index("block"), order
        assert any(e.screenshot for e in timeline.events if e.kind.value == "step")
        # what the proxy counted is what the model server reported
        record = server.record()
        usage = record["usage_totals"]
        assert usage["calls"] >= 3 and not record["errors"], record
        (counted,) = meta["agent_usage"]["models"].values()
        assert meta["agent_usage"]["calls"] == counted["calls"] == usage["calls"]
        assert counted["input_tokens"] == usage["input_tokens"]
        assert counted["output_tokens"] == usage["output_tokens"]
        assert counted["cached_tokens"] == usage["cached_tokens"]
        for path in run_dir.rglob("*"):
            if path.is_file():
                assert KEY.encode() not in path.read_bytes(), path
        runs[qty] = run_dir
        costs[qty] = (usage["input_tokens"] * 3 + usage["output_tokens"] * 15) / 1e6

    with start_judge_server(judge) as server:
        judge_yaml = tmp_path / "judge.yaml"
        judge_yaml.write_text(
            f"loop:\n  base_url: {server.base_url}\n  api_type: openai-completions\n"
            "  api_key: judge-key\n"
            "scripted-bu:\n  price_per_million_tokens: {input: 3, output: 15}\n"
        )
        capsys.readouterr()
        for qty, run_dir in runs.items():
            assert (
                score_main(
                    [str(run_dir), "--judge-model", "loop", "--models-yaml", str(judge_yaml)]
                )
                == 0
            )
            meta = json.loads((run_dir / "run-meta.json").read_text())
            assert meta["final_pass"] is (qty == "2"), meta
            # the scorer prices what the proxy counted with the agent model's entry
            assert f"${costs[qty]:.4f}" in capsys.readouterr().out
