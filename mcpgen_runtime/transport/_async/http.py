"""The Streamable HTTP transport (2026-07-28), written once over the engine interface
(`engine.py`): every message its own POST; a JSON or SSE reply.

Rules: HTTP-06/07/09 (one POST per message, Accept lists both types), HTTP-13 (both reply
types), HTTP-21 / CANCEL-02 (closing the reply is the cancellation: every reply is closed
when its request is done, which on an unfinished SSE stream cancels it), HTTP-26 (a stream
that ends before the response loses the request: `ResponseLostError`). Reply decoding is in
`streamable.py`; peer requests and the `on_request` hook are described in `hooks.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from ... import _json
from ..failures import challenged, rejected, stream_ended
from ..hooks import AsyncOnRequest, Message, OnNotification, Reply, hook_failed
from ..streamable import EventMessages, ResponseStream, classify_body, is_event_stream
from .engine import AsyncEngineResponse, open_engine

if TYPE_CHECKING:
    import httpx


class AsyncHttpTransport:
    """Streamable HTTP: pooled keep-alive connections of its own for plain http(s) URLs, or one
    pooled httpx client (passed in as `client`, or made when a proxy applies)."""

    sends_headers = True

    def __init__(self, url: str, *, timeout: float | None = 30.0, client: httpx.AsyncClient | None = None,
                 on_request: AsyncOnRequest | None = None) -> None:
        self.url = url
        self.on_request = on_request
        self._engine = open_engine(url, timeout, client)

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

    async def _read_stream(
        self, response: AsyncEngineResponse, request_id: Any, headers: Mapping[str, str],
        on_notification: OnNotification | None,
    ) -> Message:
        """The response on an SSE reply, once its line arrives (the engine bounds the wait)."""
        requests: list[Message] | None = None if self.on_request is None else []
        stream = ResponseStream(request_id, on_notification, requests)
        async for chunk in response.aiter_body():
            message = stream.feed(chunk)
            if requests:
                await self._answer(requests, headers)
            if message is not None:
                return message
        message = stream.finish()
        if requests:
            await self._answer(requests, headers)
        if message is None:
            raise stream_ended(self.url)
        return message

    async def notify(self, message: Message, headers: Mapping[str, str]) -> None:
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
            requests: list[Message] | None = None if self.on_request is None else []
            events = EventMessages(requests)
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
        response = await engine.post(_json.dumps(message), headers, engine.timeout)
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        if not 200 <= response.status < 300:
            raise rejected(what, response.status, content)

    async def aclose(self) -> None:
        await self._engine.aclose()
