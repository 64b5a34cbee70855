"""Legacy sessions on Streamable HTTP (the 2025-11-25, 2025-06-18 and 2025-03-26 shape of the
transport), as the ASGI app (app.py) hands them over after its shared checks (body limit,
Origin/Host, auth, Content-Type/Accept).

- `initialize` (no session yet): a session with an unguessable `Mcp-Session-Id`, bound to the
  principal; 503 when the store is full of busy sessions.
- POST with the session: responses from the client go to the server-to-client request waiting for
  them (202), notifications are handled (202), requests run through `LegacyDispatcher.handle`.
  A request without the session id gets 400; an unknown, expired or foreign one 404; an
  `MCP-Protocol-Version` other than the negotiated one 400.
- A request's reply is JSON, or an SSE stream as soon as the handler sends something (progress,
  a log message, a request to the client); its events are numbered and kept for resumption.
  A disconnect is not a cancellation in these revisions: the call goes on, the client resumes
  with `Last-Event-ID` or cancels with `notifications/cancelled`.
- GET: with `Last-Event-ID`, resume that stream (replay, then live); without, the session's
  standalone stream (list-changed notifications, keep-alive comments); one at a time (409).
- DELETE: end the session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from .... import _json
from ....protocol import jsonrpc
from ....protocol.headers import LAST_EVENT_ID_LC
from ....protocol.legacy import sse_writer as sse
from ....protocol.legacy.serving import CANCELLED, POLLING_SINCE
from ....protocol.legacy.sse_writer import parse_event_id
from ...core.bearer_auth import principal_id
from ...core.config import IncomingRequest, LegacySessionOptions, LegacySessionStore, Outcome
from ...core.dispatch import Dispatcher
from ...core.handler_errors import ClientRequestError
from ...core.replicas import store_unavailable
from ...legacy.event_streams import EventStream
from ...legacy.session_dispatch import LegacyDispatcher, SessionChannel
from ...legacy.sessions import MemorySessionStore, Session, new_session_id
from ...legacy.shared_sessions import shared_session_store
from ...store import StoreUnavailable
from ..asgi_io import (
    SSE_HEADERS,
    Receive,
    Resumed,
    Send,
    reply,
    send_body,
    send_empty,
    send_error,
    wait_for_disconnect,
)

__all__ = ["LegacyHttp", "LegacyRequestHead"]

_LOG = logging.getLogger("mcpgen.server")

_SESSION_HEADER = b"mcp-session-id"
# How long a `Last-Event-ID` naming another replica's stream may wait for that stream's mirror to
# reach the store (written behind: a client reconnecting at once can be faster); then 400.
MIRROR_GRACE_S = 2.0


class LegacyRequestHead(Protocol):
    """What app.py concluded from a request's headers (its memoized header block)."""

    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def version(self) -> str | None: ...
    @property
    def json_ok(self) -> bool: ...
    @property
    def sse_ok(self) -> bool: ...


class _PostCall(SessionChannel):
    """One legacy request on a POST, and its way back to the client: its SSE stream (made when
    first needed), the task running it (for `notifications/cancelled`) and its end."""

    __slots__ = ("cancelled", "done", "id", "outcome", "sse_ok", "stream", "task")

    def __init__(
        self, options: LegacySessionOptions, session: Session, request_id: Any, sse_ok: bool
    ) -> None:
        SessionChannel.__init__(self, options, session)
        self.id = request_id
        self.sse_ok = sse_ok
        self.stream: EventStream | None = None
        self.outcome: Outcome | None = None
        self.done = False
        self.task: asyncio.Task[Any] | None = None
        self.cancelled = False  # by the client (notifications/cancelled) or the session's end

    def ensure(self) -> EventStream:
        stream = self.stream
        if stream is None:
            options = self.options
            priming = self.protocol_version >= POLLING_SINCE
            stream = self.stream = self.session.new_stream(
                replay=options.replay_events, priming=priming, retry_ms=options.retry_ms if priming else None
            )
            self.session.keep_stream(stream, options.max_kept_streams)
        return stream

    async def notify(self, message: dict[str, Any]) -> None:
        self.ensure().emit(message)

    async def open(self) -> None:
        self.ensure().open()

    async def send(self, message: dict[str, Any]) -> None:
        """A server-to-client request or log message: on this request's stream, else the GET stream."""
        if self.sse_ok:
            self.ensure().emit(message)
            return
        get_stream = self.session.get_stream
        if get_stream is None or not get_stream.attached:
            raise ClientRequestError(
                "The client accepts no text/event-stream reply to this request and has no GET "
                "stream open, so the server cannot send it anything mid-request"
            )
        get_stream.emit(message)

    async def close_stream(self) -> None:
        # 2025-11-25 only: earlier revisions keep a POST stream open until its response.
        if self.protocol_version >= POLLING_SINCE and self.sse_ok:
            self.ensure().request_close()

    def cancel(self) -> None:
        if self.task is not None and not self.done:
            self.cancelled = True
            self.task.cancel()

    def end(self, outcome: Outcome | None) -> None:
        """The handler is done (None: cancelled, no response, CANCEL-09): its response ends the stream."""
        self.outcome = outcome
        self.done = True
        stream = self.stream
        if stream is not None:
            if stream.opened:
                stream.finish(outcome.response if outcome is not None else None)
            else:
                stream.finished = True
                self.session.drop_stream(stream)
            stream.wake.set()


class LegacyHttp:
    """Legacy sessions of one ASGI app (see the module docstring)."""

    def __init__(self, server: Dispatcher) -> None:
        config = server.config
        options = config.legacy_sessions
        shared = shared_session_store(server.shared_store, options) if options.store is None else None
        self.shared = shared  # sessions every replica serves (legacy/shared_sessions.py), or None
        self.store: LegacySessionStore[Session]
        if options.store is not None:
            self.store = options.store
        elif shared is not None:
            self.store = shared
        else:
            self.store = MemorySessionStore(
                idle_timeout_s=options.idle_timeout_s, max_sessions=options.max_sessions
            )
        self.legacy = LegacyDispatcher(server, self.store)
        self.options = options
        self._auth = config.auth
        self._keepalive_s = config.keepalive_s

    def close(self) -> None:
        """Shutdown: end every session (open streams finish, their connections close)."""
        self.store.close()

    # ---- initialize -------------------------------------------------------------------------------

    async def initialize(
        self, message: dict[str, Any], head: LegacyRequestHead, principal: Any, send: Send
    ) -> None:
        outcome, handshake = self.legacy.initialize(message)
        if handshake is None:
            await reply(send, outcome, sse=not head.json_ok)
            return
        session = self.legacy.open_session(handshake, new_session_id(), principal_id(self._auth, principal))
        try:
            added = await self.store.add(session)
        except StoreUnavailable as exc:
            await _store_down(send, exc, message.get("id"))
            return
        if not added:
            _LOG.warning(
                "legacy session refused: %s busy sessions (ServerConfig.legacy_sessions.max_sessions)",
                self.legacy.options.max_sessions,
            )
            await send_error(
                send,
                503,
                "Too many open sessions; try again later",
                code=jsonrpc.INTERNAL_ERROR,
                id_=message.get("id"),
            )
            return
        assert session.id is not None
        body = _json.dumps(outcome.response)
        session_header = (_SESSION_HEADER, session.id.encode("ascii"))
        if head.json_ok:
            await send_body(send, 200, body, [(b"content-type", b"application/json"), session_header])
        else:
            await send_body(send, 200, sse.message_event(body), [*SSE_HEADERS, session_header])

    # ---- the session of a request ------------------------------------------------------------------

    async def _session(
        self, head: LegacyRequestHead, principal: Any, send: Send, id_: Any = None
    ) -> Session | None:
        session_id = head.session_id
        if session_id is None:
            await send_error(send, 400, "Missing Mcp-Session-Id header: send initialize first", id_=id_)
            return None
        try:
            session = await self.store.get(session_id)
        except StoreUnavailable as exc:
            await _store_down(send, exc, id_)
            return None
        # Another principal's session is answered like an unknown one: it must not learn it exists.
        if session is None or session.principal != principal_id(self._auth, principal):
            await send_error(
                send, 404, "Session not found: it ended or expired; send initialize again", id_=id_
            )
            return None
        version = head.version
        if version is not None and version != session.protocol_version:
            await send_error(
                send,
                400,
                f"MCP-Protocol-Version {version[:40]!r} does not match the version "
                f"negotiated for this session ({session.protocol_version})",
                id_=id_,
            )
            return None
        return session

    # ---- POST ---------------------------------------------------------------------------------------

    # Same parameters as _request by design (duplicates): post hands a request on to it whole.
    async def post(
        self,
        message: Any,
        head: LegacyRequestHead,
        principal: Any,
        peer: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        if type(message) is not dict:
            await send_error(send, 400, "Batches are not supported: send one JSON-RPC message per request")
            return
        method = message.get("method")
        if method == "initialize" and "id" in message:  # a new session, whatever headers came along
            await self.initialize(message, head, principal, send)
            return
        session = await self._session(head, principal, send, message.get("id"))
        if session is None:
            return
        if method is None:
            if jsonrpc.is_response(message):
                if not session.answer(message):
                    if self.shared is not None:  # the call that asked may run on another replica
                        await self._forward(session, message, send)
                        return
                    _LOG.debug("response to an unknown server request %.40r dropped", message.get("id"))
                await send_empty(send, 202)
            else:
                await send_error(send, 400, "The message has no method", id_=message.get("id"))
        elif type(method) is not str:
            await send_error(send, 400, "The method must be a string", id_=message.get("id"))
        elif "id" not in message:
            handled = await self.legacy.notification(session, method, message.get("params"))
            if not handled and method == CANCELLED and self.shared is not None:
                await self._forward(session, message, send)  # the call may run on another replica
                return
            await send_empty(send, 202)
        else:
            await self._request(session, message, head, principal, peer, receive, send)

    # Same parameters as post by design (duplicates): post's request branch.
    async def _request(
        self,
        session: Session,
        message: dict[str, Any],
        head: LegacyRequestHead,
        principal: Any,
        peer: str | None,
        receive: Receive,
        send: Send,
    ) -> None:
        """Run one request. The handler runs in this task from start to end (task-bound state such
        as `asyncio.timeout` stays valid); once it has to wait, a writer task streams what it emits.
        A client that leaves does not stop it (not a cancellation in these revisions): what it still
        sends is kept for a resume."""
        id_ = message.get("id")
        call = _PostCall(self.options, session, id_, head.sse_ok)
        request = IncomingRequest(
            "http",
            head.headers,
            call.notify if head.sse_ok else None,
            principal,
            call.open if head.sse_ok else None,
            None,
            peer,
            call,
        )
        work = self.legacy.handle(session, message, request)
        # Most handlers finish without suspending: answer at once, no task (as the modern path does).
        try:
            first = work.send(None)
        except StopIteration as done:
            await self._answer_now(call, done.value, head.json_ok, send)
            return
        call.task = asyncio.current_task()
        session.track(id_, call)
        writer = (
            asyncio.get_running_loop().create_task(self._write_post(call, call.ensure(), receive, send, head))
            if head.sse_ok
            else None
        )
        outcome: Outcome | None
        try:
            outcome = await Resumed(work, first)
        except asyncio.CancelledError:
            if not call.cancelled:  # the server is shutting down
                if writer is not None:
                    writer.cancel()
                raise
            assert call.task is not None
            call.task.uncancel()
            outcome = None
        except Exception:
            _LOG.exception("legacy request %r failed", id_)
            outcome = Outcome(200, jsonrpc.error(id_, jsonrpc.INTERNAL_ERROR, "Internal error"))
        finally:
            session.untrack(id_, call)
        call.end(outcome)
        if writer is not None:
            await writer
        elif outcome is None:
            await send_empty(send, 202)
        else:
            await reply(send, outcome, sse=False)

    async def _write_post(
        self, call: _PostCall, stream: EventStream, receive: Receive, send: Send, head: LegacyRequestHead
    ) -> None:
        """Until the stream opens: wait (the reply may still be JSON); then stream it."""
        wake = stream.wake
        watcher = asyncio.get_running_loop().create_task(_watch(receive, wake))
        try:
            while not stream.opened:
                await wake.wait()
                wake.clear()
                if watcher.done() or stream.wake is not wake:
                    if stream.wake is wake:
                        stream.detach()
                    return  # the client left before anything was sent: the call goes on, unheard
                if not stream.opened and call.done:
                    outcome = call.outcome
                    if outcome is None:  # cancelled: no response, an empty stream
                        await send_body(send, 200, b"", SSE_HEADERS)
                    else:
                        await reply(send, outcome, sse=not head.json_ok)
                    return
            await self._pump(call.session, stream, wake, [], watcher, send, keepalive_s=None)
        finally:
            watcher.cancel()

    async def _answer_now(self, call: _PostCall, outcome: Outcome, json_ok: bool, send: Send) -> None:
        stream = call.stream
        if stream is None or not stream.opened:
            if stream is not None:
                call.session.drop_stream(stream)
            await reply(send, outcome, sse=not json_ok)
            return
        stream.finish(outcome.response)
        call.session.drop_stream(stream)
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await send({"type": "http.response.body", "body": b"".join(stream.take())})

    async def _pump(
        self,
        session: Session,
        stream: EventStream,
        wake: asyncio.Event,
        backlog: list[bytes],
        watcher: asyncio.Task[None],
        send: Send,
        *,
        keepalive_s: float | None,
    ) -> None:
        """Write `stream` to this response until it finishes, the server closes the connection
        (polling), the client leaves, or another connection takes the stream over."""
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        if backlog:
            await send({"type": "http.response.body", "body": b"".join(backlog), "more_body": True})
        while True:
            wake.clear()
            if watcher.done():  # the client left: keep buffering for a resume
                if stream.wake is wake:
                    stream.detach()
                return
            if stream.wake is not wake:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            chunks = stream.take()
            if chunks:
                await send({"type": "http.response.body", "body": b"".join(chunks), "more_body": True})
            if stream.finished:
                if stream is not session.get_stream:
                    session.drop_stream(stream)  # delivered: nothing left to resume
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            if stream.closing:
                stream.detach()
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            if keepalive_s is None:
                await wake.wait()
            else:
                try:
                    await asyncio.wait_for(wake.wait(), keepalive_s)
                except TimeoutError:
                    await send({"type": "http.response.body", "body": sse.KEEPALIVE, "more_body": True})

    # ---- GET and DELETE -----------------------------------------------------------------------------

    async def get(self, head: LegacyRequestHead, principal: Any, receive: Receive, send: Send) -> None:
        session = await self._session(head, principal, send)
        if session is None:
            return
        if not head.sse_ok:
            await send_error(send, 406, "GET needs Accept: text/event-stream")
            return
        last_event_id = head.headers.get(LAST_EVENT_ID_LC)
        if last_event_id is not None:
            found = session.find_stream(last_event_id)
            if found is None and self.shared is not None:  # produced on another replica?
                await self._follow(session, last_event_id, receive, send)
                return
            if found is None:
                await send_error(
                    send, 400, "Last-Event-ID names no stream of this session that can be resumed"
                )
                return
            stream, after = found
            backlog = stream.attach(after)
        else:
            current = session.get_stream
            if current is not None and current.attached and not current.finished:
                await send_error(send, 409, "This session already has a GET stream open")
                return
            options = self.legacy.options
            priming = session.protocol_version >= POLLING_SINCE
            stream = session.new_stream(
                replay=options.replay_events, priming=priming, retry_ms=options.retry_ms if priming else None
            )
            session.get_stream = stream
            stream.open()
            backlog = stream.take()
        listening = stream is session.get_stream

        async def deliver(notification: dict[str, Any]) -> None:
            stream.emit(notification)

        if listening:
            self.legacy.add_listener(deliver, session)
        wake = stream.wake
        watcher = asyncio.get_running_loop().create_task(_watch(receive, wake))
        try:
            await self._pump(
                session,
                stream,
                wake,
                backlog,
                watcher,
                send,
                keepalive_s=self._keepalive_s if listening else None,
            )
        finally:
            watcher.cancel()
            if listening:
                self.legacy.remove_listener(deliver)

    async def delete(self, head: LegacyRequestHead, principal: Any, send: Send) -> None:
        session = await self._session(head, principal, send)
        if session is None:
            return
        assert session.id is not None
        await self.store.remove(session.id)
        session.end()
        await send_empty(send, 200)

    # ---- sessions shared by replicas (legacy/shared_sessions.py) ---------------------------------

    async def _forward(self, session: Session, message: dict[str, Any], send: Send) -> None:
        assert self.shared is not None
        try:
            await self.shared.forward(session, message)
        except StoreUnavailable as exc:
            await _store_down(send, exc, None)
            return
        await send_empty(send, 202)

    async def _follow(self, session: Session, last_event_id: str, receive: Receive, send: Send) -> None:
        """Resume a stream another replica produces: its mirrored events after `Last-Event-ID`,
        then the new ones as they come, until it finishes or the client leaves."""
        assert self.shared is not None
        parsed = parse_event_id(last_event_id)
        try:
            known = parsed is not None and await self.shared.exists(session, parsed[0], wait_s=MIRROR_GRACE_S)
        except StoreUnavailable as exc:
            await _store_down(send, exc, None)
            return
        if parsed is None or not known:
            await send_error(send, 400, "Last-Event-ID names no stream of this session that can be resumed")
            return
        gone = asyncio.Event()
        watcher = asyncio.get_running_loop().create_task(_watch(receive, gone))
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        try:
            async for event in self.shared.follow(
                session, parsed[0], parsed[1], wait_s=min(self._keepalive_s, 5.0)
            ):
                if gone.is_set():
                    return
                await send(
                    {
                        "type": "http.response.body",
                        "body": sse.KEEPALIVE if event is None else event,
                        "more_body": True,
                    }
                )
        except StoreUnavailable as exc:
            _LOG.warning("resumed stream ended: %s", exc)  # the client resumes again later
        finally:
            watcher.cancel()
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _store_down(send: Send, exc: StoreUnavailable, id_: Any) -> None:
    outcome = store_unavailable(id_, exc)
    await reply(send, outcome, sse=False)


async def _watch(receive: Receive, wake: asyncio.Event) -> None:
    """Wake the writer when the client leaves (`watcher.done()` then says so)."""
    try:
        await wait_for_disconnect(receive)
    finally:
        wake.set()
