"""clawbench_route through the real proxy: a host's own route wins, `*` takes every other host.

The demo routes its reserved hosts to the demo site and `*` there too, so a browser's own
background traffic (update checks, sign-in probes) never leaves for the real internet.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy_addon.addon.options import parse_routes
from tests.proxy.conftest import SHOP, write_task
from tests.support.upstream import start_upstream


@pytest.mark.parametrize(
    ("specs", "routes"),
    [
        (["Shop.Test.=http://127.0.0.1:8080"], {"shop.test": ("http", "127.0.0.1", 8080)}),
        (["*=http://127.0.0.1:9"], {"*": ("http", "127.0.0.1", 9)}),
        (
            ["a.test=https://[::1]:8443", "*=http://127.0.0.1:9"],
            {"a.test": ("https", "::1", 8443), "*": ("http", "127.0.0.1", 9)},
        ),
    ],
)
def test_parse_routes(specs: list[str], routes: dict[str, tuple[str, str, int]]) -> None:
    assert parse_routes(specs) == routes


def test_a_catch_all_route_keeps_every_other_host_on_loopback(
    launch, upstream, tmp_path: Path, curl: str
) -> None:
    task = write_task(tmp_path / "t", r"^https://shop\.clawbench\.test/api/commit$")
    other = start_upstream()
    try:
        run = launch(task, clawbench_route=[f"{SHOP}={upstream.url}", f"*={other.url}"])
        assert run.curl(f"https://{SHOP}/page").status == "200"
        assert run.curl("-d", "x=1", "https://Accounts.Example.org/ListAccounts").status == "200"
        blocked = run.curl("-d", "a=1", f"https://{SHOP}/api/commit")
        assert blocked.code != 0 and blocked.status == "000"
        assert [(r.method, r.path, r.host) for r in upstream.requests] == [("GET", "/page", SHOP)]
        assert [(r.method, r.path, r.host) for r in other.requests] == [
            ("POST", "/ListAccounts", "Accounts.Example.org")
        ]
        assert [e.url for e in run.log()] == [
            f"https://{SHOP}/page",
            "https://accounts.example.org/ListAccounts",
            f"https://{SHOP}/api/commit",
        ]
    finally:
        other.close()
