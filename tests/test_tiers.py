"""The fast tier's guard (tests/tiers.py): processes and network sockets refused, socket pairs kept."""

from __future__ import annotations

import socket
import subprocess

import pytest

from tests import tiers


def test_a_process_is_refused_and_recorded() -> None:
    tiers.refused.clear()
    with tiers.guarded(), pytest.raises(tiers.PeerInFastTier, match=r"mark it `@pytest.mark.peer`"):
        subprocess.run(["true"], check=False)
    assert tiers.refused and "starts a process" in tiers.refused[0]
    tiers.refused.clear()


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6])
def test_a_network_socket_is_refused(family: socket.AddressFamily) -> None:
    with tiers.guarded(), socket.socket(family) as sock, pytest.raises(tiers.PeerInFastTier):
        sock.bind(("127.0.0.1", 0) if family == socket.AF_INET else ("::1", 0))
    tiers.refused.clear()


@pytest.mark.peer  # starts a process after the guard, to show it restored
def test_a_socket_pair_stays_fast_and_everything_is_restored() -> None:
    with tiers.guarded():
        left, right = socket.socketpair()
        with left, right:
            left.sendall(b"x")
            assert right.recv(1) == b"x"
    assert subprocess.run(["true"], check=False).returncode == 0
