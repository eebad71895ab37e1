"""The claw-eval submit page on 127.0.0.1:7878, as the reference's runtime server serves it.

GET /submit is a form; submitting it POSTs JSON {"answer": ...} to /api/task-submit (a plain form
POST without JavaScript). The agent's connection to this port is redirected through mitmproxy,
so the POST is matched against eval_schema ("/api/task-submit") and blocked there; this server
only sees requests the addon let through.

Usage: python -m sandbox.container.submit [--host 127.0.0.1] [--port 7878]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Submit Final Answer</title></head>
<body>
<main>
  <h1>Submit Final Answer</h1>
  <form id="answer-form" method="post" action="/api/task-submit">
    <textarea id="answer" name="answer" rows="20" cols="100" autofocus required></textarea>
    <p><button type="submit">Submit</button></p>
    <div id="status" role="status"></div>
  </form>
</main>
<script>
  const form = document.getElementById("answer-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const status = document.getElementById("status");
    form.querySelector("button").disabled = true;
    status.textContent = "Submitting...";
    try {
      await fetch("/api/task-submit", {
        method: "POST",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify({answer: document.getElementById("answer").value})
      });
    } catch (_) {}
    status.textContent = "Submitted.";
  });
</script>
</body>
</html>
"""


class SubmitHandler(BaseHTTPRequestHandler):
    server_version = "clawbench-submit/1"

    def _send(self, status: int, body: bytes, ctype: str, extra: dict[str, str] | None = None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path in ("", "/"):
            self._send(302, b"", "text/plain", {"Location": "/submit"})
        elif path == "/submit":
            self._send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif path == "/api/status":
            self._send(200, b'{"status": "ok"}', "application/json")
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(min(length, 10 * 1024 * 1024))
        if self.path.split("?", 1)[0] != "/api/task-submit":
            self._send(404, b"not found", "text/plain")
            return
        reply = {"status": "received", "answer_length": len(raw)}
        self._send(200, json.dumps(reply).encode(), "application/json")

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"submit: {self.address_string()} {format % args}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the submit page until killed."""
    parser = argparse.ArgumentParser(prog="clawbench-submit-page")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7878)
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer((args.host, args.port), SubmitHandler)
    print(f"submit page on http://{args.host}:{args.port}/submit", file=sys.stderr, flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
