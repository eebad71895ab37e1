"""The outcome of one cell of the task x model matrix: a key, a label, a glyph and a colour.

Not intercepted runs are told apart by stop reason (a time limit says something else than an
agent that gave up); uncertain outcomes (the judge could not tell, judge error, infra failure)
keep their own colours, as the scorer counts them apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from proxy_addon.records import AnyStopReason, Category, StopReason
from scorer.batch import TaskRow


@dataclass(frozen=True)
class Outcome:
    """One legend entry: CSS class suffix, label, glyph shown in the cell, colours."""

    key: str
    """A result category, `nx-` and a stop reason, or `missing`."""
    label: str
    glyph: str
    background: str
    foreground: str = "#ffffff"


def _nx(reason: StopReason | None) -> str:
    """The key of a run not intercepted, by its stop reason (None: any other reason)."""
    return f"nx-{reason or 'other'}"


MISSING = "missing"
OUTCOMES = (
    Outcome(Category.PASSED, "passed", "✓", "#1f9d55"),
    Outcome(Category.INTERCEPTED, "intercepted, not judged", "●", "#7cc896", "#0f3d22"),
    Outcome(Category.JUDGE_MISMATCH, "judge mismatch", "✗", "#d64545"),
    Outcome(Category.JUDGE_CANNOT_TELL, "judge cannot tell", "~", "#c9a227", "#3d3000"),
    Outcome(Category.JUDGE_ERROR, "judge error", "?", "#8e5cc2"),
    Outcome(_nx(StopReason.TIME_LIMIT_EXCEEDED), "not intercepted: time limit", "T", "#e8871e"),
    Outcome(
        _nx(StopReason.AGENT_EXITED), "not intercepted: agent exited", "E", "#f2b950", "#4a3000"
    ),
    Outcome(_nx(StopReason.AGENT_IDLE), "not intercepted: agent idle", "Z", "#f6d88f", "#4a3a00"),
    Outcome(_nx(None), "not intercepted: other reason", "N", "#d9c7a3", "#3d3220"),
    Outcome(Category.INFRA_FAILURE, "infra failure", "!", "#5b6270"),
    Outcome(MISSING, "missing (no run)", "–", "#ffffff", "#8a919c"),
)
BY_KEY = {o.key: o for o in OUTCOMES}
NOT_INTERCEPTED = tuple(o.key for o in OUTCOMES if o.key.startswith("nx-"))
INTERCEPTED = (
    Category.PASSED,
    Category.INTERCEPTED,
    Category.JUDGE_MISMATCH,
    Category.JUDGE_CANNOT_TELL,
    Category.JUDGE_ERROR,
)
"""The outcomes of a run the proxy intercepted (Stage 1 credit)."""
_CATEGORIES = (*INTERCEPTED, Category.INFRA_FAILURE)


def outcome_key(row: TaskRow, stop_reason: AnyStopReason | None) -> str:
    """The matrix outcome of a tasks[] row (stop_reason: from the run's files, when known)."""
    if row.status == "missing":
        return MISSING
    category = row.result_category
    if category is None and row.intercepted:
        category = Category.PASSED if row.final_pass else Category.INTERCEPTED
    if category in _CATEGORIES:
        return str(category)
    if category == Category.MODEL_NOT_INTERCEPTED or category is None:
        key = f"nx-{stop_reason}"
        return key if key in BY_KEY else _nx(None)
    return Category.INFRA_FAILURE  # model_api_failure; a reference category (browser_runtime_*)


def outcome(key: str) -> Outcome:
    """The legend entry for a key from outcome_key()."""
    return BY_KEY[key]


__all__ = [
    "BY_KEY",
    "INTERCEPTED",
    "MISSING",
    "NOT_INTERCEPTED",
    "OUTCOMES",
    "Outcome",
    "outcome",
    "outcome_key",
]
