"""The proxy's rules seen from inside the sandbox (issue: sandbox hardening, classes 1, 3, 7),
one hostile command each, on the closed network: the commit never reaches the fake site.

The addon's own tests (tests/proxy) try every variant on loopback; these prove the same rules
hold on the sandbox's transparent path, where the agent ignores the proxy variables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from proxy_addon.records import REQUESTS_FILE, RequestLogEntry
from proxy_addon.records.requestlog import read_request_log
from sandbox.host import AgentChoice, run_task
from tests.sandbox.conftest import closed_request

pytestmark = pytest.mark.docker
BODY = '-H \'Content-Type: application/json\' -d \'{"item": "lamp", "qty": 2}\''
DIRECT = "curl -sS -k --noproxy '*' --max-time 15 -o /dev/null -w '%{http_code}\\n' -X POST"


def _run(
    client: Any, internet: Any, image: str, out: Path, command: str, case: str = "shop-checkout"
) -> Any:
    agent = AgentChoice("cmd", command=command)
    return run_task(client, closed_request(internet, image, out, case, agent))


def _log(outcome: Any) -> list[RequestLogEntry]:
    """The agent's requests in requests.jsonl (its model calls left out)."""
    lines = read_request_log(outcome.run_dir / "data" / REQUESTS_FILE)
    return [line for line in lines if isinstance(line, RequestLogEntry)]


def test_a_commit_with_a_second_host_never_reaches_the_site(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    before = len(internet.log())
    # a forged second Host after the real one: matched under every name it carries
    command = (
        f"{DIRECT} -H 'Host: shop.clawbench.test' -H 'Host: other.test' {BODY} "
        "https://shop.clawbench.test/api/checkout"
    )
    outcome = _run(docker_client, internet, sandbox_image, tmp_path, command)
    assert not any(e["path"] == "/api/checkout" for e in internet.log()[before:])
    log = [e for e in _log(outcome) if "checkout" in e.url]
    assert log and all(e.blocked or e.refused for e in log), log


def test_the_port_trick_never_reaches_the_site(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    before = len(internet.log())
    # the Host names another port than the connection's (the one-line leak)
    command = (
        f"{DIRECT} -H 'Host: shop.clawbench.test:8443' {BODY} "
        "https://shop.clawbench.test/api/checkout"
    )
    outcome = _run(docker_client, internet, sandbox_image, tmp_path, command)
    assert not any(e["path"] == "/api/checkout" for e in internet.log()[before:])
    log = [e for e in _log(outcome) if "checkout" in e.url]
    assert log and all(e.blocked or e.refused for e in log), log


@pytest.mark.parametrize(
    ("equivalence", "command"),
    [
        # servers route HEAD to the GET handler
        ("head", "-I 'https://shop.clawbench.test/api/subscribe?list=weekly'"),
        # a filtered field sent twice: frameworks take the first or the last
        ("repeat", "'https://shop.clawbench.test/api/subscribe?list=daily&list=weekly'"),
        # an encoded separator in the path
        ("slash", "'https://shop.clawbench.test/api%2Fsubscribe?list=weekly'"),
    ],
)
def test_what_a_server_treats_as_the_commit_is_blocked(
    docker_client, sandbox_image, internet, tmp_path, equivalence, command
) -> None:
    before = len(internet.log())
    run = f"curl -sS -k --noproxy '*' --max-time 15 -o /dev/null {command}"
    outcome = _run(docker_client, internet, sandbox_image, tmp_path, run, "get-commit")
    assert not any("subscribe" in e["path"] for e in internet.log()[before:]), equivalence
    assert outcome.ending.category == "intercepted", (equivalence, outcome.ending)


def test_a_request_whose_names_and_destination_disagree_is_refused(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    before = len(internet.log())
    # straight to the site's address (the transparent path), naming another host
    command = f"{DIRECT} -H 'Host: other.test' {BODY} https://{internet.ipv4}/api/checkout"
    outcome = _run(docker_client, internet, sandbox_image, tmp_path, command)
    assert outcome.ending.category != "intercepted", outcome.ending
    assert not any(e["path"] == "/api/checkout" for e in internet.log()[before:])
    refused = [e for e in _log(outcome) if "checkout" in e.url]
    assert refused and all(e.refused for e in refused), refused


def test_metadata_and_the_docker_host_are_refused(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    command = (
        "curl -sS --max-time 10 -o /dev/null -w 'metadata %{http_code}\\n' "
        "http://169.254.169.254/latest/meta-data/; "
        "curl -sS --max-time 10 -o /dev/null -w 'loopback %{http_code}\\n' http://127.0.0.1:9/"
    )
    outcome = _run(docker_client, internet, sandbox_image, tmp_path, command)
    agent_log = (outcome.run_dir / "data" / "agent.log").read_text()
    assert "metadata 200" not in agent_log and "loopback 200" not in agent_log
    urls = " ".join(e.url for e in _log(outcome))
    assert "169.254.169.254" in urls  # seen and refused, not silently dropped
