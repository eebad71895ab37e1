"""The judge's reply → a verdict (match, no_match, cannot_tell, or none), and data/judge.json.

Prompt v2 asks for the instruction's requirements first, each checked against the request, then
the verdict: {"requirements": [{"requirement", "field", "value", "met"}], "verdict", "missing",
"reason"}. The reply may be the bare object, a fenced block, or prose around one object. The
verdict is read by proxy_addon.records.verdict.read_verdict from `verdict` or, when a judge answers
the reference's way, from `match` (a boolean, or "true"/"false": the string "false" is a no_match,
never a pass). No verdict is a judge error (None), never a pass: a blank or unparseable reply, a
missing or unknown verdict, two objects or two keys that disagree, and a `match` that the judge's
own checks contradict (a requirement it marked "no" or "unknown").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from proxy_addon.records import JudgeVerdict, Tokens, read_verdict

REASON_LIMIT = 300
RAW_LIMIT = 4000
CHECKS_LIMIT = 30
"""Requirement checks kept from one reply (each field cut at REASON_LIMIT characters)."""
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_KEYS = ("verdict", "match")

Met = Literal["yes", "no", "unknown"]
_MET = {"yes": "yes", "true": "yes", "met": "yes", "no": "no", "false": "no", "not met": "no"}


class RequirementCheck(BaseModel):
    """One requirement of the instruction as the judge checked it against the request."""

    model_config = ConfigDict(extra="forbid")

    requirement: str
    field: str = ""  # where in the request the judge looked (body.party_size, url, ...)
    value: str = ""  # what it found there, quoted
    met: Met = "unknown"


@dataclass(frozen=True, slots=True)
class Reply:
    """A parsed reply: the verdict (None: no verdict, see error) and what the judge said."""

    verdict: JudgeVerdict | None
    reason: str
    error: str | None = None
    missing: str = ""  # cannot_tell: what the judge could not see
    checks: tuple[RequirementCheck, ...] = field(default_factory=tuple)


def _objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in text that carries a verdict or match key, outermost first."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict) and any(k in obj for k in _KEYS):
            found.append(obj)
        i = text.find("{", end)
    return found


def _text(value: Any) -> str:
    return " ".join(str(value).split())[:REASON_LIMIT] if value not in (None, "") else ""


def _met(value: Any) -> Met:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return _MET.get(str(value).strip().lower(), "unknown") if isinstance(value, str) else "unknown"  # type: ignore[return-value]


def _checks(value: Any) -> tuple[RequirementCheck, ...]:
    """The reply's requirement checks, bounded; items that are not objects are skipped."""
    items = value if isinstance(value, list) else []
    return tuple(
        RequirementCheck(
            requirement=_text(item.get("requirement")),
            field=_text(item.get("field")),
            value=_text(item.get("value")),
            met=_met(item.get("met")),
        )
        for item in items[:CHECKS_LIMIT]
        if isinstance(item, dict)
    )


def _one(obj: dict[str, Any]) -> tuple[JudgeVerdict | None, str | None]:
    """The verdict one object gives, or (None, why)."""
    given = {k: obj[k] for k in _KEYS if k in obj}
    read = {k: read_verdict(v) for k, v in given.items()}
    for key, verdict in read.items():
        if verdict is None:
            return None, f"{key} is {json.dumps(given[key])[:60]}, not a verdict"
    if len(set(read.values())) > 1:
        return None, "the reply's verdict and match keys disagree"
    return next(iter(read.values())), None


def parse_reply(text: str | None) -> Reply:
    """Parse a judge reply; never raises."""
    if text is None or not text.strip():
        return Reply(None, "", "blank reply")
    body = text.strip()
    fenced = _FENCE.findall(body)
    objects = [o for block in fenced for o in _objects(block)] if fenced else []
    if not objects:
        objects = _objects(body)
    if not objects:
        return Reply(None, body[:REASON_LIMIT], "no JSON object with a verdict in the reply")
    first = objects[0]
    reason = _text(first.get("reason"))
    checks = _checks(first.get("requirements"))
    verdicts = []
    for obj in objects:
        verdict, why = _one(obj)
        if verdict is None:
            return Reply(None, reason, why, checks=checks)
        verdicts.append(verdict)
    if len(set(verdicts)) > 1:
        return Reply(None, reason, "the reply holds conflicting verdicts", checks=checks)
    verdict = verdicts[0]
    if verdict is JudgeVerdict.MATCH:
        unmet = next((c for c in checks if c.met != "yes"), None)
        if unmet is not None:
            why = f"match, but its own check says {unmet.met!r}: {unmet.requirement[:120]}"
            return Reply(None, reason, why, checks=checks)
    missing = ""
    if verdict is JudgeVerdict.CANNOT_TELL:
        missing = _text(first.get("missing")) or reason
    return Reply(verdict, reason, None, missing, checks)


class JudgeRecord(BaseModel):
    """data/judge.json (strict) or data/judge_llm.json (lenient): written by the scorer alone.

    `verdict` is the judge's answer; `match` the reference's boolean beside it (true only for
    match; null with no verdict). A record without `verdict` (an earlier version's) is read
    from its `match`.
    """

    model_config = ConfigDict(extra="forbid")

    match: bool | None
    verdict: JudgeVerdict | None = None
    reason: str = ""
    missing: str = ""
    requirements: list[RequirementCheck] = Field(default_factory=list)
    judge_model: str
    judge_settings: dict[str, Any] = Field(default_factory=dict)
    raw: str | None = None
    error: str | None = None
    rubric: Literal["strict", "lenient"]
    prompt_version: str
    cache_key: str
    truncated: bool = False
    body_unreadable: bool = False
    usage: Tokens = Field(default_factory=Tokens)
    latency_s: float | None = None
    attempts: int = 0
    task_id: int | str | None = None
    test_case: str | None = None

    @property
    def answer(self) -> JudgeVerdict | None:
        """The verdict, read from `match` in a record that predates `verdict`."""
        if self.verdict is not None or self.match is None:
            return self.verdict
        return read_verdict(self.match)


JUDGE_FILES = {"strict": "judge.json", "lenient": "judge_llm.json"}
"""Per rubric: ours live in <run>/data/, the reference's beside run-meta.json."""

__all__ = [
    "CHECKS_LIMIT",
    "JUDGE_FILES",
    "RAW_LIMIT",
    "JudgeRecord",
    "Reply",
    "RequirementCheck",
    "parse_reply",
]
