"""Report benchmark: the size of one report of a 130-task batch of browser runs, and its time.

    .venv/bin/python bench/bench_report.py [--runs 130]

Builds the batch (bench/browser_runs.py: per run a browser-use trace of 12 steps with a 40 KB
screenshot each, 135 requests, 12 model calls), scores it Stage 1 only, and writes the report
three times: as it is, without the screenshots (their files removed), so the page's own size and
the screenshots' share are apart, and (the baseline, measured in the same run) without traffic
and traces (requests.jsonl and agent/ removed): what the report was before run pages. Sizes in
bytes, times in CPU seconds. Results go to bench/results/report.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.browser_runs import browser_batch  # noqa: E402
from scorer.html_report import load_report, write_report  # noqa: E402
from scorer.scoring import ScoreOptions, score  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def report_size(batch: Path, out: Path) -> tuple[int, float]:
    """(bytes, CPU seconds) of the report of batch (CPU time: the machine may be shared)."""
    t0 = time.process_time()
    write_report(load_report([batch], out), out, "bench")
    return out.stat().st_size, time.process_time() - t0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=130)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        batch, corpus = browser_batch(root, args.runs)
        score(ScoreOptions(paths=[batch], judges=[], tasks=corpus))
        full, full_s = report_size(batch, root / "full.html")
        for shots in batch.glob("*/*/agent/screenshots"):
            shutil.rmtree(shots)
        no_shots, no_shots_s = report_size(batch, root / "no-shots.html")
        for run in batch.glob("*/*/run-meta.json"):
            (run.parent / "data" / "requests.jsonl").unlink()
            shutil.rmtree(run.parent / "agent")
        baseline, baseline_s = report_size(batch, root / "baseline.html")
    result = {
        "runs": args.runs,
        "report_bytes": full,
        "report_cpu_s": round(full_s, 2),
        "without_screenshots_bytes": no_shots,
        "without_screenshots_cpu_s": round(no_shots_s, 2),
        "baseline_bytes": baseline,
        "baseline_cpu_s": round(baseline_s, 2),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "report.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
