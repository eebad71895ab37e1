"""The proxy refuses loopback, link-local, cloud metadata and private destinations unless
clawbench_allow_private (or a route) names them (docs/security.md, the proxy's rule 3). A second
loopback server, not routed, stands for whatever the agent should not reach; it records what it
receives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from proxy_addon.addon import start_proxy
from tests.proxy.conftest import Run, write_task
from tests.support.upstream import Upstream, start_upstream

REBIND = Path(__file__).with_name("rebind.py")
CHECKOUT_TASK = r"shop\.clawbench\.test/api/checkout"


@pytest.fixture
def private() -> Iterator[Upstream]:
    up = start_upstream()
    yield up
    up.close()


def test_loopback_is_refused_by_default(launch, tmp_path, private: Upstream) -> None:
    run = launch(write_task(tmp_path / "task", CHECKOUT_TASK))
    for url in (f"http://127.0.0.1:{private.port}/admin", f"http://localhost:{private.port}/a"):
        assert run.curl(url).status == "000"
    assert private.requests == [] and private.connections == 0
    refused = [e.refused for e in run.log()]
    assert refused[0] == (
        "its destination 127.0.0.1 is loopback (allow it with clawbench_allow_private)"
    )
    assert refused[1] and "is loopback" in refused[1]


@pytest.mark.parametrize(
    ("allow", "passes"),
    [
        (["127.0.0.1"], True),
        (["127.0.0.0/8"], True),
        (["127.0.0.1:1"], False),
        (["10.0.0.0/8"], False),
    ],
)
def test_an_allowed_private_destination_passes(
    launch, tmp_path, private: Upstream, allow: list[str], passes: bool
) -> None:
    run = launch(write_task(tmp_path / "task", CHECKOUT_TASK), clawbench_allow_private=allow)
    result = run.curl(f"http://127.0.0.1:{private.port}/page")
    assert (result.status == "200") is passes
    assert len(private.requests) == int(passes)
    (entry,) = run.log()
    assert (entry.refused is None) is passes


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is cloud metadata"),
        ("http://2852039166/latest/meta-data/", "169.254.169.254 is cloud metadata"),
        ("http://[::ffff:169.254.169.254]/latest/", "169.254.169.254 is cloud metadata"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "fd00:ec2::254 is cloud metadata"),
        ("http://169.254.10.1/", "169.254.10.1 is link-local"),
        ("http://10.0.0.1/", "10.0.0.1 is private"),
        ("http://192.168.1.1:8080/", "192.168.1.1 is private"),
        ("http://100.64.0.1/", "100.64.0.1 is private"),
        ("https://169.254.169.254/latest/", "169.254.169.254 is cloud metadata"),
    ],
)
def test_metadata_link_local_and_private_addresses_are_refused(
    launch, tmp_path, url: str, kind: str
) -> None:
    run = launch(write_task(tmp_path / "task", CHECKOUT_TASK))
    assert run.curl(url).status == "000"
    (entry,) = run.log()
    assert entry.refused == f"its destination {kind} (allow it with clawbench_allow_private)"
    log = run.proxy.log_path.read_text()
    assert "loopback_only: refused" not in log  # refused by the addon, before any connection


def test_a_name_that_moves_to_a_private_address_after_the_check_is_cut(
    tmp_path, mitm_confdir, private: Upstream, curl: str
) -> None:
    """DNS rebinding: the request passed its check (127.0.0.2 is allowed here), the connection
    lands on 127.0.0.1 (a test addon moves it to `localhost` after the check, as a changed DNS
    answer would). The connected address is checked too: cut before a byte is written."""
    task = write_task(tmp_path / "task", CHECKOUT_TASK)
    proxy = start_proxy(
        task, tmp_path / "data", confdir=mitm_confdir, extra_args=["-s", str(REBIND)],
        options={"clawbench_allow_private": "127.0.0.2"}, quiet=False,
    )  # fmt: skip
    try:
        run = Run(proxy, tmp_path / "data", private)
        got = run.curl("-H", "X-Rebind-To: localhost", f"http://127.0.0.2:{private.port}/x")
        assert got.status == "502"
        assert private.requests == []  # connected (the upstream may never see it), then cut
        assert "closed a connection to ('localhost'" in proxy.log_path.read_text()
        (entry,) = run.log()
        assert entry.refused is None  # the request itself passed; its connection did not
    finally:
        proxy.stop()
