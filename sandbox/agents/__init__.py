"""Built-in agents shipped in the image: `null` (does nothing) and `scripted` (replays requests)."""

from __future__ import annotations

from sandbox.agents.request_script import (
    FilePart,
    ScriptedRequest,
    ScriptError,
    dump_script,
    load_script,
)

__all__ = ["FilePart", "ScriptError", "ScriptedRequest", "dump_script", "load_script"]
