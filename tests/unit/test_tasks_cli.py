"""clawbench-tasks validate / match (and the installed console script)."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from proxy_addon.tasks.cli import main
from proxy_addon.tasks.validation import validate_file
from tests.support.json_errors import json_error

COMMON = {
    "email_credentials": "credentials to use the assigned disposable email account",
    "user_info": "alex_green_personal_info.json; the dummy user's personal information",
    "user_resume": "PDF resume with disposable email account injected",
}
GRAPHQL: dict[str, Any] = {
    "instruction": "Save the curry recipe",
    "eval_schema": {
        "url_pattern": r"^https://recipes\.test/graphql(?:\?|$)",
        "method": "POST",
        "body": {"operationName": "Save"},
    },
    "time_limit": 5,
}


def write_task(root: Path, slug: str, data: Any, files: dict[str, str] | None = None) -> Path:
    d = root / slug
    d.mkdir(parents=True)
    (d / "task.json").write_text(data if isinstance(data, str) else json.dumps(data))
    for rel, text in (files or {}).items():
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(text)
    return d / "task.json"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- validate -----------------------------------------------------------------------------------


def test_validate_reference_corpus(
    reference_corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "validate", str(reference_corpus))
    assert code == 1
    lines = out.splitlines()
    # exactly the three leetcode tasks whose solution_code.py the shared copy leaves out
    assert lines[:-1] == [
        f"{reference_corpus}/{corpus}/{slug}/task.json: extra_info[0].path: file "
        "'extra_info/solution_code.py' is missing (add it or fix the path)"
        for corpus, slug in [
            ("v1", "266-education-learning-general-leetcode"),
            ("v1-lite", "266-education-learning-general-leetcode"),
            ("v2", "v2-266-education-learning-general-leetcode"),
        ]
    ]
    assert lines[-1] == "validate: 332 task file(s), 3 error(s) in 3 file(s), 0 warning(s)"


def test_validate_json(reference_corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", "--json", str(reference_corpus / "v1"))
    assert code == 1
    doc = json.loads(out)
    assert doc["files"] == 152 and doc["errors"] == 1
    (finding,) = doc["findings"]
    assert finding["field"] == "extra_info[0].path" and finding["severity"] == "error"
    assert err == ""  # --json: the summary is in the document


def test_validate_reports_every_problem_one_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad_schema = {
        **GRAPHQL,
        "instruction": "",
        "eval_schema": {"url_pattern": "x(", "method": "post", "query": {}},
        "time_limit": "5",
        "metadata": {"task_id": 1, "common_info": COMMON},
        # the schema fails, yet the files are still checked from the raw JSON
        "extra_info": [
            {"path": "extra_info/missing.json", "description": "missing"},
            {"path": "../outside.txt", "description": "escapes", "size": 1},
            {"path": 5, "description": "not a path: the schema says so, no file check"},
        ],
    }
    a = write_task(tmp_path, "a-schema", bad_schema)
    b = write_task(
        tmp_path,
        "b-files",
        {
            **GRAPHQL,
            "instruction": "  ",
            "eval_schema": {"url_pattern": "shop(", "method": "POST"},
            "extra_info": [
                {"path": "extra_info/ok.json", "description": "fine"},
                {"path": "extra_info/missing.json", "description": "missing"},
                {"path": "../../secrets.txt", "description": "escapes"},
                {"path": "/etc/passwd", "description": "absolute"},
                {"path": "extra_info", "description": "a directory"},
                {"path": "other/ok.json", "description": "same name as [0]"},
                {"path": "", "description": "a note without a file is fine"},
            ],
        },
        {"extra_info/ok.json": "{}", "other/ok.json": "{}"},
    )
    trailing_comma = '{"instruction": "x",}'
    c = write_task(tmp_path, "c-json", trailing_comma)
    d = write_task(tmp_path, "d-array", "[1]")
    (tmp_path / "e-empty").mkdir()
    code, out, _ = run(capsys, "validate", str(tmp_path), str(tmp_path / "nope"))
    assert code == 1
    lines = out.splitlines()
    assert lines[:-1] == [
        f"{tmp_path / 'nope'}: (file): no such file or directory (check the path)",
        f"{a}: metadata.metaclass: required key is missing (add it)",
        f"{a}: metadata.class: required key is missing (add it)",
        f"{a}: metadata.description: required key is missing (add it)",
        f"{a}: metadata.sites_involved: required key is missing (add it)",
        f"{a}: metadata.platform: required key is missing (add it)",
        f"{a}: eval_schema.url_pattern: regex does not compile: missing ), unterminated "
        r"subpattern at position 1 (escape literal ( ) [ ] ? + * with a backslash)",
        f"{a}: eval_schema.method: Input should be 'GET', 'POST', 'PUT', 'PATCH' or 'DELETE', "
        'got "post" (use one of those)',
        f"{a}: eval_schema.query: unknown key 'query' (remove it or check its spelling against "
        "task.schema.json)",
        f"{a}: time_limit: Input should be a valid number, got a string (fix the value's type)",
        f"{a}: extra_info[1].size: unknown key 'size' (remove it or check its spelling against "
        "task.schema.json)",
        f"{a}: extra_info[2].path: Input should be a valid string, got a number (fix the value's "
        "type)",
        f"{a}: instruction: is empty (write the prompt; runners refuse it)",
        f"{a}: extra_info[0].path: file 'extra_info/missing.json' is missing (add it or fix the "
        "path)",
        f"{a}: extra_info[1].path: '../outside.txt' escapes the task directory (keep files "
        "inside it)",
        f"{b}: eval_schema.url_pattern: regex does not compile: missing ), unterminated "
        r"subpattern at position 4 (escape literal ( ) [ ] ? + * with a backslash)",
        f"{b}: instruction: is empty (write the prompt; runners refuse it)",
        f"{b}: extra_info[1].path: file 'extra_info/missing.json' is missing (add it or fix the "
        "path)",
        f"{b}: extra_info[2].path: '../../secrets.txt' escapes the task directory (keep files "
        "inside it)",
        f"{b}: extra_info[3].path: absolute path '/etc/passwd' (make it relative to the task dir)",
        f"{b}: extra_info[4].path: 'extra_info' is not a file (point at a file)",
        f"{b}: extra_info[5].path: same file name as extra_info[0] ('ok.json'); the agent's "
        "/my-info/ holds only one of them (rename one)",
        f"{c}: (file): invalid JSON at {json_error(trailing_comma)}",
        f"{d}: (file): must be a JSON object, got list (wrap it in {{}})",
    ]
    assert lines[-1] == "validate: 4 task file(s), 24 error(s) in 5 file(s), 0 warning(s)"


VALID_BASE = {"instruction": "x", "eval_schema": {"url_pattern": "a", "method": "GET"},
              "time_limit": 5}  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "fields"),
    [
        # an unknown key: the schema fails, the missing file is still found
        (
            {"bogus": 1, "extra_info": [{"path": "gone.txt", "description": "d"}]},
            [("bogus", "unknown key"), ("extra_info[0].path", "is missing")],
        ),
        # an item the schema refuses but whose path is a string: its file is checked
        (
            {"extra_info": [{"path": "gone.txt"}]},
            [("extra_info[0].description", "missing"), ("extra_info[0].path", "is missing")],
        ),
        # shapes with no path to check: only the schema speaks
        ({"extra_info": "gone.txt"}, [("extra_info", "valid list")]),
        ({"extra_info": [["gone.txt"]]}, [("extra_info[0]", "valid dictionary")]),
        # a path no file system takes
        (
            {"bogus": 1, "extra_info": [{"path": "a\x00b", "description": "d"}]},
            [("bogus", "unknown key"), ("extra_info[0].path", "cannot be resolved")],
        ),
        # the regex (a schema error) and the instruction are checked too
        (
            {"bogus": 1, "instruction": " ", "eval_schema": {"url_pattern": "(", "method": "x"}},
            [
                ("eval_schema.url_pattern", "regex does not compile"),
                ("eval_schema.method", "Input should be"),
                ("bogus", "unknown key"),
                ("instruction", "is empty"),
            ],
        ),
        ({"eval_schema": "shop("}, [("eval_schema", "valid dictionary")]),
    ],
)
def test_validate_checks_files_and_regex_when_the_schema_fails(
    tmp_path: Path, extra: dict[str, Any], fields: list[tuple[str, str]]
) -> None:
    task = write_task(tmp_path, "t", {**VALID_BASE, **extra})
    found = validate_file(task)
    assert [f.field for f in found] == [field for field, _ in fields]
    for finding, (_, words) in zip(found, fields, strict=True):
        assert words in finding.message and finding.path == str(task)


def test_validate_symlink_escape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "outside.txt").write_text("secret")
    task = write_task(
        tmp_path,
        "t",
        {**GRAPHQL, "extra_info": [{"path": "extra_info/link.txt", "description": "x"}]},
    )
    (task.parent / "extra_info").mkdir()
    (task.parent / "extra_info" / "link.txt").symlink_to(tmp_path / "outside.txt")
    code, out, _ = run(capsys, "validate", str(task))
    assert code == 1
    assert "escapes the task directory" in out


def test_validate_clean_and_dedup(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = write_task(tmp_path, "t", GRAPHQL)
    code, out, _ = run(capsys, "validate", str(tmp_path), str(task))
    assert code == 0
    assert out == "validate: 1 task file(s), 0 error(s) in 0 file(s), 0 warning(s)\n"


# --- match --------------------------------------------------------------------------------------


@pytest.fixture
def graphql_task(tmp_path: Path) -> Path:
    return write_task(tmp_path, "g", GRAPHQL)


def test_match_and_no_match(graphql_task: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["match", str(graphql_task), "--method", "POST", "--url"]
    code, out, err = run(
        capsys, *base, "https://Recipes.test:443/./graphql", "--body", '[{"operationName":"Save"}]'
    )
    assert (code, err) == (0, "")
    assert json.loads(out) == {"match": True, "reasons": [], "url": "https://recipes.test/graphql"}
    code, out, _ = run(capsys, *base, "https://recipes.test/graphql", "--body", "operationName=Get")
    assert code == 1
    assert json.loads(out)["reasons"] == ['body: key \'operationName\' expected "Save", got "Get"']
    code, out, _ = run(
        capsys, "match", str(graphql_task), "--method", "GET", "--url", "https://x.test/"
    )
    assert code == 1
    assert json.loads(out)["match"] is False


def test_match_output_quotes_no_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI prints reasons and the URL as requests.jsonl would: secret values redacted."""
    schema = {
        "url_pattern": r"shop\.test/api/checkout",
        "method": "POST",
        "body": {"session_id": "sess-want"},
        "params": {"api_key": "key-want"},
    }
    task = write_task(tmp_path, "s", {**GRAPHQL, "eval_schema": schema})
    code, out, err = run(
        capsys, "match", str(task), "--method", "POST",
        "--url", "https://shop.test/api/checkout?api_key=key-a91b3c&step=pay",
        "--body", "session_id=sess-5ec12e7&item=mug",
    )  # fmt: skip
    assert (code, err) == (1, "")
    assert json.loads(out) == {
        "match": False,
        "reasons": [
            'body: key \'session_id\' expected "sess-want", got "[REDACTED]"',
            'params: key \'api_key\' expected "key-want", got "[REDACTED]"',
        ],
        "url": "https://shop.test/api/checkout?api_key=%5BREDACTED%5D&step=pay",
    }
    assert "key-a91b3c" not in out and "sess-5ec12e7" not in out


def test_match_uses_the_proxys_body_parsing(
    graphql_task: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "body.gz"
    body.write_bytes(gzip.compress(b'{"operationName": "Save"}'))
    argv = ["match", str(graphql_task), "--method", "POST", "--url", "https://recipes.test/graphql"]
    code, out, _ = run(
        capsys, *argv, "--body-file", str(body), "--header", "Content-Encoding: gzip"
    )
    assert code == 0, out
    # without the header the gzip bytes are just binary, which no filter matches
    code, out, _ = run(capsys, *argv, "--body-file", str(body))
    assert code == 1
    # a corrupt stream is unevaluable: URL and method match, so it is blocked, unverified
    body.write_bytes(gzip.compress(b'{"operationName": "Save"}')[:-9])
    code, out, _ = run(capsys, *argv, "--body-file", str(body), "--header", "content-encoding:gzip")
    assert code == 0
    doc = json.loads(out)
    assert doc["body_unverified"] is True
    assert "truncated" in doc["reasons"][0]
    # multipart by --content-type
    body.write_bytes(
        b'--b\r\nContent-Disposition: form-data; name="operationName"\r\n\r\nSave\r\n--b--\r\n'
    )
    code, out, _ = run(
        capsys, *argv, "--body-file", str(body), "--content-type", "multipart/form-data; boundary=b"
    )
    assert code == 0, out


def test_match_host_header_names_the_site(
    graphql_task: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "match",
        str(graphql_task),
        "--method",
        "POST",
        "--url",
        "https://203.0.113.7/graphql",
        "--header",
        "Host: RECIPES.test",
        "--body",
        '{"operationName": "Save"}',
    )
    assert code == 0
    assert json.loads(out)["url"] == "https://recipes.test/graphql"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--url", "recipes.test/graphql"], "--url: not an absolute URL"),
        (
            ["--url", "https://recipes.test/", "--body-file", "/nonexistent/b"],
            "--body-file: cannot read",
        ),
        (["--url", "https://recipes.test/", "--header", "nocolon"], "--header 'nocolon': expected"),
    ],
)
def test_match_bad_input(
    graphql_task: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "match", str(graphql_task), "--method", "POST", *argv)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"clawbench-tasks match: {message}")


def test_match_bad_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = write_task(
        tmp_path, "t", {**GRAPHQL, "eval_schema": {"url_pattern": "(", "method": "POST"}}
    )
    code, _, err = run(capsys, "match", str(task), "--method", "POST", "--url", "https://a.test/")
    assert code == 2
    assert err.startswith(
        f"clawbench-tasks match: {task}: eval_schema.url_pattern: regex does not compile: "
        "missing ), unterminated subpattern at position 0 (escape literal"
    )
    code, _, err = run(
        capsys, "match", str(tmp_path / "none"), "--method", "POST", "--url", "https://a.test/"
    )
    assert code == 2 and "file not found" in err and err.count("\n") == 1


def test_match_placeholder_never_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = write_task(
        tmp_path, "p", {**GRAPHQL, "eval_schema": {"url_pattern": "", "method": "POST"}}
    )
    code, out, _ = run(capsys, "match", str(task), "--method", "POST", "--url", "https://a.test/")
    assert code == 1
    assert json.loads(out)["reasons"] == ["url: log-only task (placeholder or empty url_pattern)"]


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["match", "t.json", "--url", "https://a.test/"])  # --method missing
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        main(["lint", "--help"])
    assert "exit 1 only when an error is found" in capsys.readouterr().out


# --- the installed console script -----------------------------------------------------------------


def _script() -> str:
    path = Path(sys.executable).parent / "clawbench-tasks"
    assert path.exists(), "pip install -e . should have installed the clawbench-tasks script"
    return str(path)


def test_console_script(graphql_task: Path) -> None:
    env = {**os.environ, "PYTHONWARNINGS": "error"}
    done = subprocess.run(
        [
            _script(),
            "match",
            str(graphql_task),
            "--method",
            "POST",
            "--url",
            "https://recipes.test/graphql",
            "--body",
            '{"operationName": "Save"}',
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["match"] is True
    done = subprocess.run(
        [_script(), "validate", str(graphql_task.parent.parent / "missing")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "no such file or directory" in done.stdout
    assert "Traceback" not in done.stderr


def test_the_documented_match_example_matches(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/usage.md's `clawbench-tasks match` example, run as written, says match."""
    import shlex

    repo = Path(__file__).resolve().parents[2]
    text = (repo / "docs" / "usage.md").read_text().replace("\\\n", " ")
    (line,) = [ln for ln in text.splitlines() if ln.startswith("clawbench-tasks match ")]
    argv = shlex.split(line)[1:]
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        code = main(argv)
    finally:
        os.chdir(cwd)
    assert code == 0 and json.loads(capsys.readouterr().out)["match"] is True
