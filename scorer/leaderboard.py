"""The leaderboard CSV: model,harness,dataset,passed,total,pass_rate,wall_hours.

--csv FILE merges rows into FILE: a row for the same (model, harness, dataset) replaces the old
one, others are kept, and the file is rewritten atomically.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

LEADERBOARD_COLUMNS = ("model", "harness", "dataset", "passed", "total", "pass_rate", "wall_hours")


class LeaderboardError(ValueError):
    """The CSV given cannot be merged into."""


def _key(row: dict[str, str]) -> tuple[str, str, str]:
    return row.get("model", ""), row.get("harness", ""), row.get("dataset", "")


def render_csv(rows: Iterable[dict[str, str]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=LEADERBOARD_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def merge_csv(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write rows into the CSV at path, replacing rows with the same model, harness, dataset."""
    existing: list[dict[str, str]] = []
    if path.exists() and path.stat().st_size:
        try:
            with path.open(newline="", encoding="utf-8") as f:
                reader = csv.DictReader(f)
                if list(reader.fieldnames or []) != list(LEADERBOARD_COLUMNS):
                    raise LeaderboardError(
                        f"{path}: columns {reader.fieldnames} are not "
                        f"{','.join(LEADERBOARD_COLUMNS)}; give another --csv file"
                    )
                existing = [dict(r) for r in reader]
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            raise LeaderboardError(f"{path}: cannot read: {e}") from e
    from proxy_addon.atomic import write_bytes_atomic

    new = [{k: str(r[k]) for k in LEADERBOARD_COLUMNS} for r in rows]
    keys = {_key(r) for r in new}
    merged = [r for r in existing if _key(r) not in keys] + new
    write_bytes_atomic(path, render_csv(merged).encode("utf-8"))


__all__ = ["LEADERBOARD_COLUMNS", "LeaderboardError", "merge_csv", "render_csv"]
