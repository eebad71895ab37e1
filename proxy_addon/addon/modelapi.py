"""Which model calls are the run's own, and how each one ended (docs/formats.md, model calls).

The runner tells the proxy what the run's own calls look like: the endpoint URLs they go to
(clawbench_model_endpoint), the model they name (clawbench_model_name) and a keyed hash of the
key they carry (clawbench_model_key: `hmac-sha256:SALT:HEX`, made by key_fingerprint; the key
itself is in no option, file or log). A call is the run's own when its credential header hashes
to it, its URL is one of the endpoints and its body is a request of the API naming that model.

call_outcome reads how a call ended from what the proxy saw (status, the API's error object, a
connection that failed, a client that hung up); records.modelapi decides what that means.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from mitmproxy import http

from proxy_addon.matching.urls import url_origin
from proxy_addon.records.modelapi import CallOutcome

ENDPOINT_OPTION = "clawbench_model_endpoint"
NAME_OPTION = "clawbench_model_name"
KEY_OPTION = "clawbench_model_key"
OPTIONS_HELP = {
    ENDPOINT_OPTION: "URL of the run's own model calls (e.g. https://api.openai.com/v1/chat/"
    "completions), repeatable: with clawbench_model_name and clawbench_model_key, only such calls "
    "decide whether the model API failed (usage.json's api).",
    NAME_OPTION: "The model the run's own calls name in their body.",
    KEY_OPTION: "hmac-sha256:SALT:HEX, the keyed hash of the run's API key (never the key).",
}
_SCHEME = "hmac-sha256"
_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "api-key")
_UNSHAPED = frozenset(
    {"content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "te"}
)
_BODY_LIMIT = 16 * 1024 * 1024


def key_fingerprint(key: str, salt: str | None = None) -> str:
    """clawbench_model_key's value for key: a keyed hash under a fresh random salt."""
    salt = salt or secrets.token_hex(16)
    digest = hmac.new(salt.encode(), key.encode(), hashlib.sha256).hexdigest()
    return f"{_SCHEME}:{salt}:{digest}"


def endpoint_url(url: str) -> str | None:
    """An endpoint URL as the proxy records a call's URL (canonical origin + path), or None."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return url_origin(parts.scheme, host, port) + (parts.path or "/")


@dataclass(frozen=True)
class OwnCalls:
    """What the run's own calls look like; judge() says why a call is not one of them."""

    endpoints: frozenset[str]
    model: str
    salt: str
    digest: str

    @classmethod
    def parse(cls, endpoints: Sequence[str], model: str, key: str) -> OwnCalls | None:
        """From the options; None when none is set, ValueError naming the one that is wrong."""
        if not endpoints and not model and not key:
            return None
        if not (endpoints and model and key):
            raise ValueError(f"set {ENDPOINT_OPTION}, {NAME_OPTION} and {KEY_OPTION} together")
        urls = set()
        for value in endpoints:
            url = endpoint_url(value)
            if url is None:
                raise ValueError(f"{ENDPOINT_OPTION} {value!r}: use an http(s) URL")
            urls.add(url)
        scheme, _, rest = key.partition(":")
        salt, _, digest = rest.partition(":")
        if scheme != _SCHEME or not salt or len(digest) != 64:
            raise ValueError(f"{KEY_OPTION}: use {_SCHEME}:SALT:HEX (key_fingerprint)")
        return cls(frozenset(urls), model, salt, digest)

    def _carries_key(self, request: http.Request) -> bool:
        for name in _CREDENTIAL_HEADERS:
            for value in request.headers.get_all(name):
                token = value.strip()
                if token[:7].lower() == "bearer ":
                    token = token[7:].strip()
                mac = hmac.new(self.salt.encode(), token.encode(), hashlib.sha256).hexdigest()
                if hmac.compare_digest(mac, self.digest):
                    return True
        return False

    def judge(self, request: http.Request, url: str, body: bytes | None) -> str | None:
        """None when the call is the run's own; else what differs (never the values)."""
        if url not in self.endpoints:
            return "another endpoint"
        if not self._carries_key(request):
            return "another key"
        parsed = _json_object(body)
        if parsed is None or not _is_api_request(parsed):
            return "not a request of the API"
        if parsed.get("model") != self.model:
            return "another model"
        return None


def _json_object(body: bytes | None) -> dict | None:
    if not body or len(body) > _BODY_LIMIT:
        return None
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _is_api_request(body: dict) -> bool:
    """A chat, messages or responses request: a model name and a conversation."""
    conversation = body.get("messages", body.get("input"))
    return isinstance(body.get("model"), str) and bool(conversation)


def looks_like_model_request(method: str, body: bytes | None) -> bool:
    """Cheaply: could this request be an LLM API call (a POST naming a model and messages)?"""
    if method != "POST" or not body or b'"model"' not in body:
        return False
    return b'"messages"' in body or b'"input"' in body or b'"contents"' in body


def header_shape(request: http.Request) -> str:
    """A short fingerprint of the request's header names (how its client sends calls)."""
    names = sorted({k.lower() for k in request.headers if k.lower() not in _UNSHAPED})
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:12]


_BY_API_ERROR = {
    "authentication_error": CallOutcome.AUTH,
    "permission_error": CallOutcome.AUTH,
    "invalid_api_key": CallOutcome.AUTH,
    "not_found_error": CallOutcome.NOT_FOUND,
    "model_not_found": CallOutcome.NOT_FOUND,
    "rate_limit_error": CallOutcome.RATE_LIMITED,
    "insufficient_quota": CallOutcome.QUOTA,
    "billing_error": CallOutcome.QUOTA,
}
_QUOTA_WORDS = ("quota", "credit balance", "billing", "insufficient balance")


def _status_outcome(status: int, api_error: str | None, quota_said: bool) -> CallOutcome:
    if 200 <= status < 300:
        if api_error is None:
            return CallOutcome.OK
        return _BY_API_ERROR.get(api_error, CallOutcome.SERVER_ERROR)  # an error event
    if status in (401, 403):
        return CallOutcome.AUTH
    if status == 402 or (status in (400, 429) and quota_said):
        return CallOutcome.QUOTA
    if status == 404:
        return CallOutcome.NOT_FOUND
    if status == 429:
        return CallOutcome.RATE_LIMITED
    if status >= 500:
        return CallOutcome.SERVER_ERROR
    if 400 <= status < 500:
        return CallOutcome.BAD_REQUEST
    return CallOutcome.OTHER


def _client_side(message: str) -> bool:
    # mitmproxy's words for a client that went away: "Client disconnected." (HTTP/1) and
    # "stream reset by client" (HTTP/2); every other error on a flow is the server side's.
    return "client" in message.lower()


def call_outcome(flow: http.HTTPFlow, api_error: str | None, quota_said: bool) -> CallOutcome:
    """How a finished model call ended (api_error: the error type or code its reply named;
    quota_said: the reply's error is about quota or credit)."""
    error = flow.error.msg if flow.error else None
    if flow.response is None:
        if error is not None and _client_side(error):
            return CallOutcome.CLIENT_GAVE_UP
        refused = flow.server_conn.error or ""
        if "Too many open files" in refused or "Errno 24" in refused or "Errno 23" in refused:
            return CallOutcome.PROXY_ERROR
        return CallOutcome.CONNECTION
    if error is not None:
        return CallOutcome.CLIENT_GAVE_UP if _client_side(error) else CallOutcome.STREAM_CUT
    return _status_outcome(flow.response.status_code, api_error, quota_said)


def says_quota(text: str) -> bool:
    """Whether an API error's type, code or message is about quota or credit."""
    low = text.lower()
    return any(word in low for word in _QUOTA_WORDS)


__all__ = [
    "ENDPOINT_OPTION",
    "KEY_OPTION",
    "NAME_OPTION",
    "OPTIONS_HELP",
    "OwnCalls",
    "call_outcome",
    "endpoint_url",
    "header_shape",
    "key_fingerprint",
    "looks_like_model_request",
    "says_quota",
]
