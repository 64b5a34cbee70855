"""The Streamable HTTP transport (2026-07-28), written once over the engine interface
(`engine.py`): every message its own POST; a JSON or SSE reply.

Rules: HTTP-06/07/09 (one POST per message, Accept lists both types), HTTP-13 (both reply
types), HTTP-21 / CANCEL-02 (closing the reply is the cancellation: every reply is closed
when its request is done, which on an unfinished SSE stream cancels it), HTTP-26 (a stream
that ends before the response loses the request: `ResponseLostError`). Reply decoding is in
`streamable.py`; peer requests and the `on_request` hook are described in `hooks.py`.

The legacy era (2025-03-26 .. 2025-11-25) starts with the first `initialize` sent: from then
on the transport keeps the session the server opens (`Mcp-Session-Id` on every later request,
forgotten on a 404 so the client core can open a new one, ended with `DELETE` on close),
resumes an SSE reply that ends early after an event id (wait `retry`, then `GET` with
`Last-Event-ID`), and can read the session's standalone GET stream (`events.py`). A legacy
server without a Streamable HTTP endpoint (`initialize` answered 404 or 405) is spoken to over
the deprecated HTTP+SSE transport instead (`sse_session.py`).
(2025-11-25/basic-transports.mdx § Session Management, § Resumability and Redelivery.)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from ... import _json
from ...errors import McpRuntimeError, ProtocolError
from ...protocol.headers import LAST_EVENT_ID, SESSION_ID, SESSION_ID_LC
from ...protocol.lifecycle import INITIALIZE
from ..asyncio_backend import pause
from ..failures import challenged, rejected, shown_url, stream_ended, timed_out
from ..hooks import AsyncOnRequest, Message, OnNotification, Reply, hook_failed
from ..limits import DEFAULT_MAX_RESPONSE_BYTES, check_limit
from ..streamable import EventMessages, ResponseStream, SseDecoder, classify_body, is_event_stream, retry_wait
from .engine import AsyncEngineResponse, open_engine
from .events import AsyncServerEvents
from .sse_session import AsyncSseSession

if TYPE_CHECKING:
    import httpx

MAX_RESUMES: Final = 16  # times one reply may be resumed after the server closed it early
CLOSE_TIMEOUT: Final = 2.0  # seconds `aclose` gives the session's DELETE
# Seconds to wait for a legacy SSE reply's end after its response (servers end the stream then:
# 2025-11-25/basic-transports.mdx), so its connection is kept instead of closed and reopened.
LINGER: Final = 0.005
_SESSION_ID_MAX = 1024


def session_id_from(headers: Mapping[str, str]) -> str | None:
    """The session a reply to `initialize` opens: visible ASCII only (0x21-0x7E)."""
    value = headers.get(SESSION_ID_LC)
    if value is None:
        return None
    if not value or len(value) > _SESSION_ID_MAX or not all("!" <= char <= "~" for char in value):
        raise ProtocolError(f"the server sent an invalid {SESSION_ID} header: {value[:100]!r}")
    return value


class AsyncHttpTransport:
    """Streamable HTTP: pooled keep-alive connections of its own for plain http(s) URLs, or one
    pooled httpx client (passed in as `client`, or made when a proxy applies).

    `max_response_bytes` bounds a response body and each SSE event (`limits.py`); `timeout`
    is the deadline of a request without one of its own."""

    sends_headers = True

    def __init__(self, url: str, *, timeout: float | None = 30.0, client: httpx.AsyncClient | None = None,
                 on_request: AsyncOnRequest | None = None,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES) -> None:
        self.url = url
        self.shown_url = shown_url(url)  # for messages
        self.on_request = on_request
        self.max_response_bytes = check_limit(max_response_bytes)
        self._engine = open_engine(url, timeout, client, max_response_bytes)
        self._client = client
        self._sse: AsyncSseSession | None = None  # the HTTP+SSE fallback, once taken
        self._legacy = False  # an `initialize` was sent: the legacy era's session rules apply
        self.session_id: str | None = None
        self._session_headers: Mapping[str, str] = {}  # the last legacy request's (for DELETE, GET)
        self._events: AsyncServerEvents | None = None

    @property
    def engine(self) -> str:
        """"http11" (the lean engine) or "httpx"."""
        return self._engine.name

    async def start(self) -> None:
        """Nothing to start: connections open when a request needs one."""

    async def request(
        self, message: Message, headers: Mapping[str, str], *, timeout: float | None,
        on_notification: OnNotification | None = None,
    ) -> Reply:
        if self._legacy or message.get("method") == INITIALIZE:
            return await self._session_request(message, headers, timeout, on_notification)
        response = await self._engine.post(_json.dumps(message), headers, timeout)
        try:
            status = response.status
            if status in (401, 403) and (challenge := response.headers.get("www-authenticate")) is not None:
                raise challenged(status, await response.aread(), challenge)  # AUTH-01: for the client's auth
            if is_event_stream(response.headers.get("content-type", "")):
                return await self._read_stream(response, message.get("id"), headers, on_notification), status
            return classify_body(status, await response.aread()), status
        finally:
            await response.aclose()  # on an unfinished SSE stream this is the cancellation (HTTP-21)

    def _in_session(self, headers: Mapping[str, str]) -> Mapping[str, str]:
        session = self.session_id
        return headers if session is None else {**headers, SESSION_ID: session}

    async def _session_request(self, message: Message, headers: Mapping[str, str], timeout: float | None,
                               on_notification: OnNotification | None) -> Reply:
        """A request of the legacy era, in its session; an SSE reply is resumable."""
        if self._sse is not None:
            return await self._sse.request(message, headers, timeout, on_notification)
        initializing = message.get("method") == INITIALIZE
        if initializing:
            self._legacy = True
            self.session_id = None  # a new session: after a 404 the old one is gone
        headers = self._in_session(headers)
        deadline = None if timeout is None else time.monotonic() + timeout
        response = await self._engine.post(_json.dumps(message), headers, timeout)
        if initializing and response.status in (404, 405):  # no Streamable HTTP endpoint here
            await response.aclose()
            sse = AsyncSseSession(self, self._engine.timeout, self._client)
            await sse.open(headers)
            self._sse = sse
            return await sse.request(message, headers, timeout, on_notification)
        try:
            status = response.status
            if initializing and 200 <= status < 300:
                self.session_id = session_id_from(response.headers)
            elif status == 404 and self.session_id is not None:
                self.session_id = None  # the session expired: the client core opens a new one
            if not initializing:
                self._session_headers = headers
            if is_event_stream(response.headers.get("content-type", "")):
                reply = await self._read_resumable(response, message.get("id"), headers, on_notification, deadline)
                await response.linger(LINGER)  # the server ends the stream right after the response
                return reply, status
            return classify_body(status, await response.aread()), status
        finally:
            await response.aclose()

    async def _read_resumable(
        self, response: AsyncEngineResponse, request_id: Any, headers: Mapping[str, str],
        on_notification: OnNotification | None, deadline: float | None,
    ) -> Message:
        """`_read_stream`, but a stream that ends after an event id without the response is
        resumed: wait the server's `retry`, then `GET` with `Last-Event-ID` (2025-11-25 polling).
        A legacy server never takes a closed stream as cancellation; the response may also
        come on the resumed stream of a 2025-03-26 / 2025-06-18 server."""
        requests: list[Message] | None = None if self.on_request is None else []
        stream = ResponseStream(request_id, on_notification, requests, limit=self.max_response_bytes, source=self.shown_url)
        current = response
        try:
            for _ in range(MAX_RESUMES + 1):
                message = await self._read_until_response(current, stream, requests, headers)
                if message is not None:
                    return message
                decoder = stream.decoder
                if decoder.last_id is None:
                    break
                wait = retry_wait(decoder.retry_ms)
                if deadline is not None and time.monotonic() + wait >= deadline:
                    raise timed_out(self.shown_url, self._engine.timeout)
                await pause(wait)
                if current is not response:
                    await current.aclose()
                current = await self.resume(headers, decoder.last_id, deadline)
                stream.decoder = resumed = SseDecoder(limit=self.max_response_bytes, source=self.shown_url)
                resumed.last_id, resumed.retry_ms = decoder.last_id, decoder.retry_ms
            raise stream_ended(self.shown_url)
        finally:
            if current is not response:
                await current.aclose()

    async def resume(self, headers: Mapping[str, str], last_event_id: str | None,
                     deadline: float | None) -> AsyncEngineResponse:
        """`GET` the endpoint for the session's events: a resumed stream (`last_event_id`) or
        the standalone one. A reply that is no event stream raises `HttpStatusError`."""
        get_headers = {**self._in_session(headers), "Accept": "text/event-stream"}
        get_headers.pop("Content-Type", None)
        if last_event_id is not None:
            get_headers[LAST_EVENT_ID] = last_event_id
        timeout = None if deadline is None else max(deadline - time.monotonic(), 0.001)
        response = await self._engine.bare("GET", get_headers, self._engine.timeout if timeout is None else timeout)
        if 200 <= response.status < 300 and is_event_stream(response.headers.get("content-type", "")):
            return response
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        raise rejected("GET for the session's event stream", response.status, content)

    async def engine_bare(self, method: str, headers: Mapping[str, str], timeout: float | None,
                          ) -> AsyncEngineResponse:
        return await self._engine.bare(method, headers, timeout)

    async def open_events(self, headers: Mapping[str, str], on_notification: OnNotification | None) -> bool:
        """Read the legacy session's standalone GET stream in the background (peer requests
        answered through `on_request`, notifications to `on_notification`); False when the
        server offers none (405). Opened once; later calls only say whether it is open."""
        if self._sse is not None:
            return False  # HTTP+SSE: its one stream is read already
        if self._events is None:
            events = AsyncServerEvents(self, headers, on_notification)
            if not await events.open():
                return False
            self._events = events
        return True

    def events(self) -> AsyncServerEvents | None:
        """The session's GET stream, when `open_events` opened it."""
        return self._events

    async def _read_stream(
        self, response: AsyncEngineResponse, request_id: Any, headers: Mapping[str, str],
        on_notification: OnNotification | None,
    ) -> Message:
        """The response on an SSE reply, once its line arrives (the engine bounds the wait)."""
        requests: list[Message] | None = None if self.on_request is None else []
        stream = ResponseStream(request_id, on_notification, requests, limit=self.max_response_bytes, source=self.shown_url)
        message = await self._read_until_response(response, stream, requests, headers)
        if message is None:
            raise stream_ended(self.shown_url)
        return message

    async def _read_until_response(
        self, response: AsyncEngineResponse, stream: ResponseStream, requests: list[Message] | None,
        headers: Mapping[str, str],
    ) -> Message | None:
        """Read `response` until the response message (None: the body ended without it),
        answering the peer's requests as they come."""
        async for chunk in response.aiter_body():
            message = stream.feed(chunk)
            if requests:
                await self._answer(requests, headers)
            if message is not None:
                return message
        message = stream.finish()
        if requests:
            await self._answer(requests, headers)
        return message

    async def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        if self._sse is not None:
            await self._sse.post(message, headers, "notification")
            return
        await self._post_only(message, headers, "notification")

    async def stream(self, message: Message, headers: Mapping[str, str]) -> AsyncIterator[Message]:
        """Send one request and yield every message of its reply as it arrives (notifications,
        then the response), with no deadline: a `subscriptions/listen` reply stays open.
        Closing the iterator (or cancelling its task) closes the reply, which the server takes
        as cancellation (HTTP-21)."""
        response = await self._engine.post(_json.dumps(message), headers, None)
        try:
            if not is_event_stream(response.headers.get("content-type", "")):
                yield classify_body(response.status, await response.aread())
                return
            response.forever()  # no deadline already; and no total: each event is bounded instead
            requests: list[Message] | None = None if self.on_request is None else []
            events = EventMessages(requests, limit=self.max_response_bytes, source=self.shown_url)
            async for chunk in response.aiter_body():
                for item in events.feed(chunk):
                    yield item
                if requests:
                    await self._answer(requests, headers)
            for item in events.finish():
                yield item
            if requests:
                await self._answer(requests, headers)
        finally:
            await response.aclose()

    async def _answer(self, requests: list[Message], headers: Mapping[str, str]) -> None:
        """Answer the peer's requests through the `on_request` hook, each with its own POST."""
        on_request = self.on_request
        assert on_request is not None
        while requests:
            request = requests.pop(0)
            try:
                answer = await on_request(request)
            except Exception as exc:
                answer = hook_failed(request, exc)
            await self._post_only(answer, headers, "answer to a server request")

    async def _post_only(self, message: Message, headers: Mapping[str, str], what: str) -> None:
        """POST a message that gets no JSON-RPC reply (a notification, or an answer)."""
        engine = self._engine
        if self.session_id is not None:
            headers = self._in_session(headers)
        response = await engine.post(_json.dumps(message), headers, engine.timeout)
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        if not 200 <= response.status < 300:
            raise rejected(what, response.status, content)

    async def aclose(self) -> None:
        """Stop the session's GET stream, end the session (`DELETE`; a refusal is fine), close."""
        events, self._events = self._events, None
        if events is not None:
            events.stop()
        sse, self._sse = self._sse, None
        if sse is not None:
            await sse.aclose()
        session, self.session_id = self.session_id, None
        if session is not None:
            headers = {**self._session_headers, SESSION_ID: session}
            headers.pop("Content-Type", None)
            with contextlib.suppress(McpRuntimeError, OSError):
                response = await self._engine.bare("DELETE", headers, CLOSE_TIMEOUT)
                await response.aclose()
        await self._engine.aclose()
