"""A batch of browser-agent runs as a real one looks, for the report's size (bench/report_size.py,
tests/report/test_report_size.py): per run, a browser-use trace of STEPS steps with a screenshot
each, requests.jsonl with a browser's page loads (Chromium's headers), the agent's model calls,
two near misses and the blocked commit.

The screenshots are SHOT_BYTES of noise behind a JPEG header: their size is what the report
pays for (the demo's browser-use screenshots of a simple page are 22-26 KB).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from bench.batches import our_run, task_json, write_corpus

STEPS = 12
PAGE_LOADS = 120
SHOT_BYTES = 40_000
MODEL = "openai/gpt-5"
HEADERS = {
    "Host": "shop.example.com",
    "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "HeadlessChrome/156.0.0.0 Safari/537.36",
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8",
    "Accept-Encoding": "gzip, deflate, br, zstd",
    "Accept-Language": "en-US,en;q=0.9",
    "Sec-Fetch-Site": "same-origin",
    "Sec-Fetch-Mode": "no-cors",
    "Sec-Fetch-Dest": "image",
    "Referer": "https://shop.example.com/products/mug",
    "sec-ch-ua": '"Not:A-Brand";v="8", "Chromium";v="156"',
    "sec-ch-ua-platform": '"Linux"',
    "Cookie": "[REDACTED]",
}


def _line(t: float, url: str, method: str = "GET", **extra: Any) -> dict[str, Any]:
    return {
        "timestamp": t, "url": url, "method": method, "headers": HEADERS, "body": None,
        "query_params": {}, "http_version": "HTTP/2.0", "content_type": None, "body_size": 0,
        "matched": False, "blocked": False, "near_miss": None, "websocket": False,
        "mode": "regular", **extra,
    }  # fmt: skip


def _model_call(t: float) -> dict[str, Any]:
    return {
        "timestamp": t, "model_call": True, "url": "https://api.openai.com/v1/chat/completions",
        "host": "api.openai.com", "path": "/v1/chat/completions", "method": "POST",
        "status": 200, "request_size": 18234, "response_size": 5120, "duration_s": 3.2,
        "first_byte_s": 0.41, "streamed": True, "model": "gpt-5-2026-01-01",
        "usage": {"input_tokens": 12000, "output_tokens": 350, "cached_tokens": 8000},
        "error": None,
    }  # fmt: skip


def _traffic(t0: float) -> list[dict[str, Any]]:
    lines = []
    assets = ("css/site.css", "js/app.js", "img/mug.jpg", "img/logo.svg", "fonts/a.woff2")
    for i in range(PAGE_LOADS):
        t = t0 + i * 0.5
        host = "shop.example.com" if i % 3 else "cdn.example.net"
        lines.append(_line(t, f"https://{host}/{assets[i % len(assets)]}?v={i}"))
        if i % (PAGE_LOADS // STEPS) == 0:
            lines.append(_model_call(t + 0.1))
    why = ['body: key \'item\' expected "red mug", got "blue mug"']
    cart = "https://shop.example.com/api/cart"
    for k in range(2):
        body = {"item": "blue mug", "qty": 1}
        lines.append(_line(t0 + 40 + k, cart, "POST", body=body, near_miss=why, body_size=30))
    commit = {"item": "red mug", "qty": 1, "note": "a gift"}
    lines.append(_line(t0 + 50, cart, "POST", body=commit, matched=True, blocked=True))
    return lines


def _trace(agent: Path, t0: float, rng: random.Random) -> None:
    (agent / "screenshots").mkdir(parents=True)
    lines = []
    for step in range(1, STEPS + 1):
        t = t0 + step * 4
        goal = f"Step {step}: open the product page, choose the red mug and add it to the cart"
        actions = [{"click": {"index": step, "text": "Add to cart"}},
                   {"input": {"index": 12, "text": "red mug", "clear": True}}]  # fmt: skip
        shot = f"screenshots/step-{step}.jpg"
        (agent / shot).write_bytes(b"\xff\xd8\xff\xe0" + rng.randbytes(SHOT_BYTES - 4))
        lines += [
            {"step": step, "time": t, "event": "actions", "url": "https://shop.example.com/",
             "goal": goal, "evaluation": "Success: the page loaded.", "actions": actions},
            {"step": step, "time": t + 2, "event": "result", "errors": []},
            {"step": step, "time": t + 2.1, "event": "screenshot", "path": shot},
        ]  # fmt: skip
    (agent / "trace.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def browser_batch(root: Path, runs: int = 130) -> tuple[Path, Path]:
    """(the batch, its corpus): runs tasks, one browser-use run each, ready to score."""
    rng = random.Random(29)
    tasks = {f"{i:03d}-shop-{i}": task_json(f"{i:03d}-shop-{i}", task_id=i) for i in range(runs)}
    corpus = write_corpus(root / "corpus", tasks)
    batch = root / "out" / "batch-20260201-120000"
    t0 = 1769947200.0
    for slug, task in tasks.items():
        commit = {"url": "https://shop.example.com/api/cart", "method": "POST",
                  "body": {"item": "red mug", "qty": 1, "note": "a gift"}}  # fmt: skip
        interception = {"intercepted": True, "request": commit, "schema": task["eval_schema"],
                        "intercepted_at": t0 + 50, "blocked_count": 1}  # fmt: skip
        run = our_run(batch, slug, task, model=MODEL, harness="browser-use",
                      interception=interception)  # fmt: skip
        lines = _traffic(t0)
        (run / "data" / "requests.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        _trace(run / "agent", t0, rng)
        meta = json.loads((run / "run-meta.json").read_text())
        meta["agent_claim"] = {"success": True, "text": "I added the red mug.", "steps": STEPS}
        (run / "run-meta.json").write_text(json.dumps(meta, indent=2))
    return batch, corpus


__all__ = ["PAGE_LOADS", "SHOT_BYTES", "STEPS", "browser_batch"]
