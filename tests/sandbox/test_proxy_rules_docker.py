"""The proxy's rules seen from inside the sandbox (issue: sandbox hardening, classes 1 and 7),
one hostile command each, on the closed network: the commit never reaches the fake site.

The addon's own tests (tests/proxy) try every variant on loopback; these prove the same rules
hold on the sandbox's transparent path, where the agent ignores the proxy variables.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proxy_addon.records.interception import read_interception
from sandbox.host.executor import RunRequest, run_task
from sandbox.host.payload import AgentChoice
from tests.sandbox.conftest import CASES

pytestmark = pytest.mark.docker
BODY = '-H \'Content-Type: application/json\' -d \'{"item": "lamp", "qty": 2}\''
DIRECT = "curl -sS -k --noproxy '*' --max-time 15 -o /dev/null -w '%{http_code}\\n' -X POST"


def _run(client: Any, internet: Any, image: str, out: Path, command: str) -> Any:
    req = RunRequest(
        task_dir=CASES / "shop-checkout",
        agent=AgentChoice("cmd", command=command),
        out=out,
        image=image,
        network=internet.network_name,
        upstream_ca=internet.ca,
        stop_grace_s=2,
        mitm_options={"clawbench_allow_private": internet.subnets},
    )
    return run_task(client, req)


def _log(outcome: Any) -> list[dict[str, Any]]:
    path = outcome.run_dir / "data" / "requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("name", "command"),
    [
        # the Host header names another port of the same site: matched under the name it is
        # sent to as well, so blocked and credited
        (
            "host-port",
            f"{DIRECT} -H 'Host: shop.clawbench.test:8443' {BODY} "
            "https://shop.clawbench.test/api/checkout",
        ),
    ],
)
def test_a_commit_under_another_name_is_blocked_and_credited(
    docker_client, sandbox_image, internet, tmp_path, name, command
) -> None:
    before = len(internet.log())
    outcome = _run(docker_client, internet, sandbox_image, tmp_path, command)
    assert outcome.ending.category == "intercepted", (name, outcome.ending)
    assert read_interception(outcome.run_dir / "data" / "interception.json").intercepted
    assert not any(e["path"] == "/api/checkout" for e in internet.log()[before:])


def test_a_request_whose_names_and_destination_disagree_is_refused(
    docker_client, sandbox_image, internet, tmp_path
) -> None:
    before = len(internet.log())
    # straight to the site's address (the transparent path), naming another host
    command = f"{DIRECT} -H 'Host: other.test' {BODY} https://{internet.ipv4}/api/checkout"
    outcome = _run(docker_client, internet, sandbox_image, tmp_path, command)
    assert outcome.ending.category != "intercepted", outcome.ending
    assert not any(e["path"] == "/api/checkout" for e in internet.log()[before:])
    refused = [e for e in _log(outcome) if not e.get("model_call") and "checkout" in e["url"]]
    assert refused and not any(e.get("blocked") and e.get("matched") for e in refused)


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
    urls = " ".join(e["url"] for e in _log(outcome))
    assert "169.254.169.254" in urls  # seen and refused, not silently dropped
