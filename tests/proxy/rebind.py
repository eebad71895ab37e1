"""Test-only mitmproxy addon: moves a request to another host after the ClawBench addon checked
it, as a DNS answer that changes between the check and the connection would (rebinding).

Loaded after the ClawBench addon; a request with `X-Rebind-To: HOST` is then sent to HOST.
"""

from __future__ import annotations

from mitmproxy import http


class RebindAfterCheck:
    def request(self, flow: http.HTTPFlow) -> None:
        target = flow.request.headers.get("x-rebind-to")
        if target and not flow.response and not flow.error:
            flow.request.data.host = target


addons = [RebindAfterCheck()]
