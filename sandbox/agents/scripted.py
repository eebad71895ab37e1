"""The scripted agent: replay a list of HTTP requests through the proxy, one JSON line per outcome.

Usage: python -m sandbox.agents.scripted SCRIPT.json

It uses urllib, which honours http_proxy/https_proxy and SSL_CERT_FILE from the sandbox's
environment. Exit status 0 when every `expect` held, 1 otherwise. Useful to measure the
interceptor's false positives: replay traffic that must not match and count interceptions.
"""

from __future__ import annotations

import http.client
import json
import secrets
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandbox.agents.request_script import FilePart, ScriptedRequest, load_script


def multipart(form: dict[str, str | list[str]], files: dict[str, FilePart], boundary: str) -> bytes:
    """A multipart/form-data body: the fields, then the files (bytes read from their paths)."""
    out = bytearray()
    for name, values in form.items():
        for value in [values] if isinstance(values, str) else values:
            out += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
            out += value.encode() + b"\r\n"
    for name, part in files.items():
        content = Path(part.path).read_bytes() if part.path else b""
        disposition = f'form-data; name="{name}"; filename="{part.filename}"'
        out += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n".encode()
        out += f"Content-Type: {part.content_type}\r\n\r\n".encode() + content + b"\r\n"
    return bytes(out + f"--{boundary}--\r\n".encode())


def _encode(req: ScriptedRequest) -> tuple[bytes | None, dict[str, str]]:
    headers = dict(req.headers)
    lower = {k.lower() for k in headers}
    if req.files is not None:
        boundary = f"----clawbench{secrets.token_hex(8)}"
        if "content-type" not in lower:
            headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
        return multipart(req.form or {}, req.files, boundary), headers
    if req.json_ is not None:
        if "content-type" not in lower:
            headers["Content-Type"] = "application/json"
        return json.dumps(req.json_).encode(), headers
    if req.form is not None:
        if "content-type" not in lower:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        return urllib.parse.urlencode(req.form, doseq=True).encode(), headers
    if req.body is not None:
        return req.body.encode(), headers
    return None, headers


def send(req: ScriptedRequest, context: ssl.SSLContext) -> dict[str, Any]:
    """Send one request; return its outcome (status, or the error that ended it)."""
    data, headers = _encode(req)
    handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPSHandler(context=context)]
    if not req.proxy:
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    request = urllib.request.Request(req.url, data=data, headers=headers, method=req.method)
    out: dict[str, Any] = {"method": req.method, "url": req.url, "proxy": req.proxy}
    try:
        with opener.open(request, timeout=req.timeout) as resp:
            out["status"] = resp.status
            out["body_size"] = len(resp.read())
    except urllib.error.HTTPError as e:
        out["status"] = e.code
    except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
        reason = getattr(e, "reason", e)
        out["error"] = f"{type(reason).__name__}: {reason}"
    return out


def expectation_met(expect: int | str | None, outcome: dict[str, Any]) -> bool:
    """Whether an outcome satisfies a request's `expect`."""
    if expect is None:
        return True
    if expect == "blocked":
        return "error" in outcome
    if expect == "response":
        return "status" in outcome
    return outcome.get("status") == expect


def main(argv: Sequence[str] | None = None) -> int:
    """Replay the script named on the command line."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m sandbox.agents.scripted SCRIPT.json", file=sys.stderr)
        return 2
    requests = load_script(args[0])
    context = ssl.create_default_context()
    all_met = True
    for index, req in enumerate(requests):
        if req.sleep:
            time.sleep(req.sleep)
        outcome = send(req, context)
        met = expectation_met(req.expect, outcome)
        all_met = all_met and met
        print(json.dumps({"index": index, **outcome, "expect": req.expect, "ok": met}), flush=True)
    return 0 if all_met else 1


if __name__ == "__main__":
    raise SystemExit(main())
