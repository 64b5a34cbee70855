"""Slow HTTP clients under uvicorn: a deadline on the header block, a bound on its size, and a cap on
connections still receiving a request (`HttpLimits`, core/limits.py).

uvicorn parses the request line and headers itself (h11, or httptools with `mcpgen-runtime[fast]`) before
the ASGI app sees anything, and sets no deadline there: a client trickling one header byte a
second, or connecting and sending nothing, holds its connection for as long as it likes. So
`run_http` serves with a subclass of uvicorn's own protocol class (`guarded_protocol`) that tells a
shared `SlowClients` when a connection starts receiving a request, when its header block is
complete, and when the whole request is in. `SlowClients`

- closes a connection whose header block is not complete `header_timeout_s` after the connection
  was accepted, or after the first read of a later request on it: `408` first when part of a
  request had come;
- closes one still in its body well past the body deadline: a backstop only, since the ASGI app
  answers those itself (body_reader.py);
- when more than `max_slow_connections` are receiving, closes the one that has been receiving
  longest (`503` when part of its request had come), so trickling clients cannot crowd out a
  prompt one: a prompt client is receiving for a moment only and is never the oldest.

On shutdown (`run_http` draining) an idle keep-alive connection is not closed at once, as uvicorn
would: a proxy may be writing its next request on it at that moment and, since a POST it has begun
sending is never resent, answer its client 502. It is answered once more with `Connection: close`,
or closed after uvicorn's keep-alive timeout, which a proxy's own idle timeout (deploy/nginx.conf)
undercuts. A call in flight gets `Connection: close` on its response if that has not started; a
streamed response whose head already promised keep-alive leaves its connection idle, as above.

It checks deadlines on one timer per server every `header_timeout_s / 4` (at most 1 s) while any
connection is receiving, not a timer per connection. A request that arrives in one read (nearly
every one) costs a few attribute checks after the parser ran; one that arrives in several, a clock
read and two dict updates.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import time
from typing import Any, Final, Literal

import h11
from uvicorn.protocols.http.flow_control import CLOSE_HEADER
from uvicorn.protocols.http.h11_impl import H11Protocol

from ..core.limits import HttpLimits

__all__ = ["HttpParser", "SlowClients", "guarded_protocol"]

_LOG = logging.getLogger("mcpgen.server")

HttpParser = Literal["auto", "h11", "httptools"]

# Where a connection is with its current request.
_IDLE: Final = 0  # between requests (uvicorn's keep-alive timeout applies), or answering one
_HEADERS: Final = 1  # accepted, or some of a request line / header block in
_BODY: Final = 2  # header block complete, body still arriving

_TIMEOUT_408: Final = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
_BUSY_503: Final = b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
_TOO_LARGE_431: Final = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
)


class SlowClients:
    """The connections of one server that are receiving a request, oldest first, and their deadlines."""

    def __init__(self, limits: HttpLimits) -> None:
        self.limits = limits
        self.receiving: dict[Any, float] = {}  # connection -> time.monotonic() its request started
        self._timer: asyncio.TimerHandle | None = None
        self._interval = min(1.0, limits.header_timeout_s / 4)
        # The ASGI app gives up on a body after body_timeout_s from the end of the headers; past
        # this the connection is certainly stuck (an app that never reads its body).
        self._body_backstop = limits.header_timeout_s + limits.body_timeout_s + 1.0
        self.closed = {"header timeout": 0, "body timeout": 0, "over the cap": 0}

    def started(self, conn: Any) -> None:
        receiving = self.receiving
        receiving[conn] = time.monotonic()
        if len(receiving) > self.limits.max_slow_connections:
            self._close(next(iter(receiving)), _BUSY_503, "over the cap")
        if self._timer is None:
            self._timer = conn.loop.call_later(self._interval, self._sweep, conn.loop)

    def finished(self, conn: Any) -> None:
        self.receiving.pop(conn, None)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        now = time.monotonic()
        header_start = now - self.limits.header_timeout_s
        body_start = now - self._body_backstop
        before = sum(self.closed.values())
        for conn, since in list(self.receiving.items()):
            if conn.mcp_phase == _BODY:
                if since < body_start:
                    self._close(conn, None, "body timeout")
            elif since < header_start:
                self._close(conn, _TIMEOUT_408, "header timeout")
        if sum(self.closed.values()) != before:  # one line per sweep at most, however many were closed
            _LOG.info("slow HTTP clients: connections closed so far: %s", self.closed)
        if self.receiving:
            self._timer = loop.call_later(self._interval, self._sweep, loop)

    def _close(self, conn: Any, answer: bytes | None, why: str) -> None:
        self.receiving.pop(conn, None)
        self.closed[why] += 1
        transport = conn.transport
        if transport is None or transport.is_closing():
            return
        if answer is not None and conn.mcp_phase == _HEADERS and conn.mcp_seen:
            transport.write(answer)  # part of a request came: say why it will not be answered
        conn.mcp_phase = _IDLE
        transport.close()


class _Guarded:
    """What both protocol classes add: where the connection is with its current request, kept in
    `slow_clients` while a request is arriving. A request that arrives whole in one read (nearly
    every one) is never entered there: the check after the parser ran finds it complete."""

    slow_clients: SlowClients  # set by guarded_protocol
    max_header_bytes: int
    transport: Any
    mcp_phase = _IDLE
    mcp_seen = False  # a byte of the current request has arrived
    mcp_header_bytes = 0
    mcp_draining = False  # shutting down: every request from now on is the connection's last

    # uvicorn's protocol attributes used here
    cycle: Any
    loop: asyncio.AbstractEventLoop
    timeout_keep_alive: int

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown, without closing idle connections under a proxy's feet."""
        self.mcp_draining = True
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            if not cycle.response_started:
                self._last_request()  # its response says `Connection: close`, so the proxy knows
            # Else its head went out promising keep-alive: closing right after it would race the
            # proxy's reuse (a 502), so the connection ends idle like any other (uvicorn's keep-alive
            # timeout after the response, undercut by the proxy's) or after one more request.
        else:
            self.loop.call_later(self.timeout_keep_alive, self._close_if_idle)

    def _close_if_idle(self) -> None:
        cycle = self.cycle
        if (
            (cycle is None or cycle.response_complete)
            and self.mcp_phase == _IDLE
            and not self.transport.is_closing()
        ):
            self.transport.close()

    def _last_request(self) -> None:
        """While draining, a request that arrives is answered with `Connection: close`."""
        if self.cycle is not None:
            self.cycle.keep_alive = False

    def _accepted(self) -> None:
        self.mcp_phase = _HEADERS  # nothing yet: the header deadline runs from now
        self.slow_clients.started(self)

    def _arriving(self, phase: int, data: bytes) -> None:
        """After a read that left the current request incomplete: headers or body still to come."""
        if self.mcp_phase == _IDLE:
            self.slow_clients.started(self)
        self.mcp_phase = phase
        self.mcp_seen = True
        if phase == _HEADERS:
            self.mcp_header_bytes += len(data)
            if self.mcp_header_bytes > self.max_header_bytes and not self.transport.is_closing():
                self._done()  # h11 stops at h11_max_incomplete_event_size first; httptools has no bound
                self.transport.write(_TOO_LARGE_431)
                self.transport.close()

    def _done(self) -> None:
        """The current request is all in, or the connection is over."""
        if self.mcp_phase != _IDLE:
            self.mcp_phase = _IDLE
            self.slow_clients.finished(self)
        self.mcp_seen = False
        self.mcp_header_bytes = 0


class _H11Guarded(_Guarded, H11Protocol):
    """uvicorn's h11 protocol, reporting each request's progress to `slow_clients`."""

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._accepted()

    def data_received(self, data: bytes) -> None:
        H11Protocol.data_received(self, data)  # direct: cheaper than super() on the per-request path
        if self.mcp_draining:
            self._last_request()
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            self._arriving(_BODY, data)
        elif state is h11.IDLE:  # part of a request line or header block
            self._arriving(_HEADERS, data)
        elif self.mcp_phase != _IDLE or self.mcp_seen:
            self._done()  # all in (DONE, MUST_CLOSE), or over (CLOSED, ERROR, SWITCHED_PROTOCOL)

    def connection_lost(self, exc: Exception | None) -> None:
        self._done()
        super().connection_lost(exc)

    def _last_request(self) -> None:
        cycle = self.cycle
        if cycle is not None and cycle.keep_alive:
            cycle.keep_alive = False
            # httptools says `Connection: close` when keep_alive is off; uvicorn's h11 cycle only
            # when the request did, so the proxy would see the close only after reusing it.
            if CLOSE_HEADER not in cycle.scope["headers"]:
                cycle.scope["headers"].append(CLOSE_HEADER)


def _httptools_guarded() -> type[asyncio.Protocol]:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # the fast extra: imports httptools

    feed = HttpToolsProtocol.data_received

    class _HttpToolsGuarded(_Guarded, HttpToolsProtocol):
        """uvicorn's httptools protocol, reporting each request's progress to `slow_clients`, and
        bounding the header block (httptools itself does not)."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._accepted()

        def data_received(self, data: bytes) -> None:
            feed(self, data)  # direct: cheaper than super() on the per-request path
            if self.mcp_draining:
                self._last_request()
            cycle = self.cycle
            # The parser starts a new scope at a message's first byte and a cycle at its last header.
            if cycle is None or cycle.scope is not self.scope:
                if self.scope is not None:  # (None: nothing parsed yet)
                    self._arriving(_HEADERS, data)
            elif cycle.more_body and not cycle.response_complete:
                self._arriving(_BODY, data)
            elif self.mcp_phase != _IDLE or self.mcp_seen:
                self._done()

        def connection_lost(self, exc: Exception | None) -> None:
            self._done()
            super().connection_lost(exc)

    return _HttpToolsGuarded


def guarded_protocol(parser: HttpParser, slow_clients: SlowClients) -> type[asyncio.Protocol]:
    """uvicorn's protocol class for `parser` ("auto": httptools when installed, else h11, as
    uvicorn chooses), bound to `slow_clients`; give it to `uvicorn.Config(http=...)`."""
    if parser == "auto":
        parser = "httptools" if importlib.util.find_spec("httptools") is not None else "h11"
    base: type[asyncio.Protocol] = _H11Guarded if parser == "h11" else _httptools_guarded()
    attrs = {"slow_clients": slow_clients, "max_header_bytes": slow_clients.limits.max_header_bytes}
    return type(base.__name__, (base,), attrs)
