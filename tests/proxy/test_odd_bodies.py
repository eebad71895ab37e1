"""Bodies a real client may send that are odd but not wrong, through a real mitmdump + addon:
each is matched as the reference would, blocked or forwarded, and written as strict JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proxy_addon.records import Interception, RequestLogEntry
from tests.proxy.conftest import SHOP, Run, write_task

POST = r"shop\.clawbench\.test/api/post"
JSON = ["-H", "Content-Type: application/json"]


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_log(run: Run) -> list[RequestLogEntry]:
    """requests.jsonl read as strict JSON (no NaN/Infinity), by json.loads: pydantic's own JSON
    parser refuses an escaped lone surrogate, which json.loads (the scorer's reader) keeps."""
    lines = run.raw_log().splitlines()
    return [RequestLogEntry.model_validate(json.loads(x, parse_constant=_refuse)) for x in lines]


def strict_interception(run: Run) -> Interception:
    raw = (run.data / "interception.json").read_bytes()
    return Interception.model_validate(json.loads(raw, parse_constant=_refuse))


def _file(tmp_path: Path, name: str, data: bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return f"@{path}"


def test_lone_surrogates_and_nan_are_blocked_recorded_and_forwarded(launch, tmp_path) -> None:
    """JSON.stringify of a string cut mid-emoji sends "\\ud83d"; JSON.stringify never sends NaN,
    but Python's json (and so the reference) reads it. Neither may stop a write."""
    run = launch(write_task(tmp_path / "task", POST, body={"visibility": "public"}))
    near = b'{"text": "x", "visibility": "private \\ud83d", "n": NaN}'
    other = b'{"text": "x \\ud83d", "visibility": "public", "n": Infinity}'
    commit = b'{"text": "Great trip! \\ud83d", "visibility": "public", "n": NaN}'
    forwarded = [
        run.curl(*JSON, "--data-binary", _file(tmp_path, "near", near), f"https://{SHOP}/api/post"),
        run.curl(*JSON, "--data-binary", _file(tmp_path, "o", other), f"https://{SHOP}/api/else"),
    ]
    assert [r.status for r in forwarded] == ["200", "200"]
    blocked = run.curl(
        *JSON, "--data-binary", _file(tmp_path, "c", commit), f"https://{SHOP}/api/post"
    )
    assert blocked.code != 0 and blocked.status == "000"
    assert [r.body for r in run.upstream.requests] == [near, other]
    assert (run.data / ".stop-requested").exists()

    rec = strict_interception(run)
    assert rec.request.body == {"text": "Great trip! \ud83d", "visibility": "public", "n": "NaN"}
    log = strict_log(run)
    assert [e.matched for e in log] == [False, False, True]
    assert log[0].near_miss == ['body: key \'visibility\' expected "public", got "private \\ud83d"']
    assert log[1].body == {"text": "x \ud83d", "visibility": "public", "n": "Infinity"}
    assert log[2].body == rec.request.body
