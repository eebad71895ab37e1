"""The judge's verdict on an intercepted request: match, no_match or cannot_tell (docs/formats.md).

`cannot_tell` is a verdict, not an error: the judge says what it could not see (a body the proxy
could not read or cut before the field that decides, a fact the request does not carry). It is
never a pass, and it is counted apart from mismatches. No verdict at all (the API failed, the
reply was blank or malformed) is None, a judge error.

run-meta.json and judge.json keep the reference's boolean `match` beside it (true only for
`match`), so a reader that knows only that key never counts a cannot_tell as a pass.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class JudgeVerdict(StrEnum):
    """One judge's answer about one request."""

    MATCH = "match"
    NO_MATCH = "no_match"
    CANNOT_TELL = "cannot_tell"


_SPELLINGS = {
    "match": JudgeVerdict.MATCH,
    "true": JudgeVerdict.MATCH,
    "no_match": JudgeVerdict.NO_MATCH,
    "nomatch": JudgeVerdict.NO_MATCH,
    "mismatch": JudgeVerdict.NO_MATCH,
    "false": JudgeVerdict.NO_MATCH,
    "cannot_tell": JudgeVerdict.CANNOT_TELL,
    "cant_tell": JudgeVerdict.CANNOT_TELL,
}


def read_verdict(value: Any) -> JudgeVerdict | None:
    """A verdict as a reply or a file spells it, or None when it is none.

    A JSON boolean is the reference's `match` (true: match, false: no_match). A string is read
    case-blind, blanks, hyphens and spaces as underscores: "match", "no_match", "cannot_tell",
    and "true"/"false" (the string "false" is a no_match, never a pass: the reference's #305).
    Anything else ("yes", "pass", 1, null) is no verdict.
    """
    if isinstance(value, bool):
        return JudgeVerdict.MATCH if value else JudgeVerdict.NO_MATCH
    if isinstance(value, str):
        token = "_".join(value.strip().lower().replace("-", " ").split())
        return _SPELLINGS.get(token)
    return None


def read_verdicts(value: Any) -> Any:
    """{judge: verdict} as a file holds it; an earlier version wrote true/false for each judge
    (read as match and no_match). Anything but a mapping is left for the model to refuse."""
    if isinstance(value, dict):
        return {k: read_verdict(v) if isinstance(v, bool) else v for k, v in value.items()}
    return value


def passes(verdict: JudgeVerdict | None) -> bool:
    """Whether a verdict passes the run: only match does."""
    return verdict is JudgeVerdict.MATCH


def as_match(verdict: JudgeVerdict | None) -> bool | None:
    """The reference's boolean `match` for a verdict: true for match, false for no_match and
    cannot_tell (neither passes), None for no verdict."""
    return None if verdict is None else verdict is JudgeVerdict.MATCH


__all__ = ["JudgeVerdict", "as_match", "passes", "read_verdict", "read_verdicts"]
