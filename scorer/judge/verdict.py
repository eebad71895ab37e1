"""The judge's reply → a tri-state verdict, and data/judge.json (SPEC section 6).

A verdict is true, false or null. `match` must be a JSON boolean or the string "true"/"false"
(any case, surrounding blanks ignored); "yes", "pass", 1 and the like are not verdicts. The reply
may be the bare object, a fenced block, or prose around one object; a blank or unparseable reply,
or two objects that disagree, is null with the reason in `error`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

REASON_LIMIT = 300
RAW_LIMIT = 4000
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Verdict:
    match: bool | None
    reason: str
    error: str | None = None


def coerce_match(value: Any) -> bool | None:
    """A boolean, or the string "true"/"false"; anything else is no verdict."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        token = value.strip().lower()
        if token in ("true", "false"):
            return token == "true"
    return None


def _objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in text that carries a "match" key, outermost first."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        if isinstance(obj, dict) and "match" in obj:
            found.append(obj)
        i = text.find("{", end)
    return found


def parse_verdict(text: str | None) -> Verdict:
    """Parse a judge reply; never raises."""
    if text is None or not text.strip():
        return Verdict(None, "", "blank reply")
    body = text.strip()
    fenced = _FENCE.findall(body)
    objects = [o for block in fenced for o in _objects(block)] if fenced else []
    if not objects:
        objects = _objects(body)
    if not objects:
        return Verdict(None, body[:REASON_LIMIT], "no JSON object with a match key in the reply")
    matches = [coerce_match(o.get("match")) for o in objects]
    reason = str(objects[0].get("reason", "") or "")[:REASON_LIMIT]
    if any(m is None for m in matches):
        bad = objects[matches.index(None)].get("match")
        return Verdict(None, reason, f"match is {json.dumps(bad)}, not a boolean")
    if len(set(matches)) > 1:
        return Verdict(None, reason, "the reply holds conflicting verdicts")
    return Verdict(matches[0], reason)


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0


class JudgeRecord(BaseModel):
    """data/judge.json (strict) or data/judge_llm.json (lenient): written by the scorer alone."""

    model_config = ConfigDict(extra="forbid")

    match: bool | None
    reason: str = ""
    judge_model: str
    raw: str | None = None
    error: str | None = None
    rubric: Literal["strict", "lenient"]
    prompt_version: str
    cache_key: str
    truncated: bool = False
    usage: Usage = Field(default_factory=Usage)
    latency_s: float | None = None
    attempts: int = 0
    task_id: int | str | None = None
    test_case: str | None = None


JUDGE_FILES = {"strict": "judge.json", "lenient": "judge_llm.json"}
"""Per rubric: ours live in <run>/data/, the reference's beside run-meta.json."""

__all__ = [
    "JUDGE_FILES",
    "RAW_LIMIT",
    "JudgeRecord",
    "Usage",
    "Verdict",
    "coerce_match",
    "parse_verdict",
]
