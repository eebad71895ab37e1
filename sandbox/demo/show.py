"""What the demo shows: the runs, what reached the demo site, and where the files are."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from proxy_addon.matching import HttpRequest, Matcher, parse_body
from proxy_addon.records import RUN_META
from proxy_addon.tasks import load_task
from sandbox.demo.local import RunResult
from sandbox.demo.scenarios import MODEL, DemoRun
from sandbox.demo.site import HOSTS, Received


@dataclass
class SiteSeen:
    """What the demo site saw: the commits that reached it (must be none) and the counts."""

    leaked: list[str]
    demo_hosts: int
    others: int


def commits_reaching_site(received: list[Received], runs: list[DemoRun]) -> list[str]:
    """The requests the site received that match a demo task's eval_schema (must be none)."""
    matchers = {r.slug: Matcher(load_task(r.task_dir).eval_schema) for r in runs}
    leaked = []
    for got in received:
        url = f"https://{got.host}{got.target}"
        parsed = parse_body(got.body or None, got.content_type)
        for slug, matcher in matchers.items():
            if matcher.match(HttpRequest(got.method, url, parsed.value, parsed.error)).match:
                leaked.append(f"{slug}: {got.method} {url}")
    return leaked


def site_seen(received: list[Received], runs: list[DemoRun]) -> SiteSeen:
    """What the site received, counted: commits among it (must be none), demo hosts, others."""
    demo_hosts = sum(r.host in HOSTS for r in received)
    return SiteSeen(commits_reaching_site(received, runs), demo_hosts, len(received) - demo_hosts)


def show_runs(console: Console, results: list[RunResult], batch: Path) -> None:
    """One row per run; a task's or an agent's name is never cut, the rest wraps between words."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"Runs in {batch}", title_justify="left")
    table.add_column("task", no_wrap=True)
    table.add_column("agent", no_wrap=True)
    table.add_column("what the agent does")
    table.add_column("the proxy", overflow="fold")
    for r in results:
        got = (
            "[green]blocked, recorded[/]" if r.intercepted else f"not intercepted: {r.stop_reason}"
        )
        if r.failure:
            got = f"[red]infra failure: {escape(r.failure)}[/]"
        table.add_row(r.run.slug, r.run.harness, r.run.why.split(":")[0], got)
    console.print(table)


RUN_FILES = ("interception.json", "requests.jsonl", "judge.json", "mitmdump.log", "agent.log")


def files_written(batch: Path, ts: str) -> str:
    """Where the demo's files are: only those written (judge.json only when a judge ran)."""
    top = [
        n
        for n in ("batch-summary.json", "rescore-summary.json", "report.html")
        if (batch / n).is_file()
    ]
    runs = list(batch.glob(f"{MODEL}/*-{MODEL}-{ts}"))
    data = [n for n in RUN_FILES if any((r / "data" / n).is_file() for r in runs)]
    per_run = [n for n in (RUN_META, "task.json") if any((r / n).is_file() for r in runs)]
    if data:
        per_run.append(f"data/{{{', '.join(data)}}}")
    agent = " and agent/ (what the agent ran)" if any((r / "agent").is_dir() for r in runs) else ""
    where = f"{MODEL}/<agent>-<task>-{MODEL}-{ts}/ with {', '.join(per_run)}{agent}"
    return f"Files in {batch}: {', '.join([*top, f'and per run {where}'])}."


def show_site(console: Console, site: SiteSeen, agents: set[str]) -> None:
    """What the site saw, and why the non-browser agents among `agents` matter."""
    console.print(
        f"The demo site received {site.demo_hosts} requests for the demo hosts (page views, "
        f"cart, previews; commit requests among them: {len(site.leaked)}) and {site.others} for "
        "other hosts (the browser's own background traffic, answered here instead of by the "
        "internet).",
        highlight=False,
    )
    for line in site.leaked:
        console.print(f"[red]reached the site: {line}[/]")
    clis = [a for a in ("curl", "python") if a in agents]
    if clis:
        console.print(
            "A browser-only (CDP) interceptor would not have seen the requests of the "
            f"{' and '.join(clis)} agents above: they are not browsers.",
            highlight=False,
        )


__all__ = [
    "SiteSeen",
    "commits_reaching_site",
    "files_written",
    "show_runs",
    "show_site",
    "site_seen",
]
