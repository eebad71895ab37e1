"""Claude Code's stream-json transcript: kept line by line as it arrives, and summarised.

Stdlib only (the driver runs with the image's python3). The stream is one JSON object a line:
`system/init` (version, tools, MCP servers and their status), `assistant` and `user` messages
(tool calls and their results), and a final `result` (the answer, turns, Claude Code's own
usage count). The summary is result.json's content; the agent's claim of success is the
`TASK_STATUS:` line the driver asks for at the end of the final answer.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["CLAIM", "TIMES_FILE", "Transcript", "claim_of", "claim_prompt"]

CLAIM = re.compile(r"TASK_STATUS:\s*\**\s*(success|failure)\b", re.IGNORECASE)


def claim_prompt() -> str:
    """The system prompt addition that makes the agent state its own verdict."""
    return (
        "You are running non-interactively: nobody will answer questions, so act on the task "
        "as given. When you are done, end your final message with one line, exactly "
        "`TASK_STATUS: success` if you completed the task, or `TASK_STATUS: failure` if you "
        "could not."
    )


def claim_of(text: str) -> bool | None:
    """The agent's verdict from its final text: its last TASK_STATUS line, None without one."""
    found = CLAIM.findall(text or "")
    return found[-1].lower() == "success" if found else None


TIMES_FILE = "transcript-times.txt"
"""Beside the transcript: when each of its lines arrived (seconds since the epoch, one a line),
since stream-json carries no time; the report places each step among the requests with it."""


class Transcript:
    """Write stream-json lines to a file (secrets scrubbed), the time each arrived to another,
    and keep what the summary needs."""

    def __init__(self, path: Path, secrets: Sequence[str] = ()) -> None:
        self._file = open(path, "wb")  # noqa: SIM115 (closed in close())
        self._times = open(path.with_name(TIMES_FILE), "w")  # noqa: SIM115 (closed in close())
        self._secrets = [s.encode() for s in secrets if s]
        self.init: dict[str, Any] = {}
        self.final: dict[str, Any] | None = None
        self.last_text = ""
        self.tool_calls: Counter[str] = Counter()
        self.tool_errors = 0
        self.turns: set[str] = set()
        self.lines = 0
        self.unparsed = 0

    def line(self, raw: bytes) -> None:
        """One line of Claude Code's stdout."""
        for secret in self._secrets:
            raw = raw.replace(secret, b"[REDACTED]")
        self._file.write(raw if raw.endswith(b"\n") else raw + b"\n")
        self._file.flush()
        self._times.write(f"{time.time():.3f}\n")
        self._times.flush()
        self.lines += 1
        try:
            event = json.loads(raw)
        except ValueError:
            self.unparsed += 1
            return
        if isinstance(event, dict):
            self._take(event)

    def _take(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            self.init = event
        elif kind == "result":
            self.final = event
        elif kind in ("assistant", "user"):
            message = event.get("message") or {}
            if kind == "assistant" and message.get("id"):
                self.turns.add(str(message["id"]))  # one event per block: count messages
            content = message.get("content")
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    self.tool_calls[str(block.get("name"))] += 1
                elif block.get("type") == "tool_result" and block.get("is_error"):
                    self.tool_errors += 1
                elif block.get("type") == "text" and kind == "assistant":
                    self.last_text = str(block.get("text") or "")

    def close(self) -> None:
        self._file.close()
        self._times.close()

    def result(self, harness: str, versions: dict[str, str | None], model: str) -> dict[str, Any]:
        """result.json: the lead's AgentResult keys first, then what else Claude Code told."""
        final = self.final or {}
        text = final.get("result") if isinstance(final.get("result"), str) else self.last_text
        cc, mcp = versions.get("claude_code"), versions.get("playwright_mcp")
        error = None
        if not final:
            error = "no result event (claude stopped before it finished)"
        elif final.get("is_error"):
            error = f"claude ended with {final.get('subtype')}: {final.get('terminal_reason')}"
        return {
            "harness": harness,
            "version": f"claude-code {cc}, playwright-mcp {mcp}",
            "success": claim_of(text or ""),
            "text": text or "",
            "steps": final.get("num_turns", len(self.turns)),
            "error": error,
            "model": model,
            "claude_code_version": self.init.get("claude_code_version") or cc,
            "playwright_mcp_version": mcp,
            "mcp_servers": self.init.get("mcp_servers"),
            "tools": self.init.get("tools"),
            "subtype": final.get("subtype"),
            "terminal_reason": final.get("terminal_reason"),
            "tool_calls": dict(self.tool_calls),
            "tool_errors": self.tool_errors,
            "permission_denials": len(final.get("permission_denials") or []),
            "usage_reported": final.get("usage"),
            "cost_usd_estimate": final.get("total_cost_usd"),
            "transcript_lines": self.lines,
        }
