"""clawbench_model_hosts values, the host a request names, and usage.json's arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy_addon.addon.modelhosts import is_model_host, parse_model_hosts, request_host
from proxy_addon.records import (
    AgentUsage,
    ModelCallLine,
    ModelUsage,
    RecordError,
    TokenCounts,
    add_call,
    read_usage,
)


@pytest.mark.parametrize(
    ("spec", "host"),
    [
        ("api.openai.com", ("api.openai.com", None)),
        ("API.OpenAI.com.", ("api.openai.com", None)),
        ("localhost:11434", ("localhost", 11434)),
        ("[::1]:8000", ("[::1]", 8000)),
        ("::1", ("[::1]", None)),
        ("https://api.deepseek.com", ("api.deepseek.com", 443)),
        ("https://api.anthropic.com/v1/", ("api.anthropic.com", 443)),
        ("http://172.17.0.1:8000/v1", ("172.17.0.1", 8000)),
        ("http://Model.Test", ("model.test", 80)),
        ("bücher.example", ("xn--bcher-kva.example", None)),
    ],
)
def test_parse_model_hosts(spec: str, host: tuple[str, int | None]) -> None:
    assert parse_model_hosts([spec]) == frozenset({host})


@pytest.mark.parametrize(
    "spec",
    ["api.openai.com/v1", "host:abc", "host:", "host:70000", "user@host", "ftp://host",
     "https://", "https:///v1", "a b", "host:80:90"],
)  # fmt: skip
def test_bad_model_hosts_are_named(spec: str) -> None:
    with pytest.raises(ValueError, match=r"clawbench_model_hosts .*HOST\[:PORT\]"):
        parse_model_hosts([spec])


def test_blank_values_are_skipped() -> None:
    assert parse_model_hosts(["", "  ", "a.test"]) == frozenset({("a.test", None)})


@pytest.mark.parametrize(
    ("scheme", "host_header", "host", "port", "named"),
    [
        ("https", "api.openai.com", "203.0.113.9", 443, ("api.openai.com", 443)),
        ("https", "API.openai.com:8443", "api.openai.com", 443, ("api.openai.com", 8443)),
        ("http", None, "model.test", 8080, ("model.test", 8080)),
        ("http", "model.test:x", "model.test", 80, None),  # malformed: never a model call
        ("http", "evil@model.test", "model.test", 80, None),
        ("http", "[::1]:9000", "::1", 9000, ("[::1]", 9000)),
    ],
)
def test_request_host(
    scheme: str,
    host_header: str | None,
    host: str,
    port: int,
    named: tuple[str, int] | None,
) -> None:
    assert request_host(scheme, host_header, host, port) == named


def test_is_model_host_port_rules() -> None:
    hosts = parse_model_hosts(["any.test", "one.test:8000"])
    assert is_model_host(hosts, "any.test", 443) and is_model_host(hosts, "any.test", 1)
    assert is_model_host(hosts, "one.test", 8000)
    assert not is_model_host(hosts, "one.test", 443)
    assert not is_model_host(hosts, "sub.any.test", 443)


def test_add_call_per_model() -> None:
    usage = AgentUsage()
    usage = add_call(usage, "m1", TokenCounts(input_tokens=10, output_tokens=2, cached_tokens=4))
    usage = add_call(usage, "m1", TokenCounts(input_tokens=5, output_tokens=1))
    usage = add_call(usage, "m2", None)
    usage = add_call(usage, None, None)
    assert usage.calls == 4
    assert usage.models["m1"] == ModelUsage(
        calls=2, input_tokens=15, output_tokens=3, cached_tokens=4
    )
    assert usage.models["m2"] == ModelUsage(calls=1, calls_without_usage=1)
    assert usage.models["unknown"] == ModelUsage(calls=1, calls_without_usage=1)
    assert usage.totals() == ModelUsage(
        calls=4, input_tokens=15, output_tokens=3, cached_tokens=4, calls_without_usage=2
    )


def test_read_usage(tmp_path: Path) -> None:
    path = tmp_path / "usage.json"
    assert read_usage(path) is None
    written = add_call(AgentUsage(), "m", TokenCounts(input_tokens=1))
    path.write_text(written.model_dump_json())
    assert read_usage(path) == written
    path.write_text('{"calls": 1, "models": {"m": {"calls": "x"}}}')
    with pytest.raises(RecordError, match=r"usage.json: models.m.calls"):
        read_usage(path)
    path.write_text('{"calls": 1, "extra": 2}')
    with pytest.raises(RecordError, match="extra"):
        read_usage(path)


def test_model_call_line_forbids_bodies() -> None:
    line = {
        "timestamp": 1.0, "url": "https://a.test/v1/x", "host": "a.test", "path": "/v1/x",
        "method": "POST", "status": 200, "request_size": 1, "response_size": 2,
        "duration_s": 0.1, "first_byte_s": 0.05, "streamed": False, "model": "m", "usage": None,
    }  # fmt: skip
    assert ModelCallLine.model_validate(line).model_call is True
    with pytest.raises(ValueError, match="body"):
        ModelCallLine.model_validate({**line, "body": "prompt"})
