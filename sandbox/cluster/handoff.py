"""The agent's --env values (the model's key among them) handed from the driver to a node, outside
Ray.

Ray keeps task arguments in its object store and its records (the dashboard, its logs, objects
spilled under its session directory), so the values never go there. The driver listens on its
own address; a run's task carries a ticket (that address, a port, a one-time token); the node
connects, presents the token with an ephemeral X25519 key, and receives the values sealed with
AES-GCM under a key derived from the exchange and the token. A token works once. The values cross
the network only sealed and live on the node only in memory, on their way into the container's
root-only config.json, as on one machine (docs/security.md).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

_MAGIC = b"CBH1"
_INFO = b"clawbench env handoff v1"
_KEY = 32
_NONCE = 12
_LEN = 4
_PAYLOAD_LIMIT = 1 << 20
TIMEOUT_S = 30.0


class HandoffError(RuntimeError):
    """The node could not get the values; the message says from where and why."""


@dataclass(frozen=True)
class Ticket:
    """Where and with what one run's node fetches the values once (nothing secret in itself)."""

    host: str
    port: int
    token: str


def _public(key: X25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _cipher(own: X25519PrivateKey, peer: bytes, token: bytes) -> AESGCM:
    shared = own.exchange(X25519PublicKey.from_public_bytes(peer))
    key = HKDF(hashes.SHA256(), _KEY, salt=token, info=_INFO).derive(shared)
    return AESGCM(key)


def _recv(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


class EnvHandoff:
    """The driver's side: serves the values to whoever presents a ticket it issued, once each."""

    def __init__(self, values: Mapping[str, str], host: str) -> None:
        self._payload = json.dumps(dict(values)).encode()
        self._open: set[bytes] = set()
        self._lock = threading.Lock()
        self._server = socket.create_server((host, 0))
        self.host, self.port = host, self._server.getsockname()[1]
        threading.Thread(target=self._serve, name="env-handoff", daemon=True).start()

    def ticket(self) -> Ticket:
        """A fresh one-time ticket for one run."""
        token = secrets.token_bytes(_KEY)
        with self._lock:
            self._open.add(token)
        return Ticket(self.host, self.port, token.hex())

    def revoke(self, ticket: Ticket) -> None:
        """The run is over (or never ran): its ticket no longer works."""
        with self._lock:
            self._open.discard(bytes.fromhex(ticket.token))

    def close(self) -> None:
        with self._lock:
            self._open.clear()
        self._server.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(TIMEOUT_S)
            try:
                hello = _recv(conn, len(_MAGIC) + _KEY + _KEY)
            except (OSError, EOFError):
                return
            magic, token, peer = hello[:4], hello[4 : 4 + _KEY], hello[4 + _KEY :]
            with self._lock:
                known = magic == _MAGIC and token in self._open
                self._open.discard(token)
            if not known:
                return  # the node reads the close as a refusal
            own = X25519PrivateKey.generate()
            nonce = os.urandom(_NONCE)
            sealed = _cipher(own, peer, token).encrypt(nonce, self._payload, token)
            reply = _public(own) + nonce + len(sealed).to_bytes(_LEN, "big") + sealed
            try:
                conn.sendall(reply)
            except OSError:
                return


def receive(ticket: Ticket, timeout_s: float = TIMEOUT_S) -> dict[str, str]:
    """The node's side: the values for this ticket; HandoffError when the driver cannot be
    reached or refuses (a ticket used already, or a batch that ended)."""
    where = f"the driver at {ticket.host}:{ticket.port}"
    token = bytes.fromhex(ticket.token)
    own = X25519PrivateKey.generate()
    try:
        with socket.create_connection((ticket.host, ticket.port), timeout=timeout_s) as conn:
            conn.sendall(_MAGIC + token + _public(own))
            head = _recv(conn, _KEY + _NONCE + _LEN)
            size = int.from_bytes(head[-_LEN:], "big")
            if size > _PAYLOAD_LIMIT:
                raise HandoffError(f"{where} sent {size} bytes of values (limit {_PAYLOAD_LIMIT})")
            sealed = _recv(conn, size)
    except EOFError:
        raise HandoffError(
            f"{where} refused the run's ticket (used already, or the batch ended)"
        ) from None
    except OSError as e:
        raise HandoffError(f"cannot reach {where} for the run's --env values: {e}") from e
    peer, nonce = head[:_KEY], head[_KEY : _KEY + _NONCE]
    try:
        plain = _cipher(own, peer, token).decrypt(nonce, sealed, token)
    except InvalidTag:
        raise HandoffError(f"the values from {where} do not authenticate") from None
    values = json.loads(plain)
    if not isinstance(values, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in values.items()
    ):
        raise HandoffError(f"{where} sent values that are not names and strings")
    return values


__all__ = ["EnvHandoff", "HandoffError", "Ticket", "receive"]
