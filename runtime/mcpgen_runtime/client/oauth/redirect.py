"""The step of a login that needs a person: open the authorization URL, wait for the redirect.

A `RedirectHandler` has a `redirect_uri` (registered with the authorization server and sent
in the request) and `authorize(url)`, which gets the user agent to `url` and returns the URL
the authorization server redirected back to (with `code`, `state`, `iss`). The login checks
that URL (state, issuer) before anything else reads it.

`LoopbackRedirect` is the default for a person at a terminal (RFC 8252 §7.3): it listens on
127.0.0.1 (an ephemeral port, or the one registered before when it is free), opens the browser
(or only prints the URL: `open_browser=False`, `mcpgen --no-browser`), and takes the first
request to its callback path whose `state` is the one the authorization URL carries (AUTH-17);
a request with another `state`, or none, is answered with a plain error page and ignored, and
the login goes on waiting. Connections are served side by side, each with `CONNECTION_TIMEOUT`
seconds to send its request, so a local connection that sends nothing (or trickles) never holds
the listener; the login ends at its `timeout` whatever they do. Redirect URIs are loopback or
HTTPS (AUTH-15). It waits in the calling thread, also under `AsyncClient` (a login is
interactive and the call waits for it anyway); pass a handler whose `authorize` is a coroutine
function to wait without blocking.
"""

from __future__ import annotations

import contextlib
import hmac
import sys
import threading
import webbrowser
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, TextIO
from urllib.parse import parse_qs, urlsplit

from ...errors import AuthorizationError

__all__ = ["CONNECTION_TIMEOUT", "LoopbackRedirect", "RedirectHandler"]

CONNECTION_TIMEOUT = 5.0  # seconds a connection to the listener has to send its request
_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>mcpgen</title>"
    b"<p>Login finished. You can close this window and return to the terminal.</p>"
)
_WRONG_STATE = (
    b"<!doctype html><meta charset=utf-8><title>mcpgen</title>"
    b"<p>This is not the answer the login in the terminal is waiting for (its state does not "
    b"match), so it was ignored. You can close this window.</p>"
)


class RedirectHandler(Protocol):
    @property
    def redirect_uri(self) -> str: ...

    def authorize(self, url: str) -> str | Awaitable[str]:
        """Take the user agent to `url`; return the full URL it was redirected back to."""
        ...


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # closing never waits for a connection that sends nothing
    path = "/callback"

    def __init__(self, address: tuple[str, int]) -> None:
        super().__init__(address, _Handler)
        self.state: str | None = None  # the login's; None (a URL without one): any
        self.callback: str | None = None
        self.arrived = threading.Event()
        self.lock = threading.Lock()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Silent: a browser that leaves mid-answer is no news, and nothing of a request is printed."""


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = CONNECTION_TIMEOUT  # the socket's: a request line or header that does not come ends it

    def do_GET(self) -> None:
        server = self.server
        parts = urlsplit(self.path)
        if parts.path != server.path:
            self.send_error(404)
            return
        states = parse_qs(parts.query, keep_blank_values=True).get("state", [])
        expected = server.state
        if expected is not None and not (
            len(states) == 1
            and hmac.compare_digest(states[0].encode("utf-8", "replace"), expected.encode("utf-8", "replace"))
        ):
            self._page(400, _WRONG_STATE)  # AUTH-17: someone else's redirect; keep waiting for ours
            return
        with server.lock:
            if server.callback is None:
                server.callback = f"http://127.0.0.1:{server.server_address[1]}{self.path}"
                server.arrived.set()
        self._page(200, _PAGE)

    def _page(self, status: int, page: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(page)
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the request line carries the authorization code."""


def _state_of(url: str) -> str | None:
    states = parse_qs(urlsplit(url).query).get("state")
    return states[0] if states else None


class LoopbackRedirect:
    """Listen on 127.0.0.1 for the redirect; open the browser or print the URL."""

    def __init__(
        self,
        *,
        open_browser: bool = True,
        port: int = 0,
        path: str = "/callback",
        timeout: float = 300.0,
        out: TextIO | None = None,
        opener: Callable[[str], Any] | None = None,
    ) -> None:
        self.open_browser = open_browser
        self.port = port
        self.path = path
        self.timeout = timeout
        self._out = out
        self._opener = opener or webbrowser.open
        self._server: _Server | None = None

    def reuse(self, redirect_uri: str | None) -> None:
        """Listen on the port of an earlier registered `redirect_uri` when it is free."""
        if self._server is not None or self.port or redirect_uri is None:
            return
        parts = urlsplit(redirect_uri)
        if parts.hostname == "127.0.0.1" and parts.port and parts.path == self.path:
            with contextlib.suppress(OSError):
                self._listen(parts.port)

    def _listen(self, port: int) -> _Server:
        server = _Server(("127.0.0.1", port))
        server.path = self.path
        self._server = server
        return server

    @property
    def redirect_uri(self) -> str:
        server = self._server or self._listen(self.port)
        return f"http://127.0.0.1:{server.server_address[1]}{self.path}"

    def authorize(self, url: str) -> str:
        server = self._server or self._listen(self.port)
        redirect_uri = self.redirect_uri
        server.state, server.callback = _state_of(url), None
        server.arrived.clear()
        serving = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="mcpgen-login-redirect",
            daemon=True,
        )
        serving.start()
        try:
            out = self._out or sys.stderr
            print(f"To log in, open this URL in a browser:\n\n    {url}\n", file=out, flush=True)
            if self.open_browser:
                with contextlib.suppress(Exception):
                    self._opener(url)
            if not server.arrived.wait(self.timeout) or server.callback is None:
                raise AuthorizationError(f"no login arrived at {redirect_uri} within {self.timeout:.0f}s")
            return server.callback
        finally:
            server.shutdown()
            serving.join()
            self.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.server_close()
            self._server = None
