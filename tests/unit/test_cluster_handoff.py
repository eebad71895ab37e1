"""The --env values' way to a Ray node: one ticket, one delivery, nothing readable on the wire.

A real driver-side server on loopback and the node's real client; a relay between them records
every byte both ways, standing in for anyone watching the network between the nodes.
"""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest

from sandbox.cluster.handoff import EnvHandoff, HandoffError, Ticket, receive


@pytest.fixture
def values() -> dict[str, str]:
    return {"OPENAI_API_KEY": f"sk-{secrets.token_hex(16)}", "CB_OTHER": "ünïcode = value"}


@pytest.fixture
def handoff(values: dict[str, str]) -> Iterator[EnvHandoff]:
    server = EnvHandoff(values, "127.0.0.1")
    yield server
    server.close()


class Relay:
    """A loopback TCP relay that keeps a copy of everything it forwards."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.seen = bytearray()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        while chunk := src.recv(65536):
            self.seen += chunk
            dst.sendall(chunk)
        dst.shutdown(socket.SHUT_WR)

    def _serve(self) -> None:
        conn, _ = self.server.accept()
        upstream = socket.create_connection(self.target)
        threading.Thread(target=self._pipe, args=(conn, upstream), daemon=True).start()
        self._pipe(upstream, conn)


def test_a_ticket_delivers_the_values_once(handoff: EnvHandoff, values: dict[str, str]) -> None:
    ticket = handoff.ticket()
    assert receive(ticket) == values
    with pytest.raises(HandoffError, match="refused the run's ticket"):
        receive(ticket)


def test_the_values_cross_the_wire_sealed(handoff: EnvHandoff, values: dict[str, str]) -> None:
    ticket = handoff.ticket()
    relay = Relay((ticket.host, ticket.port))
    assert receive(replace(ticket, port=relay.port)) == values
    assert len(relay.seen) > 100
    for value in values.values():
        assert value.encode() not in relay.seen
    assert b"OPENAI_API_KEY" not in relay.seen  # the names too: they travel in the task anyway


def test_unknown_revoked_and_closed_tickets_get_nothing(handoff: EnvHandoff) -> None:
    forged = Ticket(handoff.host, handoff.port, secrets.token_hex(32))
    with pytest.raises(HandoffError, match="refused"):
        receive(forged)
    revoked = handoff.ticket()
    handoff.revoke(revoked)
    with pytest.raises(HandoffError, match="refused"):
        receive(revoked)
    late = handoff.ticket()
    handoff.close()
    with pytest.raises(HandoffError, match=r"cannot reach|refused"):
        receive(late, timeout_s=5)


def test_a_ticket_is_nothing_secret(handoff: EnvHandoff, values: dict[str, str]) -> None:
    text = repr(handoff.ticket())
    assert all(value not in text for value in values.values())
