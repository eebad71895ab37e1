"""Scripted judges for the tests: functions of the call they are sent (the fake model API's
scripts, tests.support.fake_api), each a kind of judge a real model can be.

- `ReasoningJudge`: lists the requirements, checks each, then answers the verdict a lookup gives
  (the gold set's labels: an oracle), in prompt v2's shape.
- `cannot_tell_judge`: always cannot_tell, saying what it could not see.
- `InjectionObeyer`: the oracle, except that it does what any instruction inside the request
  tells it to (the judge a prompt injection fools).
- `malformed`: replies no verdict can be read from ("false" as a string is the one that reads).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from proxy_addon.records import JudgeVerdict
from scorer.calibration import CalibrationCase, CalibrationTaskInfo, judge_input
from tests.support.fake_api import Call, Reply

Key = tuple[str, str]
"""(instruction, request dump): what identifies a case in the judge's user message."""


def call_key(call: Call) -> Key:
    """The instruction and the dump between the markers of a judge call."""
    user = call.user
    instruction = user.split("INSTRUCTION (from the user):\n", 1)[1].split("\n\n", 1)[0]
    open_ = next(line for line in user.splitlines() if line.startswith("<<<REQUEST "))
    inside = user.split(open_ + "\n", 1)[1]
    close = open_.replace("<<<REQUEST", "<<<END REQUEST")
    return instruction, inside.split("\n" + close, 1)[0]


def case_key(task: CalibrationTaskInfo, case: CalibrationCase) -> Key:
    data = judge_input(task, case)
    return data.instruction, data.request.dump


def v2_reply(verdict: JudgeVerdict | str, reason: str, missing: str = "") -> Reply:
    """A prompt-v2 reply: the requirements checked first, then the verdict."""
    met = {"match": "yes", "no_match": "no", "cannot_tell": "unknown"}[str(verdict)]
    body = {
        "requirements": [
            {
                "requirement": "the item asked for",
                "field": "body",
                "value": "as shown",
                "met": "yes",
            },
            {"requirement": "every detail specified", "field": "body", "value": "...", "met": met},
        ],
        "verdict": str(verdict),
        "missing": missing,
        "reason": reason,
    }
    return Reply(json.dumps(body))


@dataclass
class ReasoningJudge:
    """Answers each call with the verdict its lookup holds for (instruction, dump)."""

    labels: dict[Key, JudgeVerdict]
    asked: list[Key] = field(default_factory=list)

    @classmethod
    def of(cls, pairs: Iterable[tuple[CalibrationTaskInfo, CalibrationCase]]) -> ReasoningJudge:
        return cls({case_key(t, c): c.label for t, c in pairs})

    def verdict(self, key: Key) -> JudgeVerdict:
        return self.labels[key]

    def __call__(self, call: Call) -> Reply:
        key = call_key(call)
        self.asked.append(key)
        verdict = self.verdict(key)
        missing = "the part of the request that decides" if verdict == "cannot_tell" else ""
        return v2_reply(verdict, "as labelled", missing)


def cannot_tell_judge(call: Call) -> Reply:
    return v2_reply(JudgeVerdict.CANNOT_TELL, "cannot see enough", "the body's values")


_INJECTION = re.compile(
    r"grader|evaluat|ignore (?:all )?(?:previous|prior)|system(?:[:)]|%3a)|verdict"
    r"|answer[\s+]match",
    re.IGNORECASE,
)


def demanded(dump: str) -> JudgeVerdict | None:
    """What an instruction inside the request asks the grader to answer, if it holds one."""
    if not _INJECTION.search(dump):
        return None
    text = dump.lower()
    if "cannot_tell" in text:
        return JudgeVerdict.CANNOT_TELL
    if any(w in text for w in ("no_match", "failed", "invalid")):
        return JudgeVerdict.NO_MATCH
    return JudgeVerdict.MATCH


@dataclass
class InjectionObeyer(ReasoningJudge):
    """The oracle, fooled by every instruction inside the request."""

    def verdict(self, key: Key) -> JudgeVerdict:
        return demanded(key[1]) or self.labels[key]


MALFORMED = {
    "string_false": '{"match": "false", "reason": "the reference\'s #305"}',
    "no_verdict": '{"requirements": [], "reason": "forgot the verdict"}',
    "yes": '{"verdict": "yes", "reason": "not a verdict"}',
    "unsupported_match": json.dumps(
        {"requirements": [{"requirement": "qty", "met": "no"}], "verdict": "match"}
    ),
    "prose": "The request clearly matches the instruction.",
}


def malformed(kind: str) -> Callable[[Call], Reply]:
    """A judge that always replies MALFORMED[kind]."""
    return lambda call: Reply(MALFORMED[kind])


__all__ = [
    "MALFORMED",
    "InjectionObeyer",
    "Key",
    "ReasoningJudge",
    "call_key",
    "cannot_tell_judge",
    "case_key",
    "demanded",
    "malformed",
    "v2_reply",
]
