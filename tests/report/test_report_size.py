"""The report of a 130-task batch of browser runs stays one self-contained file under the size
docs/formats.md states (bench/bench_report.py measures it; bench/browser_runs.py builds it)."""

from __future__ import annotations

import re
from pathlib import Path

from bench.browser_runs import browser_batch
from scorer.cli import main as score
from scorer.html_report.cli import main as report
from scorer.html_report.runpage import REPORT_SHOT_BUDGET

DOCUMENTED_MB = 22
"""docs/formats.md: "under 22 MB for 130 tasks"."""


def test_a_130_task_report_stays_under_its_documented_size(tmp_path: Path) -> None:
    batch, corpus = browser_batch(tmp_path)
    assert score([str(batch), "--no-judge", "--tasks", str(corpus)]) == 0
    out = tmp_path / "report.html"
    assert report([str(batch), "-o", str(out)]) == 0
    page = out.read_text()
    assert len(page.encode()) < DOCUMENTED_MB * 1_000_000
    images = re.findall(r'src="(data:image/[a-z]+;base64,[^"]*)"', page)
    assert images and sum(map(len, images)) <= REPORT_SHOT_BUDGET
    assert page.count('data-kind="block"') == 130  # every run's page has its timeline
    assert not re.search(r"<(script|iframe|object|embed)\b", page)
