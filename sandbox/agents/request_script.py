"""The scripted agent's input: a JSON or YAML list of HTTP requests to replay through the proxy.

Each entry: {method, url, headers?, body? | json? | form? (+ files?), expect?, proxy?, timeout?,
sleep?}. `files` makes the body multipart/form-data: the `form` fields, then one part per file
({filename, content_type, path}; an empty filename and no path is an empty file input; in the
sandbox a path is as the agent sees it, e.g. /my-info/resume.pdf).
`expect` is a status code, "blocked" (the connection is cut without a response, the addon's
default answer to a matching request) or "response" (any status); `proxy: false` ignores the
proxy variables (the firewall then redirects ports 80/443 into the proxy anyway).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator


class FilePart(BaseModel):
    """A file part of a multipart body; its bytes are read from path when the request is sent."""

    model_config = ConfigDict(extra="forbid")

    filename: str = ""
    content_type: str = "application/octet-stream"
    path: str | None = None


class ScriptedRequest(BaseModel):
    """One request of a script."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    method: str = "GET"
    url: str = Field(pattern=r"^https?://")
    headers: dict[str, str] = Field(default_factory=dict)
    body: str | None = None
    json_: Any = Field(default=None, alias="json")
    form: dict[str, str | list[str]] | None = None
    files: dict[str, FilePart] | None = None
    expect: int | Literal["blocked", "response"] | None = None
    proxy: bool = True
    timeout: float = Field(default=15, gt=0)
    sleep: float = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _one_body(self) -> ScriptedRequest:
        given = [k for k in ("body", "json_", "form") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError("give at most one of body, json, form")
        if self.files is not None and (self.body is not None or self.json_ is not None):
            raise ValueError("files go with form (multipart/form-data), not with body or json")
        return self


SCRIPT = TypeAdapter(list[ScriptedRequest])


class ScriptError(ValueError):
    """A script that cannot be replayed; the message names the file and the entry."""


def load_script(path: str | Path) -> list[ScriptedRequest]:
    """Read a .json/.yaml/.yml script and validate every entry."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ScriptError(f"{p}: cannot read: {e}") from e
    try:
        if p.suffix.lower() in (".yaml", ".yml"):
            import yaml  # the host has it; the image's agent only ever reads JSON

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as e:  # json.JSONDecodeError or yaml.YAMLError
        raise ScriptError(f"{p}: not valid {p.suffix.lstrip('.') or 'JSON'}: {e}") from e
    try:
        return SCRIPT.validate_python(data)
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        loc = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in first["loc"])
        raise ScriptError(f"{p}: entry{loc}: {first['msg']}") from e


def dump_script(requests: list[ScriptedRequest]) -> bytes:
    """The JSON the image's agent reads."""
    return SCRIPT.dump_json(requests, by_alias=True, exclude_none=True, indent=2)
