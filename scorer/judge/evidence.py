"""What the judge is shown about one run, as facts (the words are scorer.judge.prompts').

The intercepted request is the agent's: every byte of it (url, method, the headers that change
its meaning, the matcher's equivalence note, which can quote a boundary, and the body) goes into
one compact JSON dump that the prompt puts between random delimiters. Everything else is ours
and carries no agent byte: how the body was encoded (read from the parsed body and its
Content-Type, as the proxy's parser decided it), whether the proxy could not read it, whether
the dump was cut, whether a method override is present, the body's size, the run's date and the
user information the agent was given under /my-info/.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

from proxy_addon.matching import METHOD_OVERRIDE_HEADERS, redact_fields, redact_headers, redact_url
from proxy_addon.records import MY_INFO_DIR
from proxy_addon.tasks import ExtraInfo

DUMP_LIMIT = 4096
"""Bytes (UTF-8) of the request dump shown to the judge."""
USER_FILE_LIMIT = 4000
"""Characters of each /my-info/ file shown to the judge."""
MEANING_HEADERS = ("content-type", "content-encoding", *METHOD_OVERRIDE_HEADERS)
"""The request headers that change what the request does; no other header is shown."""


class BodyEncoding(StrEnum):
    """How the body the judge sees was encoded on the wire."""

    NONE = "none"
    JSON = "json"
    FORM = "form"
    JSON_OR_FORM = (
        "json_or_form"  # key/value fields; the record does not say which parser read them
    )
    MULTIPART = "multipart"
    TEXT = "text"
    BINARY = "binary"
    UNREADABLE = "unreadable"


def _media(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def body_encoding(body: Any, content_type: str | None, unreadable: bool) -> BodyEncoding:
    """The body's encoding from its parsed value (JSON first, then a form, then text, as the
    proxy parses) and its Content-Type."""
    media = _media(content_type)
    if unreadable:
        return BodyEncoding.UNREADABLE
    if body is None:
        return BodyEncoding.NONE
    if isinstance(body, dict) and media == "multipart/form-data":
        return BodyEncoding.MULTIPART
    if isinstance(body, str):
        return BodyEncoding.BINARY if body.startswith("base64:") else BodyEncoding.TEXT
    if not isinstance(body, dict):  # a list, a number, a boolean: only JSON gives those
        return BodyEncoding.JSON
    if media.endswith("json") or media.endswith("+json") or not _all_text(body):
        return BodyEncoding.JSON
    if media == "application/x-www-form-urlencoded":
        # text values under a form Content-Type: a form (or JSON of text alone: the same words)
        return BodyEncoding.FORM
    return BodyEncoding.JSON_OR_FORM


def _all_text(fields: dict[str, Any]) -> bool:
    """Every value a string or a list of strings: what a parsed form holds."""
    return all(
        isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v))
        for v in fields.values()
    )


@dataclass(frozen=True, slots=True)
class RequestView:
    """The request as the judge sees it: the dump (agent bytes) and facts about it (ours)."""

    dump: str
    truncated: bool
    size: int  # bytes of the whole dump before any cut
    shown: int  # bytes of it shown
    encoding: BodyEncoding
    body_size: int | None  # bytes on the wire, when the record says
    method_override: bool
    equivalence: bool

    @property
    def unreadable(self) -> bool:
        return self.encoding is BodyEncoding.UNREADABLE


def _headers(request: dict[str, Any]) -> dict[str, str]:
    given = request.get("headers") or {}
    pairs = [(str(k).lower(), str(v)) for k, v in given.items()] if isinstance(given, dict) else []
    if request.get("content_type") and not any(k == "content-type" for k, _ in pairs):
        pairs.append(("content-type", str(request["content_type"])))
    return redact_headers((k, v) for k, v in pairs if k in MEANING_HEADERS)


def _has_method_field(fields: Any) -> bool:
    return isinstance(fields, dict) and "_method" in fields


def request_view(request: dict[str, Any], limit: int = DUMP_LIMIT) -> RequestView:
    """The judge's view of an interception.json request: compact JSON of url, method, the
    meaning-changing headers, the equivalence note and the body (secrets redacted), cut at
    limit bytes with a visible marker."""
    headers = _headers(request)
    shown: dict[str, Any] = {
        "url": redact_url(str(request.get("url", ""))),
        "method": request.get("method"),
    }
    if headers:
        shown["headers"] = headers
    if request.get("equivalence"):
        shown["equivalence"] = request["equivalence"]
    shown["body"] = redact_fields(request.get("body"))
    text = json.dumps(shown, ensure_ascii=False, separators=(",", ":"), default=str)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (JS's cut emoji): its JSON escape, as text
        data = text.encode("utf-8", "backslashreplace")
        text = data.decode("utf-8")
    unreadable = bool(request.get("body_unverified"))  # set by the proxy, never by the agent
    size = request.get("body_size")
    facts = {
        "encoding": body_encoding(request.get("body"), headers.get("content-type"), unreadable),
        "body_size": size if isinstance(size, int) and not isinstance(size, bool) else None,
        "method_override": any(h in headers for h in METHOD_OVERRIDE_HEADERS)
        or _has_method_field(request.get("body"))
        or _has_method_field(request.get("params")),
        "equivalence": bool(request.get("equivalence")),
    }
    if len(data) <= limit:
        return RequestView(text, False, len(data), len(data), **facts)
    head = data[:limit].decode("utf-8", errors="ignore")  # never half a character
    shown_bytes = len(head.encode())
    marker = f" …[TRUNCATED: first {shown_bytes} of {len(data)} bytes shown]"
    return RequestView(head + marker, True, len(data), shown_bytes, **facts)


@dataclass(frozen=True, slots=True)
class UserFile:
    """One file the agent was given under /my-info/: its name, the task's description of it,
    and its text (None for a file that is not text), cut at USER_FILE_LIMIT characters."""

    name: str
    description: str
    text: str | None
    size: int
    cut: bool = False


def user_file(path: Path, description: str, limit: int = USER_FILE_LIMIT) -> UserFile | None:
    """A /my-info/ file as the judge is given it; None when it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        text: str | None = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    cut = text is not None and len(text) > limit
    if text is not None and cut:
        text = text[:limit]
    return UserFile(path.name, description, text, len(data), cut)


def user_files(
    entries: Sequence[ExtraInfo], run_dir: Path | None, task_dir: Path | None
) -> tuple[UserFile, ...]:
    """The task's extra_info files as the agent saw them: the run's own copy (<run>/my-info/),
    else the task directory's file; entries found in neither are left out."""
    found = []
    for entry in entries:
        rel = PurePosixPath(entry.path)
        if not entry.path or rel.is_absolute() or ".." in rel.parts:
            continue  # the runner never gave the agent such a file either
        places = [run_dir / MY_INFO_DIR / rel.name] if run_dir is not None else []
        places += [task_dir.joinpath(*rel.parts)] if task_dir is not None else []
        for place in places:
            if place.is_file() and (f := user_file(place, entry.description)) is not None:
                found.append(f)
                break
    return tuple(found)


def run_date(timestamp: float | None, stamp: str | None = None) -> date | None:
    """The UTC date of the commit (interception.json's intercepted_at), else of the run's
    start (run-meta.json's timestamp, YYYYmmdd-HHMMSS or ISO 8601); None when neither says."""
    if isinstance(timestamp, int | float) and not isinstance(timestamp, bool):
        try:
            return datetime.fromtimestamp(float(timestamp), UTC).date()
        except (ValueError, OverflowError, OSError):
            pass
    text = (stamp or "").strip()
    for form, length in (("%Y%m%d-%H%M%S", 15), ("%Y-%m-%d", 10)):
        try:
            return datetime.strptime(text[:length], form).date()
        except ValueError:
            continue
    return None


@dataclass(frozen=True, slots=True)
class JudgeInput:
    """Everything one judge call is given, before rendering (the cache key hashes it)."""

    instruction: str
    request: RequestView
    judge_context: dict[str, Any] | None = None
    run_date: date | None = None
    user_info: tuple[UserFile, ...] = field(default_factory=tuple)

    def canonical(self) -> dict[str, Any]:
        """A JSON-able form of every input (for the cache key)."""
        return {
            "instruction": self.instruction,
            "request": asdict(self.request),
            "judge_context": self.judge_context or None,
            "run_date": self.run_date.isoformat() if self.run_date else None,
            "user_info": [asdict(f) for f in self.user_info],
        }


__all__ = [
    "DUMP_LIMIT",
    "MEANING_HEADERS",
    "USER_FILE_LIMIT",
    "BodyEncoding",
    "JudgeInput",
    "RequestView",
    "UserFile",
    "body_encoding",
    "request_view",
    "run_date",
    "user_file",
    "user_files",
]
