"""Body and query parsing (docs/formats.md, "Matching"): order, shapes, encodings, bounds."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import zlib
from typing import Any

import brotli
import pytest

from proxy_addon.matching import RAW_TEXT_CAP, parse_body, parse_query
from proxy_addon.matching.bodies import MAX_JSON_DEPTH

try:
    from compression import zstd  # type: ignore[import-not-found]
except ImportError:
    from backports import zstd

FORM = "application/x-www-form-urlencoded"
BOUNDARY = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
MULTIPART = f"multipart/form-data; boundary={BOUNDARY}"


def multipart(*parts: tuple[str, str | None, str | None, bytes], boundary: str = BOUNDARY) -> bytes:
    """A multipart/form-data body as a browser writes it: (name, filename, type, content)."""
    out = b""
    for name, filename, ctype, content in parts:
        disp = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        head = f"--{boundary}\r\nContent-Disposition: {disp}\r\n"
        if ctype:
            head += f"Content-Type: {ctype}\r\n"
        out += head.encode("utf-8") + b"\r\n" + content + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


PDF = b"%PDF-1.4\n\x00\xff binary resume bytes\r\n--not-a-boundary\r\n"


@pytest.mark.parametrize(
    ("raw", "ctype", "kind", "value"),
    [
        # empty is None, whatever the type
        (b"", FORM, "empty", None),
        (None, "application/json", "empty", None),
        # JSON: any value, whatever the Content-Type (the reference tries JSON first)
        (
            b'{"operationName": "Save", "n": 2}',
            "application/json",
            "json",
            {"operationName": "Save", "n": 2},
        ),
        (b'[{"op": "A"}, {"op": "B"}]', "application/json", "json", [{"op": "A"}, {"op": "B"}]),
        (b"42", "application/json", "json", 42),
        (b'"just a string"', "text/plain", "json", "just a string"),
        (b"true", None, "json", True),
        (b"null", "application/json", "json", None),
        (b'{"a": 1}', FORM, "json", {"a": 1}),
        # form: parse_qs(keep_blank_values=True) whatever the Content-Type
        (
            b"rating=4&title=Great+mug&body=",
            FORM,
            "form",
            {"rating": "4", "title": "Great mug", "body": ""},
        ),
        (b"commit=1", "text/plain", "form", {"commit": "1"}),
        (b"commit=1", "application/json", "form", {"commit": "1"}),
        (b"commit=1", None, "form", {"commit": "1"}),
        (b"tag=a&tag=b&tag=", FORM, "form", {"tag": ["a", "b", ""]}),
        (b"a=%E2%82%AC&b=x%2By", FORM, "form", {"a": "€", "b": "x+y"}),
        # a lone word is a key with a blank value, as parse_qs(keep_blank_values=True) has it
        (b"hello world", "text/plain", "form", {"hello world": ""}),
        # raw text only where parse_qs yields nothing
        (b"&&&", "text/plain", "text", "&&&"),
    ],
)
def test_parse_order(raw: bytes | None, ctype: str | None, kind: str, value: Any) -> None:
    parsed = parse_body(raw, ctype)
    assert parsed.kind == kind
    assert parsed.error is None
    assert parsed.value == value
    assert parsed.size == len(raw or b"")


def test_binary_body_is_base64() -> None:
    raw = b"\xff\xfe\x00\x01binary"
    parsed = parse_body(raw, "application/octet-stream")
    assert parsed.kind == "binary"
    assert parsed.value == "base64:" + base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    ("raw", "kind", "value"),
    [
        # a form from a windows-1252 page: still a form, the bad byte as U+FFFD (docs/formats.md's
        # order)
        (b"action=submit&note=caf\xe9", "form", {"action": "submit", "note": "caf\ufffd"}),
        (
            b"user=alex&password=Hunter2&city=M\xfcnchen",
            "form",
            {"user": "alex", "password": "Hunter2", "city": "M\ufffdnchen"},
        ),
        (b"q=%E9t%E9&x=\xff", "form", {"q": "\ufffdt\ufffd", "x": "\ufffd"}),
        # JSON comes first, as for any body
        (
            b'{"action": "submit", "note": "caf\xe9"}',
            "json",
            {"action": "submit", "note": "caf\ufffd"},
        ),
        # binary: a "form" whose names hold U+FFFD or control bytes stays base64
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary", None),
        (b"stra\xdfe=Hauptstra\xdfe", "binary", None),
        (b"a=1&\x00\xff=2", "binary", None),
        (b"&&\xff", "binary", None),
    ],
)
def test_a_body_that_is_not_utf8_keeps_the_parse_order(raw: bytes, kind: str, value: Any) -> None:
    parsed = parse_body(raw, FORM)
    assert parsed.kind == kind and parsed.error is None
    if kind == "binary":
        assert parsed.value == "base64:" + base64.b64encode(raw).decode()
    else:
        assert parsed.value == value


def test_json_python_cannot_read_is_unevaluable() -> None:
    """An integer of more than 4300 digits is valid JSON that json.loads refuses: fail closed,
    never fall through to the form parse (which would make it a near miss and forward it)."""
    parsed = parse_body(b'{"action": "add", "trace": ' + b"1" * 5000 + b"}", "application/json")
    assert parsed.kind == "unevaluable" and parsed.value is None
    assert "4300 digits" in (parsed.error or "")
    assert parse_body(b'{"n": ' + b"1" * 4300 + b"}").kind == "json"


def test_large_binary_body_is_capped() -> None:
    raw = b"\xff" * (RAW_TEXT_CAP * 2)
    parsed = parse_body(raw, "application/octet-stream")
    assert parsed.kind == "binary"
    assert len(parsed.value) < RAW_TEXT_CAP + 100
    assert f"[{len(raw)} bytes in all]" in parsed.value


def test_long_text_is_capped() -> None:
    raw = b"&" * (RAW_TEXT_CAP + 10)
    parsed = parse_body(raw, "text/plain")
    assert parsed.kind == "text"
    assert parsed.value.endswith(f"[truncated, {len(raw)} characters in all]")


def test_multipart_fields_and_file_parts() -> None:
    raw = multipart(
        ("job_id", None, None, b"JR-1042"),
        ("full_name", None, None, "Alex Grëen".encode()),
        ("skills", None, None, b"python"),
        ("skills", None, None, b"sql"),
        ("resume", "alex_green_resume.pdf", "application/pdf", PDF),
    )
    parsed = parse_body(raw, MULTIPART)
    assert parsed.kind == "multipart"
    assert parsed.value == {
        "job_id": "JR-1042",
        "full_name": "Alex Grëen",
        "skills": ["python", "sql"],
        "resume": {
            "filename": "alex_green_resume.pdf",
            "content_type": "application/pdf",
            "size": len(PDF),
            "sha256": hashlib.sha256(PDF).hexdigest(),
        },
    }


def test_multipart_utf8_names_and_filenames() -> None:
    # Browsers write field names and file names in UTF-8, not latin-1.
    raw = multipart(
        ("prénom", None, None, b"Alex"),
        ("cv", "résumé.pdf", "application/pdf", b"%PDF"),
    )
    value = parse_body(raw, MULTIPART).value
    assert value["prénom"] == "Alex"
    assert value["cv"]["filename"] == "résumé.pdf"


def test_multipart_quoted_boundary_and_case_insensitive_type() -> None:
    raw = multipart(("a", None, None, b"1"), boundary="x y")
    assert parse_body(raw, 'Multipart/Form-Data; boundary="x y"').value == {"a": "1"}


def test_multipart_binary_field_is_base64() -> None:
    raw = multipart(("blob", None, None, b"\xff\x00"))
    assert parse_body(raw, MULTIPART).value == {"blob": "base64:/wA="}


@pytest.mark.parametrize(
    ("raw", "ctype", "why"),
    [
        (multipart(("a", None, None, b"1")), "multipart/form-data", "without a boundary"),
        (b"--" + BOUNDARY.encode() + b"\r\nno end", MULTIPART, "closing boundary"),
        (
            f"--{BOUNDARY}\r\nContent-Disposition: form-data\r\n--{BOUNDARY}--".encode(),
            MULTIPART,
            "separator",
        ),
    ],
)
def test_bad_multipart_is_unevaluable(raw: bytes, ctype: str, why: str) -> None:
    parsed = parse_body(raw, ctype)
    assert parsed.kind == "unevaluable"
    assert why in (parsed.error or "")


def test_multipart_non_ascii_boundary_as_mitmproxy_decodes_it() -> None:
    # mitmproxy hands header values over as UTF-8 with surrogateescape; a boundary byte that is
    # not UTF-8 must still find the body's delimiter (it used to raise UnicodeEncodeError).
    boundary = b"b\xffx"
    raw = b"--" + boundary + b'\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n'
    raw += b"--" + boundary + b"--\r\n"
    ctype = (b"multipart/form-data; boundary=" + boundary).decode("utf-8", "surrogateescape")
    assert parse_body(raw, ctype).value == {"a": "1"}


BODY = b'{"operationName": "CreateAdoptionInquiry", "variables": {"petId": 7}}'


def _gzip_members(*chunks: bytes) -> bytes:
    return b"".join(gzip.compress(c) for c in chunks)


@pytest.mark.parametrize(
    ("encoded", "encoding"),
    [
        (BODY, None),
        (BODY, "identity"),
        (gzip.compress(BODY), "gzip"),
        (gzip.compress(BODY), "x-gzip"),
        (gzip.compress(BODY), "GZIP"),
        (zlib.compress(BODY), "deflate"),
        (zlib.compress(BODY)[2:-4], "deflate"),  # raw deflate, as some servers and clients send
        (brotli.compress(BODY), "br"),
        (zstd.compress(BODY), "zstd"),
        # stacked: listed in the order applied, so undone right to left
        (gzip.compress(brotli.compress(BODY)), "br, gzip"),
        (zstd.compress(zlib.compress(BODY)), "deflate,zstd"),
        (gzip.compress(BODY), "identity, gzip"),
        # several gzip members / zstd frames are one stream
        (_gzip_members(BODY[:20], BODY[20:]), "gzip"),
        (zstd.compress(BODY[:20]) + zstd.compress(BODY[20:]), "zstd"),
    ],
)
def test_content_encoding_decoded(encoded: bytes, encoding: str | None) -> None:
    parsed = parse_body(encoded, "application/json", encoding)
    assert parsed.error is None
    assert parsed.kind == "json"
    assert parsed.value == json.loads(BODY)
    assert parsed.size == len(encoded)


BOMB = b"a=" + b"0" * (8 * 1024 * 1024)


@pytest.mark.parametrize(
    ("encoded", "encoding", "why"),
    [
        (gzip.compress(BOMB), "gzip", "exceeds"),
        (zlib.compress(BOMB), "deflate", "exceeds"),
        (brotli.compress(BOMB), "br", "exceeds"),
        (zstd.compress(BOMB), "zstd", "exceeds"),
        (gzip.compress(gzip.compress(BOMB)), "gzip, gzip", "exceeds"),
        (b"not gzip at all", "gzip", "cannot decode"),
        (b"not deflate", "deflate", "cannot decode"),
        (b"not brotli", "br", "cannot decode"),
        (b"not zstd", "zstd", "cannot decode"),
        # a stream cut short is corrupt, not a shorter body
        (gzip.compress(BODY)[:-12], "gzip", "truncated"),
        (zlib.compress(BODY)[:-8], "deflate", "truncated"),
        (brotli.compress(BODY)[:-3], "br", "truncated"),
        (zstd.compress(BODY)[:-3], "zstd", "truncated"),
        (gzip.compress(BODY) + b"trailing junk", "gzip", "cannot decode"),
        (BODY, "compress", "unknown Content-Encoding"),
    ],
)
def test_bad_encodings_are_unevaluable(encoded: bytes, encoding: str, why: str) -> None:
    parsed = parse_body(encoded, "application/json", encoding, limit=4 * 1024 * 1024)
    assert parsed.kind == "unevaluable"
    assert parsed.value is None
    assert why in (parsed.error or ""), parsed.error


def test_oversize_body_is_unevaluable() -> None:
    raw = b"a=" + b"x" * 2000
    parsed = parse_body(raw, FORM, limit=1000)
    assert parsed.kind == "unevaluable"
    assert parsed.size == len(raw)
    assert "exceeds 1000" in (parsed.error or "")
    assert parse_body(raw, FORM, limit=len(raw)).kind == "form"


def test_deeply_nested_json_is_unevaluable() -> None:
    # Deeper than any real request; deep enough to break recursive consumers downstream.
    deep = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    parsed = parse_body(deep.encode(), "application/json")
    assert parsed.kind == "unevaluable"
    assert "nested deeper" in (parsed.error or "")
    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert parse_body(ok.encode(), "application/json").kind == "json"
    wide = json.dumps([{"a": [1, 2, {"b": [3]}]}] * 5000).encode()
    assert parse_body(wide, "application/json").kind == "json"


def test_decoded_empty_body_is_empty() -> None:
    parsed = parse_body(gzip.compress(b""), FORM, "gzip")
    assert parsed.kind == "empty"
    assert parsed.value is None


@pytest.mark.parametrize(
    ("query", "params"),
    [
        ("", {}),
        ("type=RCO", {"type": "RCO"}),
        # blank values dropped (parse_qs default), unlike form bodies
        ("type=RCO&empty=&bare", {"type": "RCO"}),
        ("a=1&a=2", {"a": ["1", "2"]}),
        ("a=1&a=", {"a": "1"}),
        ("q=blue+mug&x=%2F", {"q": "blue mug", "x": "/"}),
        ("parameters=T2M%2CALLSKY", {"parameters": "T2M,ALLSKY"}),
    ],
)
def test_parse_query(query: str, params: dict[str, Any]) -> None:
    assert parse_query(query) == params


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_json_behind_a_bom_or_in_utf16_is_json(encoding: str) -> None:
    """As json.loads(bytes) reads it (Flask's get_json): not a form that matches nothing."""
    parsed = parse_body('{"item": "lamp", "qty": 2}'.encode(encoding), "application/json")
    assert (parsed.kind, parsed.value) == ("json", {"item": "lamp", "qty": 2})


def test_a_binary_body_starting_like_utf16_stays_binary() -> None:
    assert parse_body(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01").kind == "binary"
