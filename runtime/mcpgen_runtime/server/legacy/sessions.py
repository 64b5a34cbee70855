"""Legacy sessions (`Mcp-Session-Id` on HTTP; the process on stdio): what `initialize` settled, the
server-to-client requests awaiting answers, the calls in flight, and (HTTP) the session's SSE streams;
and where sessions are kept.

A session is what a legacy client gets instead of per-request `_meta`: its protocol version,
capabilities and identity, agreed once. On HTTP it has an unguessable `Mcp-Session-Id` and is
bound to the principal that opened it (a request from anyone else is answered as if the session
did not exist); on stdio the process is the session and it has no id.

`LegacySessionStore` is the small interface sessions live behind; `MemorySessionStore` (the default)
keeps them in this process with idle expiry and a cap. With a shared `ServerConfig.store`,
`SharedSessionStore` (shared_sessions.py) persists the record fields (`id`, `principal`,
`protocol_version`, `client_capabilities`, `client_info`, `log_level`, `initialized`) there and
keeps the live parts — pending requests, running calls, attached streams — in the process that
serves them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from ... import telemetry
from ...protocol import jsonrpc
from ...protocol.legacy.serving import CANCELLED
from ...protocol.legacy.sse_writer import parse_event_id
from ..core.handler_errors import ClientRequestError
from .event_streams import EventStream

__all__ = ["Cancellable", "MemorySessionStore", "Session", "new_session_id"]

_LOG = logging.getLogger("mcpgen.server")

SendMessage = Callable[[dict[str, Any]], Awaitable[None]]


class Cancellable(Protocol):
    """A call in flight (an asyncio task, or what runs one): `cancel` stops it."""

    def cancel(self) -> object: ...


def new_session_id() -> str:
    """32 URL-safe characters from the OS's cryptographic RNG (visible ASCII, unguessable)."""
    return secrets.token_urlsafe(24)


class Session:
    """One legacy session. The first seven fields are its record; the rest live in this process
    only and are created on first use (an idle session holds none of them)."""

    __slots__ = (
        "_calls",
        "_next_request",
        "_next_stream",
        "_pending",
        "_streams",
        "client_capabilities",
        "client_info",
        "get_stream",
        "id",
        "initialized",
        "last_seen",
        "log_level",
        "on_new_stream",
        "opened_at",
        "principal",
        "protocol_version",
        "resource_subscriptions",
        "stream_prefix",
    )

    def __init__(
        self,
        session_id: str | None,
        principal: str | None,
        protocol_version: str,
        client_capabilities: dict[str, Any],
        client_info: Mapping[str, Any],
    ) -> None:
        self.id = session_id  # None on stdio
        self.principal = principal  # principal_id of whoever opened it; None when anonymous
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info  # self-reported: for logs only
        self.log_level: str | None = None  # logging/setLevel; None sends every level
        self.initialized = False  # notifications/initialized arrived
        self.resource_subscriptions: set[str] | None = None  # resources/subscribe URIs (record)
        self.last_seen = 0.0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] | None = None
        self._calls: dict[Any, Cancellable] | None = None
        self._streams: dict[str, EventStream] | None = None  # POST streams that may be resumed
        self.get_stream: EventStream | None = None  # the standalone GET stream
        self._next_request = 0
        self._next_stream = 0
        # Shared sessions (shared_sessions.py): stream ids unique across replicas, streams mirrored.
        self.stream_prefix = ""
        self.on_new_stream: Callable[[EventStream], None] | None = None
        # When this process opened it (LegacyDispatcher.open_session; None for a session opened by
        # another replica): its end records mcp.server.session.duration (telemetry/).
        self.opened_at: float | None = None

    @property
    def busy(self) -> bool:
        """A call runs, an answer is awaited or the GET stream is attached: never idle-expired."""
        return bool(self._calls or self._pending) or (
            self.get_stream is not None and self.get_stream.attached
        )

    # ---- server-to-client requests ------------------------------------------------------------

    async def ask_client(
        self, method: str, params: dict[str, Any], send: SendMessage, *, timeout: float, limit: int
    ) -> dict[str, Any]:
        """Send a request to the client and return its result; `ClientRequestError` when it answers
        with an error, does not answer within `timeout`, or `limit` requests already wait. When the
        call is cancelled (or times out) the client is told with `notifications/cancelled`."""
        pending = self._pending
        if pending is None:
            pending = self._pending = {}
        if len(pending) >= limit:
            raise ClientRequestError(
                f"The client already has {limit} unanswered requests from this server; {method} was not sent"
            )
        self._next_request += 1
        request_id = self._next_request
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        pending[request_id] = answer
        try:
            await send(jsonrpc.request(request_id, method, params))
            async with asyncio.timeout(timeout):
                return await answer
        except TimeoutError:
            await self._cancel_request(send, request_id, "timed out")
            raise ClientRequestError(f"The client did not answer {method} within {timeout:g} s") from None
        except asyncio.CancelledError:
            await self._cancel_request(send, request_id, "the request that asked was cancelled")
            raise
        finally:
            pending.pop(request_id, None)

    @staticmethod
    async def _cancel_request(send: SendMessage, request_id: int, reason: str) -> None:
        with contextlib.suppress(Exception):  # best effort: the connection may be gone
            await send(jsonrpc.notification(CANCELLED, {"requestId": request_id, "reason": reason}))

    def answer(self, message: dict[str, Any]) -> bool:
        """Route a response the client sent to the request waiting for it; False when none waits
        (unknown, late or duplicate ids are dropped: CANCEL-10)."""
        request_id = message.get("id")
        answer = self._pending.get(request_id) if self._pending and type(request_id) is int else None
        if answer is None or answer.done():
            return False
        if "error" in message:
            error = message.get("error")
            text = error.get("message") if isinstance(error, dict) else None
            code = error.get("code") if isinstance(error, dict) else None
            answer.set_exception(
                ClientRequestError(
                    f"The client answered with error {code}: "
                    f"{str(text)[:200] if text is not None else 'no message'}"
                )
            )
        elif type(message.get("result")) is dict:
            answer.set_result(message["result"])
        else:
            answer.set_exception(ClientRequestError("The client's answer has no result object"))
        return True

    # ---- calls in flight -------------------------------------------------------------------------

    def track(self, request_id: Any, call: Cancellable) -> None:
        calls = self._calls
        if calls is None:
            calls = self._calls = {}
        calls[request_id] = call

    def untrack(self, request_id: Any, call: Cancellable) -> None:
        if self._calls is not None and self._calls.get(request_id) is call:
            del self._calls[request_id]

    def cancel(self, request_id: Any) -> bool:
        """`notifications/cancelled` from the client: stop that call (CANCEL-09, CANCEL-13)."""
        call = self._calls.pop(request_id, None) if self._calls else None
        if call is None:
            return False
        call.cancel()
        return True

    # ---- streams (HTTP) ---------------------------------------------------------------------------

    def new_stream(self, *, replay: int, priming: bool, retry_ms: int | None) -> EventStream:
        self._next_stream += 1
        stream = EventStream(
            f"{self.stream_prefix}{self._next_stream}", replay=replay, priming=priming, retry_ms=retry_ms
        )
        if self.on_new_stream is not None:
            self.on_new_stream(stream)
        return stream

    def keep_stream(self, stream: EventStream, limit: int) -> None:
        """Make a POST stream resumable; past `limit` the oldest finished stream is forgotten."""
        streams = self._streams
        if streams is None:
            streams = self._streams = {}
        streams[stream.id] = stream
        if len(streams) > limit:
            for key, old in list(streams.items()):
                if old.finished and old is not stream:
                    del streams[key]
                    break

    def drop_stream(self, stream: EventStream) -> None:
        if self._streams is not None and self._streams.get(stream.id) is stream:
            del self._streams[stream.id]

    def find_stream(self, last_event_id: str) -> tuple[EventStream, int] | None:
        """The stream a `Last-Event-ID` names, and the position to replay after."""
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, position = parsed
        stream = self._streams.get(stream_id) if self._streams else None
        if stream is None and self.get_stream is not None and self.get_stream.id == stream_id:
            stream = self.get_stream
        return (stream, position) if stream is not None else None

    # ---- the end -----------------------------------------------------------------------------------

    def end(self) -> None:
        """Ended by DELETE, expiry or shutdown: running calls are cancelled, waiting requests fail,
        streams finish (their connections close)."""
        for call in list((self._calls or {}).values()):
            call.cancel()
        self._calls = None
        for answer in list((self._pending or {}).values()):
            if not answer.done():
                answer.set_exception(ClientRequestError("The session ended before the client answered"))
        for stream in list((self._streams or {}).values()):
            stream.finish(None)
        if self.get_stream is not None:
            self.get_stream.finish(None)
        self._streams = None
        opened, self.opened_at = self.opened_at, None
        if opened is not None:
            telemetry.record_server_session(
                time.monotonic() - opened, self.protocol_version, "stdio" if self.id is None else "http"
            )


class MemorySessionStore:
    """Sessions in this process: idle expiry, a cap, least recently used first in line."""

    def __init__(
        self,
        *,
        idle_timeout_s: float = 1800.0,
        max_sessions: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._idle = idle_timeout_s
        self._max = max_sessions
        self._clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    async def add(self, session: Session) -> bool:
        assert session.id is not None
        now = self._clock()
        self._expire(now)
        if len(self._sessions) >= self._max and not self._evict_idle():
            return False
        session.last_seen = now
        self._sessions[session.id] = session
        return True

    async def get(self, session_id: str) -> Session | None:
        session = self._sessions.get(session_id)
        if session is None:
            return None
        now = self._clock()
        if now - session.last_seen > self._idle and not session.busy:
            self._end(session_id)
            return None
        session.last_seen = now
        self._sessions.move_to_end(session_id)
        return session

    async def remove(self, session_id: str) -> Session | None:
        return self._sessions.pop(session_id, None)

    async def save(self, session: Session) -> None:
        pass  # the session object is the stored one

    def close(self) -> None:
        for session in list(self._sessions.values()):
            session.end()
        self._sessions.clear()

    def _end(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            _LOG.debug("legacy session %s… ended (idle)", session_id[:6])
            session.end()

    def _expire(self, now: float) -> None:
        """End idle sessions past their timeout, oldest first; busy ones go to the back of the line."""
        sessions = self._sessions
        for _ in range(len(sessions)):
            if not sessions:
                return
            session_id, session = next(iter(sessions.items()))
            if now - session.last_seen <= self._idle:
                return
            if session.busy:
                session.last_seen = now
                sessions.move_to_end(session_id)
            else:
                self._end(session_id)

    def _evict_idle(self) -> bool:
        """At the cap: end the least recently used session that is not busy (False: all are busy)."""
        for session_id, session in self._sessions.items():
            if not session.busy:
                self._end(session_id)
                return True
        return False
