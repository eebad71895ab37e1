"""Claude Code's script for the fake model API: one step per agent turn, a function of the request.

A step sees the whole request (the conversation so far, with the tool results the agent sent
back) and returns the assistant's reply: text and/or tool_use blocks, and the usage to report.
Scripts are written in Python (any `Step` callable) or declared in JSON:

    {"usage": {"input_tokens": 1000, "output_tokens": 50},
     "steps": [
       {"tool_use": [{"name": "browser_navigate", "input": {"url": "https://x.test/"}}]},
       {"tool_use": [{"name": "browser_snapshot", "input": {}}]},
       {"expect": "Post review",
        "tool_use": [{"name": "browser_click",
                      "input": {"target": {"$ref": ["button", "Post review"]}}}]},
       {"text": "Done: the review is posted."}]}

A tool name is the agent's (`mcp__playwright__browser_click`) or its short form (`browser_click`,
resolved against the request's tools). `{"$ref": [role, name]}` (or `{"$ref": {"role", "name",
"exact"}}`) becomes the element ref of the newest Playwright MCP snapshot in the tool results.
`expect` is text the newest tool result must contain. A step that cannot be taken ends the
conversation with a text naming the error, which the script reports. A request without tools
(a title or a quota probe) is a side request: answered "OK", the script left where it is.

A step's usage is Anthropic's own (input_tokens without the cache, cache reads and writes apart);
the reply reports it as every API's count (records.tokens) and Anthropic's stream splits it back.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from proxy_addon.records import TokenCounts
from tests.support.fake_api import Call
from tests.support.model_replies import Reply, ToolUse
from tests.support.playwright_snapshot import latest_ref

_STEP_KEYS = frozenset({"text", "tool_use", "usage", "expect"})


class ScriptError(ValueError):
    """A script that cannot be loaded, or a step that cannot be taken on this request."""


@dataclass(frozen=True)
class Usage:
    """Token counts reported for one reply (what a real API would bill)."""

    input_tokens: int = 1000
    output_tokens: int = 50
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    @classmethod
    def from_json(cls, data: Mapping[str, Any], base: Usage | None = None) -> Usage:
        """Usage from a JSON object; keys left out keep base's values."""
        start = base or cls()
        unknown = set(data) - set(start.__dataclass_fields__)
        if unknown:
            raise ScriptError(f"usage: unknown keys {sorted(unknown)}")
        values = {**start.__dict__, **data}
        if not all(isinstance(v, int) and v >= 0 for v in values.values()):
            raise ScriptError(f"usage: counts must be non-negative integers, got {values}")
        return cls(**values)

    def reply(self, text: str | None, tool_uses: tuple[ToolUse, ...] = ()) -> Reply:
        """A reply reporting this usage (records.tokens' counts, the cache writes apart)."""
        read, written = self.cache_read_input_tokens, self.cache_creation_input_tokens
        counts = TokenCounts(
            input_tokens=self.input_tokens + read + written,
            output_tokens=self.output_tokens,
            cached_tokens=read,
        )
        return Reply(text, tool_uses=tool_uses, usage=counts, cache_written=written)


@dataclass(frozen=True)
class ToolResult:
    """A tool_result block the agent sent back."""

    tool_use_id: str
    text: str
    is_error: bool


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


@dataclass(frozen=True)
class ModelRequest:
    """A Messages API request as a step sees it."""

    body: dict[str, Any]

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def tool_names(self) -> list[str]:
        return [t.get("name", "") for t in self.body.get("tools") or [] if isinstance(t, dict)]

    def tool_results(self) -> list[ToolResult]:
        """Every tool_result in the conversation, oldest first."""
        found = []
        for message in self.messages:
            content = message.get("content")
            if message.get("role") != "user" or not isinstance(content, list):
                continue
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found.append(
                        ToolResult(
                            block.get("tool_use_id", ""),
                            _text_of(block.get("content")),
                            bool(block.get("is_error")),
                        )
                    )
        return found

    def user_text(self) -> str:
        """All text the user (not a tool) wrote, joined: the agent's instruction is in it."""
        texts = [
            _text_of(m.get("content")) if not isinstance(m.get("content"), str) else m["content"]
            for m in self.messages
            if m.get("role") == "user"
        ]
        return "\n".join(t for t in texts if t)

    def ref(self, role: str, name: str, *, exact: bool = True) -> str:
        """The element ref of the newest snapshot in the tool results, or ScriptError."""
        ref = latest_ref((r.text for r in self.tool_results()), role, name, exact=exact)
        if ref is None:
            raise ScriptError(f"no {role} named {name!r} in any page snapshot so far")
        return ref

    def tool_name(self, name: str) -> str:
        """The agent's name for a tool: exact, else the one tool ending in `__<name>`."""
        names = self.tool_names
        if name in names:
            return name
        matches = [n for n in names if n.endswith(f"__{name}")]
        if len(matches) != 1:
            raise ScriptError(f"tool {name!r}: {len(matches)} of the agent's tools match")
        return matches[0]


Step = Callable[[ModelRequest], Reply]


def _resolve(value: Any, request: ModelRequest) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            spec = value["$ref"]
            if isinstance(spec, list) and len(spec) == 2:
                return request.ref(str(spec[0]), str(spec[1]))
            if isinstance(spec, dict):
                return request.ref(spec["role"], spec["name"], exact=spec.get("exact", True))
            raise ScriptError(f"$ref wants [role, name] or {{role, name, exact}}, got {spec!r}")
        return {k: _resolve(v, request) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, request) for v in value]
    return value


def step_from_json(spec: Mapping[str, Any], usage: Usage | None = None) -> Step:
    """A step from its JSON declaration (see the module docstring)."""
    unknown = set(spec) - _STEP_KEYS
    if unknown:
        raise ScriptError(f"step: unknown keys {sorted(unknown)} (known: {sorted(_STEP_KEYS)})")
    calls = spec.get("tool_use") or []
    if not spec.get("text") and not calls:
        raise ScriptError("step: needs text, tool_use or both")
    if not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls):
        raise ScriptError(f"step: each tool_use needs a name, got {calls!r}")
    step_usage = Usage.from_json(spec.get("usage") or {}, usage)
    expect = spec.get("expect")

    def step(request: ModelRequest) -> Reply:
        if expect is not None:
            results = request.tool_results()
            if not results or expect not in results[-1].text:
                raise ScriptError(f"expected {expect!r} in the last tool result")
        uses = tuple(
            ToolUse(request.tool_name(c["name"]), _resolve(c.get("input") or {}, request))
            for c in calls
        )
        return step_usage.reply(spec.get("text"), uses)

    return step


class Script:
    """The steps, in order, and what the server answers outside them: a script of the fake model
    API (a function of each call) that keeps how far it got and the steps it could not take."""

    def __init__(
        self,
        steps: Sequence[Step],
        side_usage: Usage | None = None,
        final_text: str = "(the scripted model has no more steps)",
    ) -> None:
        self.steps = list(steps)
        self.side_usage = side_usage or Usage(10, 1)
        """Usage of a request that is not an agent turn (no tools: a title or a quota probe)."""
        self.final_text = final_text
        self.errors: list[str] = []
        self._next = 0
        self._ended = False
        self._lock = threading.Lock()

    @property
    def steps_taken(self) -> int:
        with self._lock:
            return self._next

    def __call__(self, call: Call) -> Reply:
        """The next step for an agent turn, or the answer to a side request (a path that is not
        the Messages API's: 404 in its shape)."""
        if not call.path.endswith("/v1/messages"):
            return Reply(None, status=404)
        request = ModelRequest(call.body)
        with self._lock:
            if not request.body.get("tools"):
                return self.side_usage.reply("OK")
            if self._ended or self._next >= len(self.steps):
                return self.side_usage.reply(self.final_text)
            step = self._next
            self._next += 1
            try:
                return replace(self.steps[step](request), step=step)
            except (ScriptError, KeyError, TypeError, ValueError) as e:
                error = f"step {step}: {e}"
                self.errors.append(error)
                self._ended = True
                return replace(self.side_usage.reply(f"scripted model error: {error}"), step=step)

    def report(self) -> dict[str, Any]:
        """What a record of the run keeps of the script."""
        with self._lock:
            return {
                "errors": list(self.errors),
                "steps_taken": self._next,
                "steps_total": len(self.steps),
            }


def script_from_json(data: Any) -> Script:
    """A Script from parsed JSON: a list of steps, or {"steps", "usage"?, "side_usage"?}."""
    if isinstance(data, list):
        data = {"steps": data}
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise ScriptError("a script is a list of steps or an object with a 'steps' list")
    unknown = set(data) - {"steps", "usage", "side_usage"}
    if unknown:
        raise ScriptError(f"script: unknown keys {sorted(unknown)}")
    usage = Usage.from_json(data.get("usage") or {})
    steps = []
    for index, spec in enumerate(data["steps"]):
        try:
            steps.append(step_from_json(spec, usage))
        except ScriptError as e:
            raise ScriptError(f"steps[{index}]: {e}") from e
    return Script(steps, Usage.from_json(data.get("side_usage") or {}, Usage(10, 1)))


def load_script(path: str | Path) -> Script:
    """Load a JSON script file."""
    try:
        return script_from_json(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError, ScriptError) as e:
        raise ScriptError(f"{path}: {e}") from e


__all__ = [
    "ModelRequest",
    "Script",
    "ScriptError",
    "Step",
    "ToolResult",
    "Usage",
    "load_script",
    "script_from_json",
    "step_from_json",
]
