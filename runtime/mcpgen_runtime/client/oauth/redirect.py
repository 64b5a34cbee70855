"""The step of a login that needs a person: open the authorization URL, wait for the redirect.

A `RedirectHandler` has a `redirect_uri` (registered with the authorization server and sent
in the request) and `authorize(url)`, which gets the user agent to `url` and returns the URL
the authorization server redirected back to (with `code`, `state`, `iss`). The login checks
that URL (state, issuer) before anything else reads it.

`LoopbackRedirect` is the default for a person at a terminal (RFC 8252 §7.3): it listens on
127.0.0.1 (an ephemeral port, or the one registered before when it is free), opens the browser
(or only prints the URL: `open_browser=False`, `mcpgen --no-browser`), and answers the first
request to its callback path. Redirect URIs are loopback or HTTPS (AUTH-15). It waits in the
calling thread, also under `AsyncClient` (a login is interactive and the call waits for it
anyway); pass a handler whose `authorize` is a coroutine function to wait without blocking.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import time
import webbrowser
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, Protocol, TextIO
from urllib.parse import urlsplit

from ...errors import AuthorizationError

__all__ = ["LoopbackRedirect", "RedirectHandler"]

_PAGE = (b"<!doctype html><meta charset=utf-8><title>mcpgen</title>"
         b"<p>Login finished. You can close this window and return to the terminal.</p>")


class RedirectHandler(Protocol):
    @property
    def redirect_uri(self) -> str: ...

    def authorize(self, url: str) -> str | Awaitable[str]:
        """Take the user agent to `url`; return the full URL it was redirected back to."""
        ...


class _Server(HTTPServer):
    callback: str | None = None
    path = "/callback"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        if urlsplit(self.path).path != self.server.path:
            self.send_error(404)
            return
        self.server.callback = f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(_PAGE)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(_PAGE)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the request line carries the authorization code."""


class LoopbackRedirect:
    """Listen on 127.0.0.1 for the redirect; open the browser or print the URL."""

    def __init__(self, *, open_browser: bool = True, port: int = 0, path: str = "/callback",
                 timeout: float = 300.0, out: TextIO | None = None,
                 opener: Callable[[str], Any] | None = None) -> None:
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
        server = _Server(("127.0.0.1", port), _Handler)
        server.path = self.path
        self._server = server
        return server

    @property
    def redirect_uri(self) -> str:
        server = self._server or self._listen(self.port)
        return f"http://127.0.0.1:{server.server_address[1]}{self.path}"

    def authorize(self, url: str) -> str:
        server = self._server or self._listen(self.port)
        out = self._out or sys.stderr
        print(f"To log in, open this URL in a browser:\n\n    {url}\n", file=out, flush=True)
        if self.open_browser:
            with contextlib.suppress(Exception):
                self._opener(url)
        deadline = time.monotonic() + self.timeout
        try:
            server.callback = None
            while server.callback is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AuthorizationError(f"no login arrived at {self.redirect_uri} within {self.timeout:.0f}s")
                server.timeout = min(remaining, 1.0)
                with contextlib.suppress(socket.timeout, OSError):
                    server.handle_request()
            return server.callback
        finally:
            self.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.server_close()
            self._server = None
