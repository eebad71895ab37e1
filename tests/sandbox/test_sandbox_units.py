"""The sandbox's pure parts, table-tested: firewall rules, names, verdicts, the agent's view."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import subprocess
import tarfile
import threading
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from proxy_addon.addon.launcher import MASTER
from proxy_addon.records import (
    Category,
    Ending,
    RunMeta,
    Stopped,
    StopReason,
    classify,
    find_task_dirs,
    new_run_dir,
    runs_of,
    status_of,
)
from proxy_addon.records.layout import run_dir_name
from proxy_addon.tasks import load_task, parse_task
from sandbox.agents import ScriptError, load_script
from sandbox.agents.scripted import expectation_met, send
from sandbox.cli import main as cli_main
from sandbox.container import firewall
from sandbox.container.agent import watch
from sandbox.container.contract import SandboxReport, Timings
from sandbox.container.proxy import mitmdump_argv
from sandbox.container.submit import SubmitHandler
from sandbox.container.trust import agent_env
from sandbox.host import FileEntry, files_tar
from sandbox.host.image import build_context, build_failure, host_ca_bundle
from sandbox.runs import RunOutcome, agent_view, done_line
from sandbox.runs.agentview import instruction_text, needs_submit_page
from tests.support.upstream import start_upstream

CASES = Path(__file__).resolve().parent / "cases"
POLICY = firewall.Policy(
    agent_uid=1000,
    proxy_uid=13,
    transparent_port=8081,
    nameservers=("127.0.0.11", "10.0.0.2", "fd00::53"),
    submit_port=7878,
)


def _task(**over: object) -> dict:
    base = {
        "instruction": "Buy a lamp.",
        "time_limit": 1,
        "eval_schema": {"url_pattern": "shop\\.test/api/buy", "method": "POST"},
    }
    return {**base, **over}


# -- firewall ------------------------------------------------------------------------------------


def _position(rules: list[list[str]], *needle: str) -> int:
    for i, rule in enumerate(rules):
        if all(part in rule for part in needle):
            return i
    raise AssertionError(f"no rule with {needle} in {rules}")


@pytest.mark.parametrize("family", [4, 6])
def test_filter_rules_accept_before_the_counted_drop(family: int) -> None:
    rules = firewall.filter_rules(POLICY, family)
    drop_jump = _position(rules, "-A", firewall.OUT, "-j", firewall.DROP)
    for needle in (("-o", "lo", "ACCEPT"), ("--uid-owner", "13", "ACCEPT"), ("DNAT", "ACCEPT")):
        assert _position(rules, *needle) < drop_jump
    # The drop chain resets TCP (fail fast) and drops everything else, UDP included.
    assert ["-A", firewall.DROP, "-p", "tcp", "-j", "REJECT", "--reject-with", "tcp-reset"] in rules
    assert ["-A", firewall.DROP, "-j", "DROP"] in rules
    # only the agent's packets reach the counted chain (egress_blocked)
    counted = ["-m", "owner", "--uid-owner", str(POLICY.agent_uid), "-j", firewall.AGENT_DROP]
    to_counted = _position(rules, "-A", firewall.DROP, *counted)
    assert to_counted < _position(rules, "-A", firewall.DROP, "-j", "DROP")
    assert ["-A", firewall.AGENT_DROP, "-j", "DROP"] in rules
    assert rules[-2:] == [["-I", "OUTPUT", "1", "-j", firewall.OUT], ["-P", "OUTPUT", "DROP"]]
    loopback = "127.0.0.1" if family == 4 else "::1"
    assert loopback in rules[_position(rules, "DNAT", "ACCEPT")]
    # No rule lets the agent out except DNS to a resolver of its own family.
    agent_rules = [r for r in rules if "1000" in r and firewall.AGENT_DROP not in r]
    want_ns = "10.0.0.2" if family == 4 else "fd00::53"
    assert agent_rules and all(want_ns in r and "53" in r for r in agent_rules)


def test_only_ipv6_allows_neighbour_discovery() -> None:
    assert not any("ipv6-icmp" in r for r in firewall.filter_rules(POLICY, 4))
    kinds = {r[-3] for r in firewall.filter_rules(POLICY, 6) if "ipv6-icmp" in r}
    assert kinds == set(firewall.ICMPV6_ALLOWED)


@pytest.mark.parametrize(
    ("submit_port", "family", "expect_submit"),
    [(7878, 4, "127.0.0.1"), (7878, 6, "::1"), (None, 4, None)],
)
def test_nat_rules_redirect_web_and_submit(submit_port, family, expect_submit) -> None:
    policy = firewall.Policy(1000, 13, 8081, submit_port=submit_port)
    rules = firewall.nat_rules(policy, family)
    web = rules[_position(rules, "80,443")]
    assert web[-4:] == ["-j", "REDIRECT", "--to-ports", "8081"] and "1000" in web
    submit = [r for r in rules if "7878" in r]
    if expect_submit:
        assert len(submit) == 1 and expect_submit in submit[0]
    else:
        assert submit == []
    assert rules[-1] == ["-I", "OUTPUT", "1", "-j", firewall.NAT]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nameserver 127.0.0.11\noptions ndots:0\n", ("127.0.0.11",)),
        ("# comment\nnameserver 10.0.0.2\nnameserver fe80::1%eth0\n", ("10.0.0.2", "fe80::1")),
        ("nameserver not-an-ip\nsearch x\n", ()),
    ],
)
def test_nameservers_from(text: str, expected: tuple[str, ...]) -> None:
    assert firewall.nameservers_from(text) == expected


def test_parse_counters_sums_packet_column() -> None:
    listing = """Chain CLAWBENCH_DROP (1 references)
    pkts      bytes target     prot opt in     out     source               destination
       3      180 REJECT  tcp  --  *  *  0.0.0.0/0  0.0.0.0/0  reject-with tcp-reset
       2       58 DROP       all  --  *      *       0.0.0.0/0            0.0.0.0/0
"""
    assert firewall.parse_counters(listing) == 5


# -- the agent's view ----------------------------------------------------------------------------


def test_instruction_lists_extra_info_files_like_the_reference() -> None:
    task = load_task(CASES / "shop-checkout")
    text = instruction_text(task)
    assert text.startswith(task.instruction)
    assert text.endswith(
        "\nAdditional files are also available under /my-info/ for this task:\n"
        "- shopping-list.txt: what to buy"
    )
    assert "eval_schema" not in text and "api/checkout" not in text


def test_agent_view_reports_missing_and_escaping_files(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("x")
    (tmp_path.parent / "secret.txt").write_text("no")
    task = parse_task(
        _task(
            extra_info=[
                {"path": "ok.txt", "description": "fine"},
                {"path": "gone.txt", "description": "missing"},
                {"path": "../secret.txt", "description": "escapes"},
                {"path": "/etc/passwd", "description": "absolute"},
            ]
        )
    )
    view = agent_view(task, tmp_path)
    assert list(view.files) == ["ok.txt"]
    joined = "\n".join(view.warnings)
    assert "extra_info[1].path" in joined and "missing" in joined
    assert "escapes the task directory" in joined and "must be relative" in joined


def test_submit_page_only_for_claw_eval_tasks(reference_corpus: Path) -> None:
    for path in reference_corpus.glob("*/*/task.json"):
        task = load_task(path)
        assert needs_submit_page(task) == (path.parts[-3] == "claw-eval"), path


def test_agent_env_sets_proxy_in_both_cases_and_never_bypasses_loopback() -> None:
    env = agent_env({"OPENAI_API_KEY": "k", "HTTP_PROXY": "http://custom:1"}, "do it", "/f")
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTPS_PROXY", "ALL_PROXY"):
        assert env[name] == "http://127.0.0.1:8080"
    assert env["HTTP_PROXY"] == "http://custom:1"  # the user's --env wins
    assert env["NO_PROXY"] == env["no_proxy"] == ""
    assert env["NODE_USE_ENV_PROXY"] == "1" and env["CLAWBENCH_INSTRUCTION"] == "do it"
    assert "<-loopback>" in env["CLAWBENCH_CHROMIUM_FLAGS"]
    assert {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS"} <= set(env)


# -- names and layout ----------------------------------------------------------------------------


def test_run_dirs_follow_the_reference_layout(tmp_path: Path) -> None:
    assert run_dir_name("codex", "v2-001-x", "openai/gpt-5:high", "20260101-000000") == (
        "codex-v2-001-x-openai--gpt-5--high-20260101-000000"
    )
    first = new_run_dir(tmp_path, "h", "case", "a/b", "20260101-000000")
    second = new_run_dir(tmp_path, "h", "case", "a/b", "20260101-000000")
    other = new_run_dir(tmp_path, "h", "case-2", "a/b", "20260101-000001")
    assert first.parent == tmp_path / "a--b" and second.name.endswith("-2")
    assert runs_of(tmp_path, "h", "case", "a/b") == [first, second]
    assert runs_of(tmp_path, "h", "case-2", "a/b") == [other]


def test_discover_cases_orders_by_task_number(tmp_path: Path) -> None:
    for name in ("v2-010-b", "v2-002-a", "zeta", "ce-T001-x"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "task.json").write_text("{}")
    assert [p.name for p in find_task_dirs(tmp_path)] == [
        "ce-T001-x",
        "v2-002-a",
        "v2-010-b",
        "zeta",
    ]
    assert find_task_dirs(tmp_path / "zeta") == [tmp_path / "zeta"]


# -- verdicts ------------------------------------------------------------------------------------


API = "model API failed: no reply in 3 call(s) (3 auth); last: HTTP 401 from https://m.test/v1"


def _report(reason: str, code: int | None = 0, exec_error: str | None = None) -> Stopped:
    """How a container's report.json reaches classify."""
    report = SandboxReport(
        stop_reason=reason,
        agent_exit_code=code,
        agent_exec_error=exec_error,
        timings=Timings(entrypoint_started=0),
    )
    return report.stopped()


@pytest.mark.parametrize(
    ("kwargs", "category", "stop_reason", "file_reason"),
    [
        (
            {"intercepted": True, "stopped": _report("intercepted")},
            "intercepted",
            "intercepted",
            "unknown",
        ),
        ({"intercepted": True, "stopped": None}, "intercepted", "intercepted", "unknown"),
        (
            {"intercepted": False, "stopped": _report("agent_exited")},
            "model_not_intercepted",
            "agent_exited",
            "agent_exited",
        ),
        (
            {"intercepted": False, "stopped": _report("time_limit_exceeded")},
            "model_not_intercepted",
            "time_limit_exceeded",
            "time_limit_exceeded",
        ),
        (
            {"intercepted": False, "stopped": _report("proxy_failed")},
            "infra_failure",
            "proxy_failed",
            "proxy_failed",
        ),
        (
            {"intercepted": False, "stopped": _report("container_failed")},
            "infra_failure",
            "container_failed",
            "container_failed",
        ),
        (  # the launcher's exec failed: the agent never ran
            {"intercepted": False, "stopped": _report("agent_exited", 127, "x: No such file")},
            "infra_failure",
            "agent_exited",
            "agent_exited",
        ),
        (
            {"intercepted": False, "stopped": _report("agent_exited", 126, "x: Permission denied")},
            "infra_failure",
            "agent_exited",
            "agent_exited",
        ),
        (  # it started and chose its status: 126 and 127 are the model's like any other
            {"intercepted": False, "stopped": _report("agent_exited", 127)},
            "model_not_intercepted",
            "agent_exited",
            "agent_exited",
        ),
        (
            {"intercepted": False, "stopped": _report("agent_exited", 126)},
            "model_not_intercepted",
            "agent_exited",
            "agent_exited",
        ),
        (
            {"intercepted": False, "stopped": None},
            "infra_failure",
            "container_failed",
            "container_failed",
        ),
        (
            {"intercepted": False, "stopped": _report("agent_exited"), "host_timeout": True},
            "infra_failure",
            "host_timeout",
            "container_failed",
        ),
        (
            {"intercepted": False, "stopped": None, "setup_failure": "task_data: bad"},
            "infra_failure",
            "task_data",
            "unknown",
        ),
        (
            {"intercepted": False, "stopped": None, "setup_failure": "engine: image missing"},
            "infra_failure",
            "container_failed",
            "container_failed",
        ),
        (  # --backend ray: the run's node went away; the reference's list has no such reason
            {"intercepted": False, "stopped": None, "setup_failure": "node_lost: node x left"},
            "infra_failure",
            "node_lost",
            "container_failed",
        ),
        # the proxy's record says the model API failed the run's own calls
        (
            {"intercepted": False, "stopped": _report("agent_exited"), "model_api": API},
            "model_api_failure",
            "agent_exited",
            "agent_exited",
        ),
        (
            {"intercepted": False, "stopped": _report("time_limit_exceeded"), "model_api": API},
            "model_api_failure",
            "time_limit_exceeded",
            "time_limit_exceeded",
        ),
        # an interception outranks it; the sandbox's own failure is named first
        ({"intercepted": True, "stopped": None, "model_api": API}, "intercepted", "intercepted",
         "unknown"),
        ({"intercepted": False, "stopped": _report("proxy_failed"), "model_api": API},
         "infra_failure", "proxy_failed", "proxy_failed"),
    ],
)  # fmt: skip
def test_classify(kwargs, category, stop_reason, file_reason) -> None:
    verdict = classify(**kwargs)
    assert (verdict.category, verdict.stop_reason) == (category, stop_reason)
    assert verdict.interception_reason == file_reason
    codes = {"intercepted": 0, "model_not_intercepted": 1, "infra_failure": 2}
    assert verdict.exit_code == codes.get(category, 2)
    infra = category in ("infra_failure", "model_api_failure")
    assert (verdict.failure_reason is not None) == infra
    if category == "model_api_failure":
        assert verdict.failure_reason == API


@pytest.mark.parametrize(
    ("meta", "status"),
    [
        ({"intercepted": True, "result_category": "intercepted"}, "intercepted"),
        ({"intercepted": False, "result_category": "model_not_intercepted"}, "failed"),
        ({"intercepted": False, "result_category": "infra_failure"}, "error"),
        ({"intercepted": True, "judge_match": True, "final_pass": True}, "passed"),
        ({"intercepted": True, "judge_match": False, "final_pass": False}, "failed"),
        ({"intercepted": True, "judge_match": None, "final_pass": False}, "judge_inconclusive"),
        (
            {
                "intercepted": True,
                "result_category": "judge_cannot_tell",
                "judge_match": False,
                "judge_verdict": "cannot_tell",
                "final_pass": False,
            },
            "judge_inconclusive",
        ),
    ],
)
def test_batch_status_of_a_run(meta: dict, status: str) -> None:
    assert status_of(RunMeta.model_validate(meta)) == status


# -- the scripted agent --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "suffix", "message"),
    [
        ('[{"url": "ftp://x"}]', ".json", "entry[0].url"),
        ('[{"url": "http://x", "json": {}, "body": "a"}]', ".json", "at most one of"),
        ('[{"url": "http://x", "bogus": 1}]', ".json", "entry[0].bogus"),
        ("[{url: [}", ".yaml", "not valid yaml"),
        ('{"url": "http://x"}', ".json", "valid list"),
    ],
)
def test_script_errors_name_file_and_entry(tmp_path: Path, content, suffix, message) -> None:
    path = tmp_path / f"script{suffix}"
    path.write_text(content)
    with pytest.raises(ScriptError) as err:
        load_script(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_scripted_agent_sends_bodies_and_reports_outcomes(tmp_path: Path) -> None:
    up = start_upstream()
    try:
        path = tmp_path / "s.yaml"
        path.write_text(
            f"- {{method: POST, url: '{up.url}/a', json: {{qty: 2}}, expect: 200}}\n"
            f"- {{method: PUT, url: '{up.url}/b', form: {{x: ['1', '2']}}, proxy: false}}\n"
            f"- {{url: 'http://127.0.0.1:1/closed', expect: blocked, timeout: 2}}\n"
        )
        reqs = load_script(path)
        import ssl

        outcomes = [send(r, ssl.create_default_context()) for r in reqs]
    finally:
        up.close()
    assert [r.method for r in up.requests] == ["POST", "PUT"]
    assert json.loads(up.requests[0].body) == {"qty": 2}
    assert up.requests[1].body == b"x=1&x=2"
    assert outcomes[0]["status"] == 200 and "error" in outcomes[2]
    assert [expectation_met(r.expect, o) for r, o in zip(reqs, outcomes, strict=True)] == [
        True,
        True,
        True,
    ]
    assert not expectation_met(200, {"error": "x"}) and not expectation_met(
        "blocked", {"status": 1}
    )


# -- build context, tars, the submit page, the CLI ---------------------------------------------


def test_build_context_is_small_reproducible_and_keeps_the_bundle_out_of_src(tmp_path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    first, second = build_context(ca_bundle=bundle), build_context(ca_bundle=bundle)
    assert first == second
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(first))) as tar:
        names = tar.getnames()
        assert tar.extractfile("build-ca.pem").read() == bundle.read_bytes()
    assert {"Dockerfile", "build-ca.pem", "constraints.txt", "src/pyproject.toml"} <= set(names)
    assert (
        "src/proxy_addon/clawbench.py" in names and "src/sandbox/container/entrypoint.py" in names
    )
    tops = {n.split("/")[1] for n in names if n.startswith("src/") and n.count("/") > 1}
    assert tops == {"proxy_addon", "scorer", "sandbox"}
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    not_pem = tmp_path / "x.pem"
    not_pem.write_text("hello")
    with pytest.raises(Exception, match="no PEM certificate"):
        build_context(ca_bundle=not_pem)


def test_the_build_trusts_the_bundle_this_machine_names_and_says_the_fix_for_tls(tmp_path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
    missing = str(tmp_path / "gone.pem")
    assert host_ca_bundle({}) is None
    assert host_ca_bundle({"SSL_CERT_FILE": missing, "PIP_CERT": ""}) is None
    assert host_ca_bundle({"SSL_CERT_FILE": missing, "REQUESTS_CA_BUNDLE": str(bundle)}) == (
        "REQUESTS_CA_BUNDLE",
        bundle,
    )
    assert host_ca_bundle({"PIP_CERT": str(bundle), "SSL_CERT_FILE": "/etc/hostname"}) == (
        "PIP_CERT",
        bundle,
    )
    # what pip and apt print behind a proxy whose CA the build lacks, then the builder's error
    pip = (
        "\x1b[91mWARNING: Retrying (Retry(total=0)) after connection broken by 'SSLError("
        "SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
        "self-signed certificate in certificate chain (_ssl.c:1029)'))': /simple/mitmproxy/\n"
    )
    apt = (
        "Err:1 https://deb.example trixie InRelease\n"
        "  Certificate verification failed: The certificate is NOT trusted.\n"
    )
    resolution = "ERROR: Cannot install mitmproxy<13 and >=12 because these package versions\n"
    error = "The command '/bin/sh -c set -eu;\n pip install' returned a non-zero code: 1"
    for output in ([pip, resolution], [apt, "E: Unable to locate package nodejs\n"]):
        said = build_failure(error, output)
        assert said.startswith("The command '/bin/sh -c set -eu; pip install' returned")
        assert output[-1].strip() in said and "\n" not in said and "\x1b" not in said
        assert said.endswith("give --ca-bundle FILE, a PEM bundle with the CA of this network's "
                             "TLS-inspecting proxy")  # fmt: skip
    assert "--ca-bundle" not in build_failure(error, ["E: Unable to locate package nodejs\n"])


def test_files_tar_keeps_modes_and_owners() -> None:
    raw = files_tar(
        [
            FileEntry("/clawbench/task", None, 0o700),
            FileEntry("/clawbench/task/task.json", b"{}", 0o400, 13, 13),
        ]
    )
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        d, f = tar.getmembers()
    assert (d.name, d.isdir(), d.mode) == ("clawbench/task", True, 0o700)
    assert (f.name, f.mode, f.uid, f.gid, f.size) == ("clawbench/task/task.json", 0o400, 13, 13, 2)


def test_submit_page_serves_the_form_and_accepts_the_answer() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SubmitHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        page = opener.open(f"{base}/submit").read().decode()
        reply = opener.open(
            urllib.request.Request(
                f"{base}/api/task-submit",
                data=b'{"answer": "42"}',
                headers={"Content-Type": "application/json"},
                method="POST",
            )
        ).read()
    finally:
        server.shutdown()
        server.server_close()
    assert 'action="/api/task-submit"' in page and 'fetch("/api/task-submit"' in page
    assert "JSON.stringify({answer:" in page
    assert json.loads(reply)["status"] == "received"


QUICK = str(CASES / "quick-null")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", QUICK, "--agent", "scripted"], "needs --script"),
        (["run", QUICK, "--script", "x.json"], "--script goes with --agent scripted"),
        (["run", QUICK, "--env", "CLAWBENCH_SURELY_UNSET_VAR"], "not set in this environment"),
        (["run", QUICK, "--mitm-set", "novalue"], "use KEY=VALUE"),
        (["run", QUICK, "--agent", "scripted", "--script", "/nonexistent.json"], "cannot read"),
        (["run", QUICK, "--upstream-ca", "/nonexistent.pem"], "not a file"),
        (["run", "/nonexistent/task"], "no such task directory"),
        (["batch", f"{QUICK}/task.json"], "no */task.json in it"),
        (["batch", QUICK, "--concurrency", "0"], "--concurrency: must be at least 1"),
        (["batch", QUICK, "--concurrency", "two"], "'two' is not a whole number"),
        (["run", QUICK, "--stop-grace", "-1"], "--stop-grace: must be a finite number"),
        (["run", QUICK, "--stop-grace", "inf"], "--stop-grace: must be a finite number"),
        (["run", QUICK, "--proxy-timeout", "0"], "--proxy-timeout: must be a finite number"),
        (["batch", QUICK, "--proxy-timeout", "nan"], "--proxy-timeout: must be a finite"),
        (["run", QUICK, "--proxy-timeout", "soon"], "'soon' is not a number of seconds"),
        (["run", QUICK, "--agent-cmd", " "], "--agent-cmd: the command is empty"),
        (["run"], "required: TASK_DIR"),
        (["run", QUICK, "--memory", "lots"], "'lots' is not a size"),
        (["run", QUICK, "--memory", "4"], "argument --memory: '4' has no unit: write 4g"),
        (["batch", QUICK, "--disk", "512"], "argument --disk: '512' has no unit"),
        (["run", QUICK, "--memory", "1m"], "argument --memory: 1m is below the least"),
        (["run", QUICK, "--harness", "browser-use"], "--harness browser-use needs --model NAME"),
        (["run", QUICK, "--cpus", "0"], "must be a number of CPUs > 0"),
        (["run", QUICK, "--harness", "browser-use", "--model", "m"], "give --models-yaml FILE"),
        (["run", QUICK, "--harness", "claude-code", "--agent", "scripted"], "drop --agent"),
    ],
)
def test_cli_usage_errors_are_one_line_and_exit_2(argv, message, capsys) -> None:
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and err.startswith("clawbench-sandbox: ")


@pytest.mark.parametrize("command", ["run", "batch"])
def test_bad_numbers_are_refused_before_any_run_directory_exists(command, tmp_path) -> None:
    out = tmp_path / "out"
    for bad in (["--stop-grace", "-1"], ["--proxy-timeout", "0"], ["--agent-cmd", ""]):
        assert cli_main([command, QUICK, "--out", str(out), *bad]) == 2
    assert not out.exists()


@pytest.mark.parametrize("command", ["run", "batch"])
@pytest.mark.parametrize(
    ("judge", "message"),
    [
        (["--judge-model", "nosuch"], "judge model 'nosuch' not found"),
        (["--judge-model", "deepseek-v4-pro"], "DEEPSEEK_API_KEY is not set"),
        (["--judge-model", "x", "--models-yaml", "/nonexistent.yaml"], "/nonexistent.yaml"),
    ],
)
def test_a_judge_that_does_not_resolve_stops_before_any_container(
    command, judge, message, tmp_path, monkeypatch, capsys
) -> None:
    # No engine at all: the judge must be refused before Docker is even contacted.
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    out = tmp_path / "out"
    assert cli_main([command, QUICK, "--out", str(out), *judge]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("clawbench-sandbox: --judge-model: ") and "\n" not in err
    assert message in err
    assert not out.exists()


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        cli_main([*argv, "--help"])
    assert exited.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines at will


def test_help_shows_defaults_and_exit_codes(capsys) -> None:
    batch = _help(capsys, "batch")
    for text in (
        "--concurrency N containers running at once (default: 2; --backend ray: as many as "
        "the cluster's clawbench_docker resources allow)",
        "--backend {local,ray}",
        "output directory (default: out)",
        "(default: 10)",  # --stop-grace
        "(default: 60)",  # --proxy-timeout
        "skipped by default",
        "exit codes: 0 every run finished without an infra failure",
        "130 interrupted",
    ):
        assert text in batch, text
    run = _help(capsys, "run")
    for code in ("0 intercepted", "1 not intercepted", "2 setup or infra error", "130 interrupted"):
        assert code in run and code in _help(capsys), code
    assert "(default: out)" in run and "--concurrency" not in run
    assert "exit codes: 0 built" in _help(capsys, "build")


@pytest.mark.parametrize(("ipv6", "upstream_ca"), [(False, False), (True, True)])
def test_mitmdump_listens_on_loopback_only_and_takes_user_options_last(ipv6, upstream_ca) -> None:
    routes = ["a.test=http://10.0.0.1:80", "b.test=http://10.0.0.2:80"]
    options = {"body_size_limit": "64m", "clawbench_route": routes}
    argv = mitmdump_argv(ipv6=ipv6, upstream_ca=upstream_ca, options=options, submit_page=False)
    modes = [argv[i + 1] for i, a in enumerate(argv) if a == "--mode"]
    expected = ["regular@127.0.0.1:8080", "transparent@127.0.0.1:8081"]
    assert modes == expected + (["transparent@::1:8081"] if ipv6 else [])
    sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
    assert "clawbench_task=/clawbench/task/task.json" in sets
    assert ("ssl_verify_upstream_trusted_ca=/clawbench/upstream-ca.pem" in sets) == upstream_ca
    assert not any(s.startswith("ssl_insecure") for s in sets)
    assert "body_size_limit=64m" in sets and "body_size_limit=32m" not in sets  # --mitm-set wins
    assert [s for s in sets if s.startswith("clawbench_route=")] == [
        f"clawbench_route={r}" for r in routes
    ]
    assert argv[1:3] == ["-m", MASTER] and "-s" not in argv  # the sandbox's proxy, the addon in it
    assert not any(s.startswith("clawbench_allow_private=") for s in sets)
    # the submit page on loopback is the one private destination the sandbox adds itself
    options = {"clawbench_allow_private": ["10.1.2.0/24"]}
    argv = mitmdump_argv(ipv6=ipv6, upstream_ca=upstream_ca, options=options, submit_page=True)
    sets = [argv[i + 1] for i, a in enumerate(argv) if a == "--set"]
    assert [s for s in sets if s.startswith("clawbench_allow_private=")] == [
        "clawbench_allow_private=10.1.2.0/24",
        "clawbench_allow_private=127.0.0.1:7878",
        "clawbench_allow_private=[::1]:7878",
    ]


def test_mitm_set_repeated_key_becomes_a_list() -> None:
    from sandbox.run_request import _mitm_options

    assert _mitm_options(["a=1", "r=x=http://h:1", "r=y=http://h:2"]) == {
        "a": "1",
        "r": ["x=http://h:1", "y=http://h:2"],
    }


def test_a_harness_model_is_resolved_before_any_container(tmp_path: Path, capsys) -> None:
    """--model names a models.yaml entry of the harness's API; its key is expanded here and
    never printed; anything wrong is one line, exit 2, and no run directory."""
    models = tmp_path / "models.yaml"
    models.write_text(
        "gpt-x:\n  base_url: https://api.example.test/v1\n  api_type: openai-completions\n"
        "  api_key: ${HARNESS_TEST_KEY_UNSET}\n"
        "claude-x:\n  base_url: https://api.example.test\n  api_type: anthropic-messages\n"
        "  api_key: sk-secret-claude\n"
    )
    out = tmp_path / "out"
    cases = [
        (["--harness", "browser-use", "--model", "nope"], "no entry 'nope'"),
        (["--harness", "browser-use", "--model", "gpt-x"], "HARNESS_TEST_KEY_UNSET is not set"),
        (["--harness", "browser-use", "--model", "claude-x"], "calls openai-completions"),
    ]
    for extra, message in cases:
        argv = ["run", QUICK, "--out", str(out), "--models-yaml", str(models), *extra]
        assert cli_main(argv) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
        assert "sk-secret-claude" not in err
    assert not out.exists()


def test_a_bad_agent_price_stops_before_any_container(tmp_path, monkeypatch, capsys) -> None:
    """The prices the scorer will read are checked with the judge, before any run."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    models = tmp_path / "models.yaml"
    models.write_text(
        "judge-x:\n  base_url: http://127.0.0.1:9/v1\n  api_type: openai-completions\n"
        "  api_key: k\nagent-x:\n  price_per_million_tokens: {input: 1}\n"
    )
    out = tmp_path / "out"
    judge = ["--judge-model", "judge-x", "--models-yaml", str(models)]
    assert cli_main(["run", QUICK, "--out", str(out), *judge]) == 2
    err = capsys.readouterr().err
    assert "entry 'agent-x' key 'price_per_million_tokens.output'" in err and str(models) in err
    assert not out.exists()


def test_a_corpus_with_tasks_that_do_not_load_stops_before_anything_starts(
    tmp_path, monkeypatch, capsys
) -> None:
    # No engine at all: the corpus must be refused before Docker is even contacted.
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")
    corpus = tmp_path / "corpus"
    shutil.copytree(CASES / "quick-null", corpus / "quick-null")
    for name, doc in {
        "bad-method": {"instruction": "x", "eval_schema": {"url_pattern": "a", "method": "SEND"}},
        "not-json": "{",
    }.items():
        (corpus / name).mkdir()
        text = doc if isinstance(doc, str) else json.dumps(doc)
        (corpus / name / "task.json").write_text(text)
    out = tmp_path / "out"
    assert cli_main(["batch", str(corpus), "--out", str(out)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 3 and all(line.startswith("clawbench-sandbox: ") for line in lines)
    assert f"{corpus}/bad-method/task.json: eval_schema.method" in lines[0]
    assert f"{corpus}/not-json/task.json" in lines[1]
    assert lines[2] == (
        f"clawbench-sandbox: 2 of 3 tasks in {corpus} do not load (above); fix them "
        f"(clawbench-tasks validate {corpus}) or pass --skip-invalid to run the rest"
    )
    assert not out.exists()


def test_the_line_per_run_says_why_an_infra_failure_happened() -> None:
    ending = Ending(
        Category.INFRA_FAILURE,
        StopReason.PROXY_FAILED,
        "the proxy did not become ready in 60 s:\n  mitmdump: address in use",
    )
    line = done_line(RunOutcome(Path("run"), ending, 1.0))
    assert line == (
        "infra_failure (proxy_failed: the proxy did not become ready in 60 s: mitmdump: "
        "address in use)"
    )
    quiet = Ending(Category.MODEL_NOT_INTERCEPTED, StopReason.AGENT_EXITED)
    assert done_line(RunOutcome(Path("run"), quiet, 1.0)) == "model_not_intercepted (agent_exited)"


def test_the_records_budget_used_up_by_the_agent_is_said_in_words(tmp_path: Path) -> None:
    from proxy_addon.records import REQUESTS_SUMMARY_FILE
    from proxy_addon.records.requestwriter import RequestLogSummary
    from sandbox.container.processes import capped_copy
    from sandbox.container.resources import records_filled

    log = tmp_path / "mitmdump.log"
    assert records_filled(tmp_path, log, 100) is None  # no proxy ran: nothing used up
    summary = RequestLogSummary(budget_bytes=1000, bytes_written=10)
    (tmp_path / REQUESTS_SUMMARY_FILE).write_text(summary.model_dump_json())
    log.write_bytes(b"x" * 100)
    assert records_filled(tmp_path, log, 100) is None
    summary.lines_shortened, summary.requests_not_logged = 7, 3
    (tmp_path / REQUESTS_SUMMARY_FILE).write_text(summary.model_dump_json())
    read_end, write_end = os.pipe()
    with log.open("wb") as out:
        copy = capped_copy(read_end, out, 100, "proxy")
        os.write(write_end, b"y" * 1000)
        os.close(write_end)
        copy.join(5)
    assert log.stat().st_size == 100 and log.read_bytes().startswith(b"y")
    assert records_filled(tmp_path, log, 100) == (
        "its records budget (requests.jsonl: 7 request(s) shortened, 3 only counted; "
        "mitmdump.log cut at 100 bytes)"
    )


@pytest.mark.parametrize(
    ("agent", "proxy", "stop_file", "interrupted", "reason"),
    [
        ("exit 0", "sleep 5", True, False, StopReason.INTERCEPTED),  # blocked, then it exited
        ("exit 0", "sleep 5", False, False, StopReason.AGENT_EXITED),
        ("sleep 5", "exit 1", False, False, StopReason.PROXY_FAILED),
        ("sleep 5", "sleep 5", False, True, StopReason.INTERRUPTED),
        ("sleep 5", "sleep 5", False, False, StopReason.TIME_LIMIT_EXCEEDED),
    ],
)
def test_the_container_and_the_demo_say_why_a_session_stopped_by_one_rule(
    tmp_path: Path, agent: str, proxy: str, stop_file: bool, interrupted: bool, reason: StopReason
) -> None:
    """sandbox.container.agent.watch, the one rule both executors use, on real processes."""
    stop = tmp_path / ".stop-requested"
    if stop_file:
        stop.touch()
    procs = [subprocess.Popen(["sh", "-c", cmd]) for cmd in (agent, proxy)]
    try:
        assert watch(procs[0], procs[1], stop, 0.5, lambda: interrupted) == reason
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
