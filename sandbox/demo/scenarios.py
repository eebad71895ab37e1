"""What the demo runs: which agent does which demo task, right or wrong.

The requests come from `test-cases/clawbench-demo/requests.json`, the corpus's documented
correct and wrong requests; each agent sends them its own way (python's urllib through the
scripted agent, a curl shell script, or headless Chromium filling the page's form).
"""

from __future__ import annotations

import base64
import json
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from proxy_addon.tasks import TaskError, load_task
from sandbox.agents import FilePart, ScriptedRequest

MODEL = "scripted-demo"
HARNESSES = ("chromium", "python", "curl", "browser-use")

PLAN: tuple[tuple[str, str, str], ...] = (
    # (task, harness, variant): "correct" and "wrong" send the documented commit request,
    # "gives-up" only browses (it never commits, so nothing is intercepted).
    ("001-shop-checkout-mug", "chromium", "correct"),
    ("002-reviews-backpack-form", "chromium", "wrong"),
    ("003-jobs-apply-backend", "chromium", "correct"),
    ("004-news-subscribe-weekly", "chromium", "correct"),
    ("001-shop-checkout-mug", "python", "wrong"),
    ("002-reviews-backpack-form", "python", "correct"),
    ("003-jobs-apply-backend", "python", "wrong"),
    ("004-news-subscribe-weekly", "python", "gives-up"),
    ("010-news-unsubscribe-quick", "python", "correct"),
    ("004-news-subscribe-weekly", "curl", "correct"),
    ("010-news-unsubscribe-quick", "curl", "wrong"),
    # browser-use (a real agent) driven by a scripted model: sandbox.demo.scripted_model
    ("004-news-subscribe-weekly", "browser-use", "correct"),
    ("002-reviews-backpack-form", "browser-use", "wrong"),
)


class PlanError(ValueError):
    """The demo corpus is missing or does not describe a planned run."""


@dataclass(frozen=True)
class DemoRun:
    """One planned run: an agent (harness) doing one demo task, right or wrong."""

    slug: str
    harness: str
    variant: str
    task_dir: Path
    host: str
    start: str
    request: dict[str, Any] | None
    browse: tuple[dict[str, Any], ...]
    why: str

    @property
    def start_url(self) -> str:
        return f"https://{self.host}{self.start}"


def load_plan(corpus: Path, harnesses: tuple[str, ...] = HARNESSES) -> list[DemoRun]:
    """The planned runs of these harnesses, with their requests from corpus/requests.json.

    Every planned task.json is loaded and validated here, before the demo starts anything: a
    broken one is a PlanError with the task loader's message (file, field, fix)."""
    doc_path = corpus / "requests.json"
    try:
        doc = json.loads(doc_path.read_text(encoding="utf-8"))["tasks"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PlanError(f"{doc_path}: cannot read the demo requests: {e}") from e
    runs = []
    checked: set[str] = set()
    for slug, harness, variant in PLAN:
        if harness not in harnesses:
            continue
        entry = doc.get(slug) if isinstance(doc, dict) else None
        if entry is None or not (corpus / slug / "task.json").is_file():
            raise PlanError(f"{corpus}: task {slug} (in the demo plan) is missing")
        if slug not in checked:
            try:
                load_task(corpus / slug)
            except TaskError as e:
                raise PlanError(f"{e} (a task of the demo plan)") from e
            checked.add(slug)
        try:
            request = entry[variant] if variant in ("correct", "wrong") else None
            browse = tuple(r for r in entry.get("no_match", []) if r["method"] == "GET")
            host, start = entry["host"], entry["start"]
        except (KeyError, TypeError, AttributeError) as e:
            raise PlanError(f"{doc_path}: tasks.{slug}: missing or malformed {e}") from e
        why = {
            "correct": "does the task right",
            "wrong": (request or {}).get("why", "wrong payload"),
            "gives-up": "browses, never commits",
        }[variant]
        runs.append(
            DemoRun(
                slug,
                harness,
                variant,
                corpus / slug,
                host,
                start,
                request,
                browse,
                why,
            )
        )
    return runs


def _headers(req: dict[str, Any]) -> dict[str, str]:
    ctype = req.get("content_type")
    return {"Content-Type": ctype} if ctype and "multipart" not in req else {}


def python_script(run: DemoRun, info_dir: str | None = None) -> list[ScriptedRequest]:
    """The scripted (urllib) agent's requests: the start page, browsing, then the commit. Files
    come from the task's directory, or from info_dir (the sandbox's /my-info, where the agent
    finds the task's extra_info files)."""
    script = [ScriptedRequest(url=run.start_url, expect=200)]
    if run.request is None:
        return script + [ScriptedRequest(url=r["url"], expect="response") for r in run.browse]
    req = run.request
    fields: dict[str, Any] = {"method": req["method"], "url": req["url"], "expect": "blocked"}
    if "multipart" in req:
        parts = req["multipart"]
        fields["form"] = parts["fields"]
        fields["files"] = {
            name: FilePart(
                filename=f["filename"] if f["from"] else "",
                content_type=f["content_type"],
                path=_file_path(run, f["from"], info_dir) if f["from"] else None,
            )
            for name, f in parts["files"].items()
        }
    elif req.get("body") is not None:
        fields["body"] = req["body"]
        fields["headers"] = _headers(req)
    return [*script, ScriptedRequest.model_validate(fields)]


def _file_path(run: DemoRun, rel: str, info_dir: str | None) -> str:
    if info_dir is None:
        return str(run.task_dir / rel)
    return f"{info_dir}/{PurePosixPath(rel).name}"


def curl_script(run: DemoRun) -> str:
    """A POSIX shell script of curl calls (the proxy and CA come from the environment)."""
    lines = [
        "set -u",
        f"curl -sS -o /dev/null -w 'GET {run.start} -> %{{http_code}}\\n' "
        + shlex.quote(run.start_url),
    ]
    req = run.request
    if req is not None:
        if "multipart" in req:
            raise PlanError(f"{run.slug}: the curl agent sends no multipart bodies")
        args = ["curl", "-sS", "-o", "/dev/null", "-X", req["method"]]
        for k, v in _headers(req).items():
            args += ["-H", f"{k}: {v}"]
        if req.get("body") is not None:
            args += ["--data-raw", req["body"]]
        lines.append(" ".join(shlex.quote(a) for a in [*args, req["url"]]))
        lines.append(f'echo "{req["method"]} {urlsplit(req["url"]).path}: curl exit code $?"')
    return "\n".join(lines) + "\n"


def autopilot(run: DemoRun) -> dict[str, Any]:
    """What the browser agent fills in on the start page (form fields by name, files)."""
    req = run.request
    if req is None:
        return {}
    if "multipart" in req:
        files = {}
        for name, f in req["multipart"]["files"].items():
            content = (run.task_dir / f["from"]).read_bytes() if f["from"] else b""
            files[name] = {
                "filename": f["filename"] if f["from"] else "",
                "type": f["content_type"],
                "b64": base64.b64encode(content).decode(),
            }
        return {"fields": req["multipart"]["fields"], "files": files}
    if req["method"] == "GET":
        return {"fields": dict(parse_qsl(urlsplit(req["url"]).query, keep_blank_values=True))}
    if req.get("content_type") == "application/json":
        body = json.loads(req["body"])
        item = body["cart"][0]  # the shop's checkout form: one item, shipping, address
        fields = {"size": item["size"], "quantity": str(item["quantity"])}
        fields["shipping_method"] = body["shipping_method"]
        return {"fields": {**fields, **body["shipping_address"]}}
    return {"fields": dict(parse_qsl(req["body"], keep_blank_values=True))}


def browser_use_script(run: DemoRun) -> list[dict[str, Any]]:
    """The scripted model's steps for browser-use: open the start page, fill the form with the
    run's request, submit, say done (a variant that gives up only looks)."""
    steps: list[dict[str, Any]] = [{"navigate": run.start_url}]
    fields = autopilot(run).get("fields")
    if fields:
        steps += [
            {"fill": fields},
            {"submit": True},
            {"done": "Submitted the form.", "success": True},
        ]
    else:
        steps.append({"done": "I could not do it.", "success": False})
    return steps


def chromium_url(run: DemoRun) -> str:
    """The start page with the browser agent's plan in the fragment (never sent anywhere)."""
    plan = json.dumps(autopilot(run), separators=(",", ":"))
    return f"{run.start_url}#autopilot={quote(plan, safe='')}"
