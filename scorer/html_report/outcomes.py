"""The outcome of one cell of the task x model matrix: a key, a label, a glyph and a colour.

Not intercepted runs are told apart by stop reason (a time limit says something else than an
agent that gave up); uncertain outcomes (the judge could not tell, judge error, infra failure)
keep their own colours, as the scorer counts them apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from scorer.batch import TaskRow


@dataclass(frozen=True)
class Outcome:
    """One legend entry: CSS class suffix, label, glyph shown in the cell, colours."""

    key: str
    label: str
    glyph: str
    background: str
    foreground: str = "#ffffff"


OUTCOMES = (
    Outcome("passed", "passed", "✓", "#1f9d55"),
    Outcome("intercepted", "intercepted, not judged", "●", "#7cc896", "#0f3d22"),
    Outcome("judge_mismatch", "judge mismatch", "✗", "#d64545"),
    Outcome("judge_cannot_tell", "judge cannot tell", "~", "#c9a227", "#3d3000"),
    Outcome("judge_error", "judge error", "?", "#8e5cc2"),
    Outcome("nx-time_limit_exceeded", "not intercepted: time limit", "T", "#e8871e"),
    Outcome("nx-agent_exited", "not intercepted: agent exited", "E", "#f2b950", "#4a3000"),
    Outcome("nx-agent_idle", "not intercepted: agent idle", "Z", "#f6d88f", "#4a3a00"),
    Outcome("nx-other", "not intercepted: other reason", "N", "#d9c7a3", "#3d3220"),
    Outcome("infra_failure", "infra failure", "!", "#5b6270"),
    Outcome("missing", "missing (no run)", "–", "#ffffff", "#8a919c"),
)
BY_KEY = {o.key: o for o in OUTCOMES}
NOT_INTERCEPTED = tuple(o.key for o in OUTCOMES if o.key.startswith("nx-"))
INTERCEPTED = ("passed", "intercepted", "judge_mismatch", "judge_cannot_tell", "judge_error")
"""The outcomes of a run the proxy intercepted (Stage 1 credit)."""
_CATEGORIES = (*INTERCEPTED, "infra_failure")


def outcome_key(row: TaskRow, stop_reason: str | None) -> str:
    """The matrix outcome of a tasks[] row (stop_reason: from the run's files, when known)."""
    if row.status == "missing":
        return "missing"
    category = row.result_category
    if category is None and row.intercepted:
        category = "passed" if row.final_pass else "intercepted"
    if category in _CATEGORIES:
        return category  # type: ignore[return-value]
    if category == "model_not_intercepted" or category is None:
        key = f"nx-{stop_reason}"
        return key if key in BY_KEY else "nx-other"
    return "infra_failure"  # a reference category the scorer did not map (browser_runtime_*)


def outcome(key: str) -> Outcome:
    """The legend entry for a key from outcome_key()."""
    return BY_KEY[key]


__all__ = [
    "BY_KEY",
    "INTERCEPTED",
    "NOT_INTERCEPTED",
    "OUTCOMES",
    "Outcome",
    "outcome",
    "outcome_key",
]
