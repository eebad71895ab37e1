"""clawbench-tasks: validate, lint and try task.json files (thin CLI over the core modules)."""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from proxy_addon.matching.bodies import parse_body
from proxy_addon.matching.matcher import HttpRequest, Matcher
from proxy_addon.matching.redact import redact_url
from proxy_addon.matching.urls import canonical_url
from proxy_addon.tasks.lint import RULES, lint_file
from proxy_addon.tasks.model import TaskError, load_task
from proxy_addon.tasks.validation import Finding, find_task_files, validate_file

PROG = "clawbench-tasks"


class InputError(ValueError):
    """Bad command-line input: one line on stderr, exit 2."""


def _lint_epilog() -> str:
    rows = [f"  {sev:7} {rule:18} {why}" for rule, (sev, why) in RULES.items()]
    return "rules (exit 1 only when an error is found):\n" + "\n".join(rows)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__,
        epilog="exit codes:\n  0    validate, lint: no error found; match: the request would "
        "be intercepted\n  1    validate, lint: an error found (each on its own line); match: "
        "it would not\n  2    bad input: a path or file that cannot be read, a bad command line",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser(
        "validate",
        help="schema, regex and extra_info checks",
        description="Check task.json files (or directories searched recursively for them): the "
        "reference schema, that url_pattern compiles, that extra_info files exist inside the "
        "task directory. One line per problem: FILE: FIELD: problem (fix). Exit 1 on any.",
    )
    lint = sub.add_parser(
        "lint",
        help="eval_schema traps a curator needs to see",
        description="Report eval_schema traps, one line each: FILE: FIELD: severity[rule]: why.",
        epilog=_lint_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    for cmd in (v, lint):
        cmd.add_argument("paths", nargs="+", metavar="PATH", help="task.json files or dirs")
        cmd.add_argument("--json", action="store_true", help="machine-readable output")
    m = sub.add_parser(
        "match",
        help="would this request be intercepted?",
        description="Decide one request with the proxy's own matcher. Prints JSON "
        '{"match": bool, "reasons": [...], "url": ...}; exit 0 on a match, 1 on none, 2 on bad '
        "input. Values under secret-looking keys (token, session, api_key, ...) are printed as "
        "[REDACTED], as in requests.jsonl, so the output is safe to paste anywhere.",
    )
    m.add_argument("task", metavar="TASK_JSON", help="a task.json or its directory")
    m.add_argument("--method", required=True, metavar="METHOD", help="HTTP method, exactly as sent")
    m.add_argument(
        "--url", required=True, metavar="URL", help="absolute URL as sent (canonicalised here)"
    )
    body = m.add_mutually_exclusive_group()
    body.add_argument("--body", metavar="TEXT", help="request body as text (default: none)")
    body.add_argument(
        "--body-file", type=Path, metavar="FILE", help="request body as raw bytes from a file"
    )
    m.add_argument("--content-type", metavar="TYPE", help="Content-Type (overrides a --header one)")
    m.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="K:V",
        help="request header, repeatable (host:, content-type:, content-encoding: are used)",
    )
    return p


def _print_findings(findings: list[Finding], files: int, as_json: bool, cmd: str) -> None:
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    if as_json:
        out = {"files": files, "errors": errors, "warnings": warnings}
        print(json.dumps({**out, "findings": [f.to_json() for f in findings]}, indent=2))
        return
    for f in findings:
        if cmd == "lint":
            fix = f" ({f.fix})" if f.fix else ""
            print(f"{f.path}: {f.field or '(file)'}: {f.severity}[{f.rule}]: {f.message}{fix}")
        else:
            print(f.line())
    bad = len({f.path for f in findings if f.severity == "error"})
    print(
        f"{cmd}: {files} task file(s), {errors} error(s) in {bad} file(s), {warnings} warning(s)",
        file=sys.stderr if as_json else sys.stdout,
    )


def _check(paths: list[str], as_json: bool, cmd: str) -> int:
    files, findings = find_task_files(paths)
    check = validate_file if cmd == "validate" else lint_file
    for f in files:
        findings.extend(check(f))
    _print_findings(findings, len(files), as_json, cmd)
    return 1 if any(f.severity == "error" for f in findings) else 0


def _headers(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition(":")
        if not sep or not name.strip():
            raise InputError(f"--header {pair!r}: expected NAME:VALUE, e.g. content-encoding:gzip")
        out[name.strip().lower()] = value.strip()
    return out


def _match(args: argparse.Namespace) -> int:
    try:
        task = load_task(args.task)
    except TaskError as e:
        raise InputError(str(e)) from e
    matcher = Matcher(task.eval_schema)
    headers = _headers(args.header)
    try:
        url = canonical_url(args.url, headers.get("host"))
    except ValueError as e:
        fix = "give scheme and host, e.g. https://shop.example/cart"
        raise InputError(f"--url: {e} ({fix})") from e
    raw: bytes | None = None
    if args.body_file is not None:
        try:
            raw = args.body_file.read_bytes()
        except OSError as e:
            raise InputError(f"--body-file: cannot read {args.body_file}: {e.strerror}") from e
    elif args.body is not None:
        raw = args.body.encode("utf-8")
    ctype = args.content_type or headers.get("content-type")
    parsed = parse_body(raw, ctype, headers.get("content-encoding"))
    result = matcher.match(HttpRequest(args.method, url, parsed.value, parsed.error))
    # The matcher's reasons quote no secret; the URL is shown the same way (the user has it).
    out: dict[str, Any] = {**result.to_json(), "url": redact_url(url)}
    print(json.dumps(out, ensure_ascii=False, indent=2))
    return 0 if result.match else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of clawbench-tasks."""
    args = parser().parse_args(argv)
    try:
        if args.command == "match":
            return _match(args)
        return _check(args.paths, args.json, args.command)
    except Exception as e:  # every failure is one stderr line; the traceback only on request
        if args.debug:
            traceback.print_exc()
        what = str(e) if isinstance(e, InputError) else f"{type(e).__name__}: {e}"
        hint = "" if args.debug or isinstance(e, InputError) else " (--debug shows the traceback)"
        print(f"{PROG} {args.command}: {what}{hint}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
