"""A request's cost must not tell the agent whether its URL matched (docs/security.md, the proxy's
rule 6): a small gzip body decoding to 20 MB took ~3 s on the commit's URL and ~0.2 s elsewhere.
Work is counted, not timed: the decompressor calls the addon makes for each request, through its
hook."""

from __future__ import annotations

import cProfile
import gzip
import pstats

import pytest

from tests.proxy.hooks import make_flow

ENCODED = [("Content-Encoding", "gzip"), ("Content-Type", "application/json")]


def _decompress_calls(armed, path: str, method: str, body: bytes) -> int:
    flow = make_flow("shop.clawbench.test", 80, path, method=method, headers=ENCODED, body=body)
    profile = cProfile.Profile()
    profile.runcall(armed.send, flow)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    return sum(
        calls[0] for (_, _, name), calls in stats.items() if "decompress" in name and "zlib" in name
    )


@pytest.mark.parametrize("size", [20 << 20, 3 << 20, 4096])
def test_decoding_work_does_not_depend_on_the_url(arm, size: int) -> None:
    armed = arm(schema={"body": {"item": "mug"}})
    body = gzip.compress(b'{"item": "cup", "pad": "' + b"0" * size + b'"}', 9)
    # the commit's URL with another method, another URL, another host's: the same work
    on_commit = _decompress_calls(armed, "/api/checkout", "OPTIONS", body)
    elsewhere = _decompress_calls(armed, "/api/other", "OPTIONS", body)
    assert on_commit == elsewhere > 0
    assert [e.matched for e in armed.log()] == [False, False]


def test_a_bomb_is_decoded_no_further_than_the_bound_whatever_its_url(arm) -> None:
    armed = arm(schema={"body": {"item": "mug"}}, clawbench_max_body=1 << 20)
    bomb = gzip.compress(b"0" * (64 << 20), 9)
    blocked = _decompress_calls(armed, "/api/checkout", "POST", bomb)
    passed = _decompress_calls(armed, "/api/other", "POST", bomb)
    assert blocked == passed <= 3  # 1 MiB per call: stopped at the bound
    first, second = armed.log()
    assert first.blocked and not second.matched  # the commit's URL and method: fails closed
    assert armed.interception().request.body_unverified
