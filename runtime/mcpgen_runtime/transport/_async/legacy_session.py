"""The legacy session of the Streamable HTTP transport (2025-03-26 .. 2025-11-25): what begins
with the first `initialize` sent. It owns the session id the server opens (`Mcp-Session-Id` on
every later request, forgotten on a 404 so the client core can open a new one, ended with
`DELETE` on close), resumes an SSE reply that ends early after an event id (wait `retry`, then
`GET` with `Last-Event-ID`), and reads the session's standalone GET stream (`session_events.py`).
A legacy server without a Streamable HTTP endpoint (`initialize` answered 404 or 405) is spoken
to over the deprecated HTTP+SSE transport instead (`http_sse.py`).
(2025-11-25/basic-transports.mdx § Session Management, § Resumability and Redelivery.)

It knows the transport that made it only as an `AsyncEndpoint` (`interfaces.py`), and is itself
the `AsyncEventSource` its GET stream reads from.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from ... import _json
from ...errors import McpRuntimeError, ProtocolError
from ...protocol.headers import LAST_EVENT_ID, SESSION_ID, SESSION_ID_LC
from ...protocol.legacy.handshake import INITIALIZE
from ..asyncio_backend import pause
from ..failures import challenged, rejected, stream_ended, timed_out
from ..hooks import Message, OnNotification, Reply
from ..limits import Deadline, Timeout, expiry, start_deadline
from ..sse_reader import ResponseStream, SseDecoder, classify_body, is_event_stream, retry_wait
from .http_sse import AsyncHttpSseTransport
from .interfaces import AsyncEndpoint, AsyncEngine, AsyncEngineResponse
from .replies import answer_all, post_only, read_until_response
from .session_events import AsyncSessionEvents

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


class AsyncLegacySession:
    """The legacy session over `engine` (the transport's), or over HTTP+SSE once that is taken."""

    def __init__(
        self, endpoint: AsyncEndpoint, engine: AsyncEngine, client: httpx.AsyncClient | None
    ) -> None:
        self._endpoint = endpoint
        self._engine = engine
        self._client = client
        self.session_id: str | None = None
        self._session_headers: Mapping[str, str] = {}  # the last request's (for DELETE, GET)
        self._events: AsyncSessionEvents | None = None
        self._http_sse: AsyncHttpSseTransport | None = None  # the HTTP+SSE fallback, once taken

    @property
    def endpoint(self) -> AsyncEndpoint:
        return self._endpoint

    def _in_session(self, headers: Mapping[str, str]) -> Mapping[str, str]:
        session = self.session_id
        return headers if session is None else {**headers, SESSION_ID: session}

    # The signature of the HTTP+SSE fallback's `request` (http_sse.py) too: requests are handed on as is.
    async def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        timeout: Timeout,
        on_notification: OnNotification | None,
    ) -> Reply:
        """A request in the session (an `initialize` opens a new one); an SSE reply is resumable."""
        if self._http_sse is not None:
            return await self._http_sse.request(message, headers, timeout, on_notification)
        initializing = message.get("method") == INITIALIZE
        if initializing:
            self.session_id = None  # a new session: after a 404 the old one is gone
        headers = self._in_session(headers)
        deadline = start_deadline(timeout, time.monotonic)
        response = await self._engine.post(_json.dumps(message), headers, timeout)
        if initializing and response.status in (404, 405):  # no Streamable HTTP endpoint here
            await response.aclose()
            http_sse = AsyncHttpSseTransport(self._endpoint, self._engine, self._client)
            await http_sse.open(headers)
            self._http_sse = http_sse
            return await http_sse.request(message, headers, timeout, on_notification)
        try:
            status = response.status
            if status in (401, 403) and (challenge := response.headers.get("www-authenticate")) is not None:
                nonce = response.headers.get("dpop-nonce")
                raise challenged(
                    status, await response.aread(), challenge, nonce
                )  # AUTH-01: the client's auth
            if initializing and 200 <= status < 300:
                self.session_id = session_id_from(response.headers)
            elif status == 404 and self.session_id is not None:
                self.session_id = None  # the session expired: the client core opens a new one
            if not initializing:
                self._session_headers = headers
            if is_event_stream(response.headers.get("content-type", "")):
                reply = await self._read_resumable(
                    response, message.get("id"), headers, on_notification, deadline
                )
                await response.linger(LINGER)  # the server ends the stream right after the response
                return reply, status
            return classify_body(status, await response.aread(), response.headers.get("retry-after")), status
        finally:
            await response.aclose()

    async def _read_resumable(
        self,
        response: AsyncEngineResponse,
        request_id: Any,
        headers: Mapping[str, str],
        on_notification: OnNotification | None,
        deadline: float | Deadline | None,
    ) -> Message:
        """The response on an SSE reply; a stream that ends after an event id without the response
        is resumed: wait the server's `retry`, then `GET` with `Last-Event-ID` (2025-11-25 polling).
        A legacy server never takes a closed stream as cancellation; the response may also
        come on the resumed stream of a 2025-03-26 / 2025-06-18 server."""
        endpoint = self._endpoint
        on_request = endpoint.on_request
        requests: list[Message] | None = None if on_request is None else []
        stream = ResponseStream(
            request_id,
            on_notification,
            requests,
            limit=endpoint.max_response_bytes,
            source=endpoint.shown_url,
        )
        current = response
        try:
            for _ in range(MAX_RESUMES + 1):
                message = await read_until_response(
                    self._engine, on_request, current, stream, requests, headers
                )
                if message is not None:
                    return message
                decoder = stream.decoder
                if decoder.last_id is None:
                    break
                wait = retry_wait(decoder.retry_ms)
                ends = expiry(deadline, time.monotonic)
                if ends is not None and time.monotonic() + wait >= ends:
                    raise timed_out(
                        endpoint.shown_url,
                        deadline if isinstance(deadline, Deadline) else self._engine.timeout,
                    )
                await pause(wait)
                if current is not response:
                    await current.aclose()
                current = await self.open_stream(headers, decoder.last_id, deadline)
                resumed = SseDecoder(limit=endpoint.max_response_bytes, source=endpoint.shown_url)
                stream.decoder = resumed
                resumed.last_id, resumed.retry_ms = decoder.last_id, decoder.retry_ms
            raise stream_ended(endpoint.shown_url)
        finally:
            if current is not response:
                await current.aclose()

    async def open_stream(
        self, headers: Mapping[str, str], last_event_id: str | None, deadline: float | Deadline | None
    ) -> AsyncEngineResponse:
        """`GET` the endpoint for the session's events: a resumed stream (`last_event_id`) or
        the standalone one. A reply that is no event stream raises `HttpStatusError`."""
        get_headers = {**self._in_session(headers), "Accept": "text/event-stream"}
        get_headers.pop("Content-Type", None)
        if last_event_id is not None:
            get_headers[LAST_EVENT_ID] = last_event_id
        timeout: Timeout
        if isinstance(deadline, Deadline):
            timeout = deadline  # the resumed stream's progress counts as well
        elif deadline is not None:
            timeout = max(deadline - time.monotonic(), 0.001)
        else:
            timeout = self._engine.timeout
        response = await self._engine.bare("GET", get_headers, timeout)
        if 200 <= response.status < 300 and is_event_stream(response.headers.get("content-type", "")):
            return response
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        raise rejected("GET for the session's event stream", response.status, content)

    async def answer(self, requests: list[Message], headers: Mapping[str, str]) -> None:
        await answer_all(self._engine, self._endpoint.on_request, requests, self._in_session(headers))

    async def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        if self._http_sse is not None:
            await self._http_sse.post(message, headers, "notification")
            return
        await post_only(self._engine, message, self._in_session(headers), "notification")

    async def open_events(self, headers: Mapping[str, str], on_notification: OnNotification | None) -> bool:
        """Read the session's standalone GET stream in the background (peer requests answered
        through `on_request`, notifications to `on_notification`); False when the server offers
        none (405). Opened once; later calls only say whether it is open."""
        if self._http_sse is not None:
            return False  # HTTP+SSE: its one stream is read already
        if self._events is None:
            events = AsyncSessionEvents(self, headers, on_notification)
            if not await events.open():
                return False
            self._events = events
        return True

    def events(self) -> AsyncSessionEvents | None:
        """The session's GET stream, when `open_events` opened it."""
        return self._events

    async def aclose(self) -> None:
        """Stop the GET stream, close HTTP+SSE, end the session (`DELETE`; a refusal is fine).
        The engine is the transport's: it closes it."""
        events, self._events = self._events, None
        if events is not None:
            events.stop()
        http_sse, self._http_sse = self._http_sse, None
        if http_sse is not None:
            await http_sse.aclose()
        session, self.session_id = self.session_id, None
        if session is not None:
            headers = {**self._session_headers, SESSION_ID: session}
            headers.pop("Content-Type", None)
            with contextlib.suppress(McpRuntimeError, OSError):
                response = await self._engine.bare("DELETE", headers, CLOSE_TIMEOUT)
                await response.aclose()
