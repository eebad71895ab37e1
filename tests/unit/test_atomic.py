"""Atomic writes (STYLE rule 4): a reader sees the old file or the new one, never a torn one."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from proxy_addon.records import (
    InterceptedRequest,
    Interception,
    dump_json,
    write_bytes_atomic,
    write_json_atomic,
)


def _record(count: int, pad: int) -> Interception:
    request = InterceptedRequest(url="https://shop.test/checkout", method="POST", body="x" * pad)
    return Interception(request=request, schema={}, intercepted_at=1.0, blocked_count=count)


@pytest.mark.parametrize("durable", [True, False])
def test_a_reader_never_sees_a_partial_file(tmp_path: Path, durable: bool) -> None:
    path = tmp_path / "interception.json"
    write_json_atomic(path, _record(0, 10), durable=durable)
    counts: list[int] = []
    bad: list[str] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            raw = path.read_bytes()  # never missing: os.replace swaps the file in one step
            try:
                counts.append(Interception.model_validate_json(raw).blocked_count)
            except ValueError as e:
                bad.append(f"{len(raw)} bytes: {e}")

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for n in range(1, 301):
            # sizes jump between 10 bytes and 256 KB, so a torn write could not go unseen
            write_json_atomic(path, _record(n, 10 if n % 2 else 256 * 1024), durable=durable)
    finally:
        stop.set()
        reader.join()
    assert bad == []
    assert counts == sorted(counts) and len(set(counts)) > 10
    assert Interception.model_validate_json(path.read_bytes()).blocked_count == 300
    assert [p.name for p in tmp_path.iterdir()] == ["interception.json"]  # no temp file left


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ({"a": "é", "b": [1, 2]}, '{\n  "a": "é",\n  "b": [\n    1,\n    2\n  ]\n}\n'),
        (None, "null\n"),
    ],
)
def test_write_json_atomic_writes_indented_utf8(tmp_path: Path, data: Any, text: str) -> None:
    path = tmp_path / "f.json"
    write_json_atomic(path, data)
    assert path.read_text(encoding="utf-8") == text


def test_a_pydantic_model_is_written_by_alias(tmp_path: Path) -> None:
    path = tmp_path / "interception.json"
    write_json_atomic(path, _record(2, 1))
    doc = json.loads(path.read_text())
    assert doc["schema"] == {} and doc["blocked_count"] == 2


def test_a_failed_serialisation_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    write_json_atomic(path, {"old": True})
    with pytest.raises(TypeError):  # not JSON: fails before any file is opened
        write_json_atomic(path, {"x": object()})
    assert json.loads(path.read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]


def test_a_failed_replace_removes_its_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    (target / "child").mkdir(parents=True)  # a non-empty directory: os.replace cannot take it
    with pytest.raises(OSError):
        write_bytes_atomic(target, b"data")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    assert [p.name for p in target.iterdir()] == ["child"]


def _strict_loads(raw: bytes) -> Any:
    """json.loads that refuses NaN/Infinity, as a strict JSON reader does."""

    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(raw, parse_constant=refuse)


@pytest.mark.parametrize(
    ("data", "back"),
    [
        # JSON.stringify of a string cut mid-emoji: no UTF-8 form, escaped, read back unchanged
        ({"text": "trip \ud83d", "é": 1}, {"text": "trip \ud83d", "é": 1}),
        (["\udfff"], ["\udfff"]),
        # strict JSON has no NaN or Infinity (json.loads reads them, and 1e999, as floats)
        (
            {"n": float("nan"), "i": [float("inf"), -float("inf")], "x": 1.5},
            {"n": "NaN", "i": ["Infinity", "-Infinity"], "x": 1.5},
        ),
        ({"both": ["\ud83d", float("nan")]}, {"both": ["\ud83d", "NaN"]}),
    ],
)
def test_dump_json_writes_strict_json_for_anything_a_body_parses_to(data: Any, back: Any) -> None:
    raw = dump_json(data)
    assert _strict_loads(raw) == back


def test_dump_json_stays_utf8_when_it_can() -> None:
    assert dump_json({"a": "é"}) == '{\n  "a": "é"\n}\n'.encode()
