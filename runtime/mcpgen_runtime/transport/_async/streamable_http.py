"""The Streamable HTTP transport (2026-07-28), written once over the engine interface
(`interfaces.py`, `engine.py`): every message its own POST; a JSON or SSE reply.

Rules: HTTP-06/07/09 (one POST per message, Accept lists both types), HTTP-13 (both reply
types), HTTP-21 / CANCEL-02 (closing the reply is the cancellation: every reply is closed
when its request is done, which on an unfinished SSE stream cancels it), HTTP-26 (a stream
that ends before the response loses the request: `ResponseLostError`). Reply decoding is in
`sse_reader.py`; peer requests and the `on_request` hook are described in `hooks.py`.

The first `initialize` sent opens a legacy session (2025-03-26 .. 2025-11-25): from then on
every request and notification goes through it (`legacy_session.py`: the session id,
resumption, the GET stream, DELETE, and the HTTP+SSE fallback).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from ... import _json
from ...protocol.legacy.handshake import INITIALIZE
from ..failures import challenged, shown_url, stream_ended
from ..hooks import AsyncOnRequest, Message, OnNotification, Reply
from ..limits import DEFAULT_MAX_RESPONSE_BYTES, Timeout, check_limit
from ..sse_reader import EventMessages, ResponseStream, classify_body, is_event_stream
from .engine import open_engine
from .interfaces import AsyncEngineResponse, RequestSigner
from .legacy_session import AsyncLegacySession
from .replies import answer_all, post_only, read_until_response
from .session_events import AsyncSessionEvents

if TYPE_CHECKING:
    import httpx


class AsyncHttpTransport:
    """Streamable HTTP: pooled keep-alive connections of its own for plain http(s) URLs, or one
    pooled httpx client (passed in as `client`, or made when a proxy applies).

    `max_response_bytes` bounds a response body and each SSE event (`limits.py`); `timeout`
    is the deadline of a request without one of its own."""

    sends_headers = True

    def __init__(
        self,
        url: str,
        *,
        timeout: float | None = 30.0,
        client: httpx.AsyncClient | None = None,
        on_request: AsyncOnRequest | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.url = url
        self.shown_url = shown_url(url)  # for messages
        self.on_request = on_request
        self.max_response_bytes = check_limit(max_response_bytes)
        self._engine = open_engine(url, timeout, client, max_response_bytes)
        self._client = client
        self._legacy: AsyncLegacySession | None = None  # from the first `initialize` sent

    @property
    def engine(self) -> str:
        """ "http11" (the lean engine) or "httpx"."""
        return self._engine.name

    @property
    def sign(self) -> RequestSigner | None:
        """Applied to the headers of every HTTP request this transport sends (the client's OAuth
        login sets it: a DPoP proof per request, RFC 9449 §7); None: headers go as given."""
        return self._engine.sign

    @sign.setter
    def sign(self, signer: RequestSigner | None) -> None:
        self._engine.sign = signer

    @property
    def session_id(self) -> str | None:
        """The legacy session's `Mcp-Session-Id`, while one is open."""
        return None if self._legacy is None else self._legacy.session_id

    async def start(self) -> None:
        """Nothing to start: connections open when a request needs one."""

    # The contract's signature (contract.py), restated as every implementation of a Protocol must.
    async def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        *,
        timeout: Timeout,
        on_notification: OnNotification | None = None,
    ) -> Reply:
        legacy = self._legacy
        if legacy is None and message.get("method") == INITIALIZE:
            legacy = self._legacy = AsyncLegacySession(self, self._engine, self._client)
        if legacy is not None:
            return await legacy.request(message, headers, timeout, on_notification)
        response = await self._engine.post(_json.dumps(message), headers, timeout)
        try:
            status = response.status
            if status in (401, 403) and (challenge := response.headers.get("www-authenticate")) is not None:
                nonce = response.headers.get("dpop-nonce")
                raise challenged(
                    status, await response.aread(), challenge, nonce
                )  # AUTH-01: the client's auth
            if is_event_stream(response.headers.get("content-type", "")):
                return await self._read_stream(response, message.get("id"), headers, on_notification), status
            return classify_body(status, await response.aread(), response.headers.get("retry-after")), status
        finally:
            await response.aclose()  # on an unfinished SSE stream this is the cancellation (HTTP-21)

    async def _read_stream(
        self,
        response: AsyncEngineResponse,
        request_id: Any,
        headers: Mapping[str, str],
        on_notification: OnNotification | None,
    ) -> Message:
        """The response on an SSE reply, once its line arrives (the engine bounds the wait)."""
        on_request = self.on_request
        requests: list[Message] | None = None if on_request is None else []
        stream = ResponseStream(
            request_id, on_notification, requests, limit=self.max_response_bytes, source=self.shown_url
        )
        message = await read_until_response(self._engine, on_request, response, stream, requests, headers)
        if message is None:
            raise stream_ended(self.shown_url)
        return message

    async def open_events(self, headers: Mapping[str, str], on_notification: OnNotification | None) -> bool:
        """Read the legacy session's standalone GET stream in the background
        (`AsyncLegacySession.open_events`); False without a legacy session or when the server
        offers no such stream."""
        return False if self._legacy is None else await self._legacy.open_events(headers, on_notification)

    def events(self) -> AsyncSessionEvents | None:
        """The legacy session's GET stream, when `open_events` opened it."""
        return None if self._legacy is None else self._legacy.events()

    async def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        if self._legacy is not None:
            await self._legacy.notify(message, headers)
            return
        await post_only(self._engine, message, headers, "notification")

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
            on_request = self.on_request
            requests: list[Message] | None = None if on_request is None else []
            events = EventMessages(requests, limit=self.max_response_bytes, source=self.shown_url)
            async for chunk in response.aiter_body():
                for item in events.feed(chunk):
                    yield item
                if requests:
                    await answer_all(self._engine, on_request, requests, headers)
            for item in events.finish():
                yield item
            if requests:
                await answer_all(self._engine, on_request, requests, headers)
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        """End the legacy session, if any (`AsyncLegacySession.aclose`), and close the connections."""
        legacy, self._legacy = self._legacy, None
        if legacy is not None:
            await legacy.aclose()
        await self._engine.aclose()
