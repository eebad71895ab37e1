"""`clawbench-report --har`: write or refresh data/traffic.har of every run under some paths
(a run, a batch, a directory of batches; our layout or the reference's), for runs recorded
before the runner wrote it, or to rebuild it after a change."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from proxy_addon.records import write_traffic_har
from scorer.batch import DiscoveryError, find_batches


@dataclass
class HarRefresh:
    """What --har did: the files written, the paths holding no run, the runs it could not do."""

    written: list[Path] = field(default_factory=list)
    unfound: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def refresh_hars(paths: Sequence[Path]) -> HarRefresh:
    """Write <run>/data/traffic.har for every run under paths."""
    done = HarRefresh()
    seen: set[Path] = set()
    for path in paths:
        try:
            batches = find_batches(path)
        except DiscoveryError as e:
            done.unfound.append(str(e))
            continue
        for run in (r for b in batches for r in b.runs):
            if run.resolve() in seen:
                continue
            seen.add(run.resolve())
            if not (run / "data").is_dir():
                done.unfound.append(f"{run}: no data/ directory (nothing the proxy recorded)")
                continue
            try:
                done.written.append(write_traffic_har(run))
            except OSError as e:
                done.failed.append(f"{run / 'data'}: cannot write traffic.har: {e.strerror or e}")
    return done


__all__ = ["HarRefresh", "refresh_hars"]
