"""agent/result.json: what a harness's driver says it did (the agent's own claim).

Written inside the container by the driver, so it is the agent's word, read as untrusted input:
unknown keys are ignored, the text is cut, a file that does not parse is no claim at all (and a
warning in run-meta.json). run-meta.json's `agent_claim` comes from here, so a report can show
runs where the agent said "done" but nothing was intercepted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from proxy_addon.records.runblocks import AgentClaim

TEXT_LIMIT = 2000
"""Characters of the agent's final answer kept in run-meta.json."""


class AgentResult(BaseModel):
    """The driver's summary of a run: its final answer, whether it claims success, its steps."""

    model_config = ConfigDict(extra="ignore")

    harness: str | None = None
    version: str | None = None
    success: bool | None = None
    text: str = ""
    steps: int | None = None
    error: str | None = None

    @field_validator("text", "error", mode="before")
    @classmethod
    def _cut(cls, value: Any) -> Any:
        return value[:TEXT_LIMIT] if isinstance(value, str) else value

    def claim(self) -> AgentClaim:
        """run-meta.json's agent_claim."""
        return AgentClaim(success=self.success, text=self.text, steps=self.steps, error=self.error)


def read_agent_result(path: Path) -> tuple[AgentResult | None, str | None]:
    """(the result, None) or (None, why it could not be read); (None, None) when absent."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, None
    except OSError as e:
        return None, f"{path.name}: {e.strerror or e}"
    try:
        return AgentResult.model_validate(json.loads(raw[: 1 << 20])), None
    except (ValueError, ValidationError) as e:
        first = str(e).splitlines()[0][:200]
        return None, f"{path.name}: not a driver result ({first})"


__all__ = ["TEXT_LIMIT", "AgentResult", "read_agent_result"]
