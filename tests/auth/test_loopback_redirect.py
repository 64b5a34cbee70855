"""The login's loopback listener (`LoopbackRedirect`) on a real socket: it takes only the redirect
whose `state` is the login's (AUTH-17), answers the others with an error page and goes on
waiting, and neither idle nor trickling local connections hold it past the login's deadline."""

from __future__ import annotations

import contextlib
import io
import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from mcpgen_runtime.client.oauth import LoopbackRedirect
from mcpgen_runtime.client.oauth.redirect import CONNECTION_TIMEOUT
from mcpgen_runtime.errors import AuthorizationError

pytestmark = pytest.mark.timeout(30)

STATE = "the-state-0123456789abcdef"
MARGIN_S = 4.0  # a busy 2-core machine, on top of a deadline


class Login(threading.Thread):
    """`authorize` waiting in a thread of its own, as it waits in the CLI's main thread."""

    def __init__(self, redirect: LoopbackRedirect) -> None:
        super().__init__(daemon=True)
        self.redirect = redirect
        self.uri = redirect.redirect_uri  # listening from here on
        self.url = f"https://as.example/authorize?client_id=c&state={STATE}&redirect_uri={self.uri}"
        self.result: str | None = None
        self.error: BaseException | None = None
        self.ended_after: float | None = None

    def run(self) -> None:
        started = time.monotonic()
        try:
            self.result = self.redirect.authorize(self.url)
        except BaseException as exc:
            self.error = exc
        self.ended_after = time.monotonic() - started


def listener(timeout: float) -> LoopbackRedirect:
    return LoopbackRedirect(open_browser=False, timeout=timeout, out=io.StringIO())


@contextlib.contextmanager
def idle_connections(port: int, count: int, sends: bytes = b"") -> Iterator[list[socket.socket]]:
    """`count` local connections that send `sends` (maybe nothing) and then nothing more."""
    sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
    try:
        for sock in sockets:
            sock.sendall(sends)
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def test_a_redirect_with_a_wrong_or_missing_state_is_answered_and_ignored() -> None:
    login = Login(listener(timeout=20))
    login.start()
    with httpx.Client(timeout=10) as http:
        refused = (
            "code=EVIL&state=forged",
            "code=EVIL",
            "code=EVIL&state=",
            "code=EVIL&state=%C3%A9t%C3%A9",
            f"code=EVIL&state={STATE}&state=x",
            "error=access_denied&state=forged",
        )
        for query in refused:
            answer = http.get(f"{login.uri}?{query}")
            assert answer.status_code == 400 and "not the answer" in answer.text, query
        elsewhere = login.uri.replace("/callback", "/other")
        assert http.get(f"{elsewhere}?code=EVIL&state={STATE}").status_code == 404
        assert login.is_alive()  # still waiting for its own redirect
        good = http.get(f"{login.uri}?code=GOOD&state={STATE}&iss=https%3A%2F%2Fas.example")
        assert good.status_code == 200 and "Login finished" in good.text
    login.join(10)
    assert login.error is None
    assert login.result == f"{login.uri}?code=GOOD&state={STATE}&iss=https%3A%2F%2Fas.example"


@pytest.mark.parametrize("sends", [b"", b"GET /callback?code=X"], ids=["nothing", "half a request line"])
def test_idle_connections_do_not_hold_the_listener(sends: bytes) -> None:
    """Five local connections that stop sending: the redirect is taken at once, well inside a login
    deadline shorter than the time each of them may take (a listener that served them one by one
    would still be waiting on the first)."""
    deadline = CONNECTION_TIMEOUT * 0.6
    login = Login(listener(timeout=deadline))
    port = urlsplit(login.uri).port
    assert port is not None
    with idle_connections(port, 5, sends):
        login.start()
        answer = httpx.get(f"{login.uri}?code=GOOD&state={STATE}", timeout=10)
        login.join(deadline + MARGIN_S)
    assert answer.status_code == 200
    assert login.error is None and login.result == f"{login.uri}?code=GOOD&state={STATE}"


def test_the_login_ends_at_its_deadline_whatever_local_connections_do() -> None:
    login = Login(listener(timeout=1.0))
    port = urlsplit(login.uri).port
    assert port is not None
    with idle_connections(port, 3):
        login.start()
        login.join(1.0 + MARGIN_S)
        assert not login.is_alive()
    assert isinstance(login.error, AuthorizationError) and "no login arrived" in str(login.error)
    assert login.ended_after is not None and login.ended_after < 1.0 + MARGIN_S
    with pytest.raises(OSError):  # the listener is closed
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
