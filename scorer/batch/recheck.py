"""The Stage-1 re-check: the shared matcher over the recorded request against the task's schema.

The recorded body is already parsed, so it goes to the matcher as the body value; a body the
proxy could not evaluate (body_unverified) is checked fail-closed, as the proxy did.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from proxy_addon.matching import HttpRequest, Matcher, canonical_url
from proxy_addon.tasks import EvalSchema

_matchers: dict[str, Matcher] = {}


@dataclass(frozen=True, slots=True)
class Recheck:
    status: Literal["pass", "fail", "skipped"]
    reasons: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "reasons": list(self.reasons)}


SKIPPED = Recheck(
    "skipped", ("no task to re-check against (no --tasks, no usable task.json copy)",)
)


def _matcher(schema: EvalSchema) -> Matcher:
    key = json.dumps(schema.model_dump(mode="json"), sort_keys=True)
    found = _matchers.get(key)
    if found is None:
        found = _matchers[key] = Matcher(schema)
    return found


def recheck(request: dict[str, Any], schema: EvalSchema) -> Recheck:
    """Would the task's eval_schema match the recorded request? Reasons say why not."""
    url = str(request.get("url") or "")
    with contextlib.suppress(ValueError):  # else the matcher sees the URL as recorded
        url = canonical_url(url)
    matcher = _matcher(schema)  # EvalSchema's validator saw to it that url_pattern compiles
    body_error = "unverified when captured" if request.get("body_unverified") else None
    headers = request.get("headers") if isinstance(request.get("headers"), dict) else {}
    method = str(request.get("method") or "")
    # the recorded headers: a match credited through a method override re-checks the same way
    result = matcher.match(HttpRequest(method, url, request.get("body"), body_error, headers))
    if result.match:
        return Recheck("pass", tuple(r for r in result.reasons if r))
    return Recheck("fail", result.reasons)


__all__ = ["SKIPPED", "Recheck", "recheck"]
