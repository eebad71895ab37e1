"""Real scored batches for the report: run dirs from the scorer tests' builder and from the real
addon (mitmdump in front of a loopback upstream), graded by the real clawbench-score against a
scripted loopback judge (one batch) and with --no-judge (another)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bench.batches import our_run, task_json, write_corpus
from bench.reference_batches import reference_run
from proxy_addon.addon import start_proxy
from scorer.cli import main as score
from scorer.html_report.cli import main
from tests.report.png import encode
from tests.scorer.conftest import models_yaml
from tests.support.fake_api import Call, Reply, start_judge_server, verdict
from tests.support.upstream import start_upstream

HOSTILE_ITEM = "<script>document.title='pwned-script'</script>"
HOSTILE_NOTE = "<img src=x onerror=\"document.title='pwned-img'\">"
HOSTILE_REASON = "<img src=y onerror=\"document.title='pwned-reason'\"> right mug"
HOSTILE_GOAL = "<script>document.title='pwned-goal'</script>"
HOSTILE_ACTION = "<img src=z onerror=\"document.title='pwned-action'\">"
TERMINAL_ESCAPE = "\x1b]0;pwned-terminal\x07\x1b[31mred\u202eevil"
SHOT_COLOUR = (12, 200, 90)
CART = "https://shop.example.com/api/cart"
REF_MODEL, OUR_MODEL, STAGE1_MODEL = (
    "anthropic/claude-sonnet-4-6",
    "qwen/qwen3-coder",
    "openai/gpt-5",
)
CASES = [f"cart-{i:02d}" for i in range(6)]


@dataclass(frozen=True)
class Batches:
    """The output directory, its judged batch and its Stage-1-only batch."""

    out: Path
    judged: Path
    stage1: Path


def _task(slug: str) -> dict:
    return task_json(slug, task_id=CASES.index(slug), body={"item": "red mug"})


def proxied_data(tmp: Path, slug: str) -> Path:
    """data/ of a real proxy run: a near miss (wrong item), then the commit with a hostile body."""
    upstream = start_upstream()
    task_dir = tmp / "tasks" / slug
    task_dir.mkdir(parents=True)
    (task_dir / "task.json").write_text(json.dumps(_task(slug), indent=2))
    data = tmp / "work" / slug / "data"
    options = {
        "clawbench_route": f"shop.example.com={upstream.url}",
        "clawbench_block_mode": "respond",
    }
    try:
        with start_proxy(task_dir / "task.json", data, options=options) as proxy:
            headers = {"authorization": "Bearer upstream-token-88aa"}
            with httpx.Client(proxy=proxy.url, headers=headers, timeout=10) as client:
                client.post("http://shop.example.com/api/cart", json={"item": "blue mug"})
                body = {"item": "red mug", "note": HOSTILE_NOTE, "title": HOSTILE_ITEM}
                r = client.post(f"{CART.replace('https', 'http')}?password=pw-9", json=body)
                assert r.headers.get("x-clawbench") == "blocked"
    finally:
        upstream.close()
    return data


def hostile_agent_files(run: Path) -> None:
    """A browser-use trace the agent made hostile: markup in its goal and actions, terminal
    escapes, bad UTF-8, a 5 MB line, a non-object line, screenshots that are a PNG, an SVG with a
    script, and a path out of agent/ (only the PNG may be shown, inline)."""
    agent = run / "agent"
    (agent / "shots").mkdir(parents=True)
    (agent / "shots" / "step-1.png").write_bytes(encode(24, 16, SHOT_COLOUR))
    (agent / "shots" / "step-2.svg").write_text(
        "<svg xmlns='http://www.w3.org/2000/svg'><script>document.title='pwned-svg'</script></svg>"
    )
    data = json.loads((run / "data" / "requests.jsonl").read_text().splitlines()[0])
    t0 = data["timestamp"] - 1
    steps = [
        {"step": 1, "time": t0, "event": "actions", "url": "https://shop.example.com/",
         "goal": HOSTILE_GOAL, "actions": [{"click": {"index": 3, "text": HOSTILE_ACTION}}]},
        {"step": 1, "time": t0 + 0.2, "event": "result", "errors": [],
         "screenshot": "shots/step-1.png"},
        {"step": 2, "time": t0 + 0.5, "event": "actions", "goal": TERMINAL_ESCAPE, "actions": []},
        {"step": 2, "time": t0 + 0.55, "event": "result", "errors": ["<b>boom</b>"],
         "screenshot": "shots/step-2.svg"},
        {"step": 3, "time": t0 + 0.7, "event": "actions", "goal": "escape"},
        {"step": 3, "time": t0 + 0.8, "event": "result", "screenshot": "../../../etc/passwd"},
        {"step": 3, "time": t0 + 0.9, "event": "stopped", "reason": "stopped by the sandbox"},
    ]  # fmt: skip
    lines = [json.dumps(s).encode() for s in steps]
    lines.insert(
        4,
        b'{"step": 9, "goal": "bad \xff\xfe utf-8 <i>x</i>", "time": '
        + str(t0 + 0.6).encode()
        + b"}",
    )  # fmt: skip (a trace of one line per step)
    lines += [b"[1, 2]", b"x" * (5 << 20), b'{"step": 4, "goal": "cut']
    (agent / "trace.jsonl").write_bytes(b"\n".join(lines) + b"\n")


def _judge(call: Call) -> Reply:
    if "blue mug" in call.user:
        return verdict(False, "wrong colour: blue, not red")
    if "(cart-03)" in call.user:
        return Reply("I cannot decide.")  # unparseable: a judge error
    if "pwned-script" in call.user:
        return verdict(True, HOSTILE_REASON)
    return verdict(True, "one red mug")


def _add_meta(run: Path, **keys: object) -> None:
    meta = json.loads((run / "run-meta.json").read_text())
    (run / "run-meta.json").write_text(json.dumps({**meta, **keys}, indent=2))


def build(tmp: Path) -> Batches:
    """Two scored batches under tmp/out (see the module docstring for what each holds)."""
    corpus = write_corpus(tmp / "corpus", {slug: _task(slug) for slug in CASES})
    judged = tmp / "out" / "batch-20260101-120000"
    red = {"url": CART, "method": "POST", "body": {"item": "red mug", "title": HOSTILE_ITEM}}
    blue = {"url": CART, "method": "POST", "body": {"item": "blue mug"}}
    ref = {"model": REF_MODEL}
    reference_run(judged, "cart-00", _task("cart-00"), request=red, **ref)
    reference_run(judged, "cart-01", _task("cart-01"), request=blue, **ref)
    reference_run(judged, "cart-02", _task("cart-02"), stop_reason="time_limit_exceeded", **ref)
    reference_run(judged, "cart-03", _task("cart-03"), request=dict(red, body={"item": "red mug"}),
                  **ref)  # fmt: skip
    reference_run(judged, "cart-04", _task("cart-04"), stop_reason="proxy_failed", **ref)
    # cart-05 has no run of REF_MODEL: missing
    ours = our_run(
        judged, "cart-00", _task("cart-00"), proxied_data(tmp, "cart-00"), model=OUR_MODEL
    )
    hostile_agent_files(ours)
    _add_meta(ours, harness_version="curl 8.5.0",
              agent_claim={"success": True, "text": "Added the <b>red mug</b> to the cart."},
              agent_usage={"calls": 3, "models": {"qwen3-coder-2026-01": {  # as the reply names it
                  "calls": 3, "input_tokens": 1234, "cached_tokens": 200,
                  "output_tokens": 56}}})  # fmt: skip
    exited = our_run(judged, "cart-01", _task("cart-01"), model=OUR_MODEL, stop_reason="agent_idle")
    _add_meta(exited, agent_claim={"success": False, "text": "Could not find the cart."})
    said_done = our_run(judged, "cart-02", _task("cart-02"), model=OUR_MODEL)  # nothing committed
    _add_meta(said_done, agent_claim={"success": True, "text": "Done: the mug is in your cart."})
    with start_judge_server(_judge) as server:
        price = "{input: 1, output: 4}"  # the judge's own price: USD per million tokens
        yaml = models_yaml(tmp / "models.yaml", server, price_per_million_tokens=price)
        with yaml.open("a") as f:  # the agent's price: USD per million tokens
            f.write(f"{OUR_MODEL}:\n  price_per_million_tokens: {{input: 2, output: 8}}\n")
        args = [str(judged), "--tasks", str(corpus), "--models-yaml", str(yaml)]
        # cart-03's judge error and cart-04's infra failure: incomplete, wanted all the same
        assert score([*args, "--judge-model", "judge-x", "--allow-incomplete"]) == 0

    stage1 = tmp / "out" / "batch-20260102-120000"
    for i, slug in enumerate(CASES[:4]):
        request = red if i % 2 == 0 else None
        reference_run(stage1, slug, _task(slug), model=STAGE1_MODEL, harness="browser-use",
                      request=request, stop_reason="agent_exited")  # fmt: skip
    assert score([str(stage1), "--no-judge"]) == 0
    return Batches(tmp / "out", judged, stage1)


@pytest.fixture(scope="session")
def batches(tmp_path_factory: pytest.TempPathFactory) -> Batches:
    tmp = tmp_path_factory.mktemp("report")
    mp = pytest.MonkeyPatch()
    mp.delenv("DEEPSEEK_API_KEY", raising=False)
    try:
        return build(tmp)
    finally:
        mp.undo()


def summary(batch: Path) -> dict:
    """The batch's rescore-summary.json as written."""
    return json.loads((batch / "rescore-summary.json").read_text())


@pytest.fixture
def report(batches: Batches, tmp_path: Path) -> Iterator[Path]:
    """report.html over both batches, written by the real CLI beside the output directory."""
    out = batches.out / f"report-{tmp_path.name}.html"
    assert main([str(batches.out), "-o", str(out)]) == 0
    yield out
    out.unlink(missing_ok=True)
