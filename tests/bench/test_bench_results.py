"""Benchmarks write their figures to a results file, never over a tracked doc; the page-load
benchmark runs end to end (one round: real Chromium, the site's HTTP/2 origin, the sandbox's
proxy) and its results hold a figure per way with its ratio to direct."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "benchmarks.md"


def test_pageload_bench_writes_its_results_file(tmp_path: Path, chromium: str) -> None:
    before = DOCS.read_bytes()
    out = tmp_path / "pageload.json"
    args = [sys.executable, str(ROOT / "bench" / "bench_pageload.py"), "--rounds", "1"]
    args += ["--origin", "h2", "--way", "direct", "--way", "sandbox", "--way", "cdp"]
    args += ["--chromium", chromium, "--out", str(out)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    pages = json.loads(out.read_text())["pages"]["h2"]
    assert set(pages) == {"direct", "sandbox", "cdp"}
    assert pages["sandbox"]["over_direct"]["median"] > 0 and pages["direct"]["median_ms"] > 0
    assert DOCS.read_bytes() == before


def test_scorer_bench_writes_results_not_docs(tmp_path: Path) -> None:
    before = DOCS.read_bytes()
    results = ROOT / "bench" / "results" / "scorer.json"
    results.unlink(missing_ok=True)
    args = [sys.executable, str(ROOT / "bench" / "bench_scorer.py"), "--runs", "8"]
    args += ["--latency", "0.01", "--rounds", "1"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(results.read_text())["capped"]["ours"]
    assert (results.with_suffix(".md")).read_text().startswith("## Scorer")
    assert DOCS.read_bytes() == before
