"""The leaderboard CSV: the reference's model,harness,dataset,passed,total,pass_rate,wall_hours,
then pass_rate_ci_low,pass_rate_ci_high (the Wilson 95% interval, percent), then
agent_input_tokens,agent_output_tokens,agent_cost_usd (the agents' own model calls, all runs),
then intercepted,judge (a row without a judge has empty pass columns and judge "not judged"),
then judge_cannot_tell (the counted runs the judge could not decide: not passed), then
judge_input_tokens,judge_output_tokens,judge_cost_usd (the judges' own calls).

--csv FILE merges rows into FILE: a row for the same (model, harness, dataset) replaces the old
one, others are kept, and the file is rewritten atomically with every column. A file written
with fewer of these columns (the reference's seven, or an earlier version's nine, twelve or
fourteen) is read as well, its rows' new columns empty, so a reader that takes columns by name
keeps working.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

REFERENCE_COLUMNS = ("model", "harness", "dataset", "passed", "total", "pass_rate", "wall_hours")
LEADERBOARD_COLUMNS = (
    *REFERENCE_COLUMNS,
    "pass_rate_ci_low",
    "pass_rate_ci_high",
    "agent_input_tokens",
    "agent_output_tokens",
    "agent_cost_usd",
    "intercepted",
    "judge",
    "judge_cannot_tell",
    "judge_input_tokens",
    "judge_output_tokens",
    "judge_cost_usd",
)


class LeaderboardError(ValueError):
    """The CSV given cannot be merged into."""


def _key(row: dict[str, str]) -> tuple[str, str, str]:
    return row.get("model", ""), row.get("harness", ""), row.get("dataset", "")


def _ours(columns: tuple[str, ...]) -> bool:
    """columns are ours, as this version or an earlier one (or the reference) wrote them."""
    n = len(columns)
    return n >= len(REFERENCE_COLUMNS) and LEADERBOARD_COLUMNS[:n] == columns


def render_csv(rows: Iterable[dict[str, str]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=LEADERBOARD_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def _read(path: Path) -> list[dict[str, str]]:
    """The rows of an existing leaderboard CSV (none if absent or empty)."""
    if path.is_dir():
        raise LeaderboardError(f"{path}: is a directory; give a file path to --csv")
    if not path.parent.is_dir():
        raise LeaderboardError(
            f"{path}: directory {path.parent} does not exist; create it or give another --csv"
        )
    if not path.exists() or not path.stat().st_size:
        return []
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            columns = tuple(reader.fieldnames or ())
            if not _ours(columns):
                raise LeaderboardError(
                    f"{path}: columns {list(columns)} are not "
                    f"{','.join(LEADERBOARD_COLUMNS)}; give another --csv file"
                )
            return [{k: r.get(k) or "" for k in LEADERBOARD_COLUMNS} for r in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise LeaderboardError(f"{path}: cannot read: {e}") from e


def check_csv(path: Path) -> None:
    """LeaderboardError now, before any work, if rows could not be merged into path."""
    _read(path)


def merge_csv(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write rows into the CSV at path, replacing rows with the same model, harness, dataset
    (among the new rows too: the last one given wins)."""
    existing = _read(path)
    from proxy_addon.records import write_bytes_atomic

    new: dict[tuple[str, str, str], dict[str, str]] = {}
    for row in rows:
        r = {k: "" if row.get(k) is None else str(row.get(k, "")) for k in LEADERBOARD_COLUMNS}
        new[_key(r)] = r
    merged = [r for r in existing if _key(r) not in new] + list(new.values())
    try:
        write_bytes_atomic(path, render_csv(merged).encode("utf-8"))
    except OSError as e:
        raise LeaderboardError(f"{path}: cannot write: {e.strerror or e}") from e


__all__ = [
    "LEADERBOARD_COLUMNS",
    "REFERENCE_COLUMNS",
    "LeaderboardError",
    "check_csv",
    "merge_csv",
    "render_csv",
]
