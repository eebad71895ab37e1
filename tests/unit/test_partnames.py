"""A multipart part's name as servers read it (proxy_addon.matching.partnames): every reading a
server makes of a part is one of the body parser's readings, checked against Werkzeug's own
multipart parser (Flask's request.form and request.files) over generated part headers."""

from __future__ import annotations

import io
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from werkzeug.formparser import parse_form_data

from proxy_addon.matching import parse_body
from proxy_addon.matching.bodies import multipart_readings

BOUNDARY = "clawbench-part-names"


def _body(*heads: str, content: bytes = b"123") -> bytes:
    """One part with the given header lines, framed as a browser frames it."""
    head = "".join(f"{h}\r\n" for h in heads)
    return f"--{BOUNDARY}\r\n{head}\r\n".encode() + content + f"\r\n--{BOUNDARY}--\r\n".encode()


def _ours(body: bytes) -> list[tuple[str, str | None]]:
    """(name, filename or None) of the single part, by each of the parser's readings."""
    found = []
    for _, fields in multipart_readings(body, BOUNDARY.encode()):
        ((name, value),) = fields.items()
        found.append((name, value["filename"] if isinstance(value, dict) else None))
    return found


def _werkzeug(body: bytes) -> tuple[str, str | None] | None:
    """(name, filename or None) of the single part as Flask's request.form/files have it."""
    environ = {
        "REQUEST_METHOD": "POST",
        "CONTENT_TYPE": f"multipart/form-data; boundary={BOUNDARY}",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    try:
        _, form, files = parse_form_data(environ, silent=False)
    except ValueError:  # a part Werkzeug refuses (no Content-Disposition): no field at all
        return None
    if form:
        ((name, _),) = form.items()
        return name or "", None
    if files:
        ((name, storage),) = files.items()
        return name or "", storage.filename
    return None


@pytest.mark.parametrize(
    ("disposition", "name"),
    [
        ('form-data; name="other"; name="job_id"', "job_id"),  # Werkzeug, Django: the last
        ("form-data; name=\"other\"; name*=UTF-8''job_id", "job_id"),  # RFC 7578 name*
        ('form-data; name="job\\_id"', "job_id"),  # a quoted-pair undone
        ('form-data; NAME="other"; Name="job_id"', "job_id"),  # names in any case
    ],
)
def test_each_attack_of_the_issue_has_the_servers_reading(disposition: str, name: str) -> None:
    body = _body(f"Content-Disposition: {disposition}")
    assert _werkzeug(body) == (name, None)
    assert (name, None) in _ours(body)
    parsed = parse_body(body, f"multipart/form-data; boundary={BOUNDARY}")
    assert parsed.value != {name: "123"}  # the parser's own reading is another one
    assert any(value == {name: "123"} and note for note, value in parsed.alternatives)


def test_name_star_before_a_plain_name_is_read_both_ways() -> None:
    # Werkzeug takes the last parameter (other); RFC 7578 readers (Go, busboy) take name*
    body = _body("Content-Disposition: form-data; name*=utf-8''job%5Fid; name=\"other\"")
    assert _werkzeug(body) == ("other", None)
    assert {("other", None), ("job_id", None)} <= set(_ours(body))


def test_a_header_pythons_email_package_cannot_decode_is_still_read() -> None:
    # name* beside name*0 makes email.utils.decode_params raise TypeError
    body = _body("Content-Disposition: form-data; name=job_id; name*=x; name*0=y")
    parsed = parse_body(body, f"multipart/form-data; boundary={BOUNDARY}")
    assert parsed.error is None and _werkzeug(body) in _ours(body)


def test_a_second_content_disposition_header_is_a_reading_too() -> None:
    body = _body(
        'Content-Disposition: form-data; name="other"',
        'Content-Disposition: form-data; name="job_id"',
    )
    notes = {note: value for note, value in multipart_readings(body, BOUNDARY.encode())}
    assert list(notes.values()) == [{"other": "123"}, {"job_id": "123"}]
    assert "Django" in str(list(notes)[1])


def test_a_file_part_read_as_a_field_and_a_field_read_as_a_file() -> None:
    # FILENAME in capitals: every reader sees a file; filename* with a charset it refuses
    # (Werkzeug leaves it quoted): some read a file named so, some a field
    body = _body('Content-Disposition: form-data; name="job_id"; FILENAME="cv.pdf"')
    assert set(_ours(body)) == {("job_id", "cv.pdf")}
    body = _body("Content-Disposition: form-data; name=\"job_id\"; filename*=bogus''cv.pdf")
    assert ("job_id", None) in _ours(body) and _werkzeug(body) in _ours(body)


def test_a_browsers_part_has_one_reading() -> None:
    body = _body(
        'Content-Disposition: form-data; name="resume"; filename="my cv.pdf"',
        "Content-Type: application/pdf",
    )
    assert _ours(body) == [("resume", "my cv.pdf")]


_KEYS = st.sampled_from(
    ["name", "NAME", "Name", "name*", "NAME*", "filename", "FILENAME", "filename*", "name*0",
     "name*1", "name*0*", "other"]
)  # fmt: skip
_VALUES = st.one_of(
    st.sampled_from(["job_id", "other", "cv.pdf", ""]),
    st.text(alphabet="job_id\\\"; %2=*'", max_size=10).map(lambda s: f'"{s}"'),
    st.builds(
        "{}''{}".format,
        st.sampled_from(["UTF-8", "utf-8", "iso-8859-1", "us-ascii", "bogus", ""]),
        st.sampled_from(["job_id", "job%5Fid", "%22x", "a%20b", "%FF"]),
    ),
    st.text(alphabet="job_id\\\"; %2=*'", max_size=10),  # anything, unquoted
)
_PARAM = st.tuples(
    st.sampled_from(["; ", ";", " ; ", ";\t"]), _KEYS, st.sampled_from(["=", " ="]), _VALUES
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_PARAM, min_size=1, max_size=4),
    st.lists(_PARAM, max_size=2),
    st.booleans(),
)
def test_werkzeugs_reading_of_any_part_header_is_one_of_ours(
    params: list[Any], second: list[Any], two_headers: bool
) -> None:
    """Flask's request.form or request.files names the part as one of the parser's readings
    does, whatever its Content-Disposition (the differential test of docs/security.md)."""
    heads = ["Content-Disposition: form-data" + "".join("".join(p) for p in params)]
    if two_headers:
        heads.append("Content-Disposition: form-data" + "".join("".join(p) for p in second))
    body = _body(*heads)
    theirs = _werkzeug(body)
    assume(theirs is not None)
    assert theirs in _ours(body)
