"""The deprecated HTTP+SSE transport (2024-11-05), the fallback for a legacy server that has no
Streamable HTTP endpoint (its `initialize` POST answered 404 or 405):
`GET` the URL for an event stream whose first event, `endpoint`, names where to POST every
client message; the server's messages (responses included) come back as `message` events on
that one stream, read by a worker (a task; a daemon thread in the blocking twin) that hands
each response to the request waiting for it (2024-11-05/basic-transports.mdx § HTTP with SSE;
2025-11-25/basic-transports.mdx § Backwards Compatibility).

The endpoint must be on the URL's origin (scheme, host and port): a server cannot send the
client's messages elsewhere. Waits are bounded by the request's timeout; when the stream ends,
every waiting request fails with `ResponseLostError`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin, urlsplit

from ... import _json
from ...errors import McpRuntimeError, ProtocolError, TransportError
from ...protocol.jsonrpc import decode, is_request, is_response
from ..asyncio_backend import AsyncWaiter, AsyncWorker
from ..failures import rejected, stream_ended, timed_out
from ..hooks import Message, OnNotification, Reply, hook_failed
from ..limits import MAX_EVENTS_BEFORE_ENDPOINT, Deadline, Timeout, seconds_left
from ..sse_reader import SseDecoder, is_event_stream
from .engine import open_engine
from .interfaces import AsyncEndpoint, AsyncEngine, AsyncEngineResponse

if TYPE_CHECKING:
    import httpx

ENDPOINT_EVENT: Final = "endpoint"
MAX_ENDPOINT = 2048  # characters of an announced endpoint URI


def same_origin_endpoint(url: str, announced: str) -> str:
    """The absolute endpoint URI, checked to be on `url`'s origin."""
    endpoint = urljoin(url, announced.strip()[:MAX_ENDPOINT])
    base, target = urlsplit(url), urlsplit(endpoint)
    if (base.scheme.lower(), base.hostname, base.port) != (
        target.scheme.lower(),
        target.hostname,
        target.port,
    ):
        raise ProtocolError(
            f"the HTTP+SSE server announced an endpoint on another origin: {endpoint[:200]!r}"
        )
    return endpoint


class AsyncHttpSseTransport:
    """One HTTP+SSE connection: the event stream (a `GET` with `engine`, the transport's) and the
    endpoint POSTs go to (an engine of its own, with `client` when one was passed in)."""

    def __init__(
        self, endpoint: AsyncEndpoint, engine: AsyncEngine, client: httpx.AsyncClient | None
    ) -> None:
        self._endpoint = endpoint
        self._engine = engine
        self._timeout = engine.timeout
        self._client = client
        self._stream: AsyncEngineResponse | None = None
        self._poster: AsyncEngine | None = None
        self._waiting: dict[Any, tuple[AsyncWaiter, OnNotification | None]] = {}
        self._decoder = SseDecoder(named=True, limit=endpoint.max_response_bytes, source=endpoint.shown_url)
        self._worker: AsyncWorker | None = None
        self._ended = False
        self._failure: McpRuntimeError | None = None  # why the stream ended, when it broke
        self._headers: Mapping[str, str] = {}

    async def open(self, headers: Mapping[str, str]) -> None:
        """GET the stream and read up to its `endpoint` event (within the timeout)."""
        endpoint = self._endpoint
        self._headers = headers
        stream = await self._engine.bare("GET", {**headers, "Accept": "text/event-stream"}, self._timeout)
        if not (200 <= stream.status < 300 and is_event_stream(stream.headers.get("content-type", ""))):
            try:
                content = await stream.aread()
            finally:
                await stream.aclose()
            raise rejected(
                "GET for an HTTP+SSE stream (the server has no Streamable HTTP endpoint either)",
                stream.status,
                content,
            )
        announced: str | None = None
        pending: list[Message] = []
        try:
            async for chunk in stream.aiter_body():
                for name, data in self._events(chunk):
                    if announced is None and name == ENDPOINT_EVENT:
                        announced = same_origin_endpoint(endpoint.url, data.decode("utf-8", "replace"))
                    elif name == "message" and data.strip():
                        if len(pending) >= MAX_EVENTS_BEFORE_ENDPOINT:
                            raise ProtocolError(
                                f"{endpoint.shown_url} sent more than "
                                f"{MAX_EVENTS_BEFORE_ENDPOINT} messages before its "
                                "HTTP+SSE endpoint event"
                            )
                        pending.append(
                            decode(data, "SSE event data is not JSON", "SSE event is not a JSON-RPC message")
                        )
                if announced is not None:
                    break
        except BaseException:
            await stream.aclose()
            raise
        if announced is None:
            await stream.aclose()
            raise stream_ended(endpoint.shown_url)
        stream.forever()
        self._stream = stream
        self._poster = open_engine(
            announced, self._timeout, self._client, endpoint.max_response_bytes, self._engine.sign
        )
        for message in pending:
            await self._dispatch(message)
        self._worker = AsyncWorker(self._pump, "mcpgen-http-sse")

    def _events(self, chunk: bytes) -> list[tuple[str, bytes]]:
        decoder = self._decoder
        datas = decoder.feed(chunk)
        names = decoder.event_names or []
        events = list(zip(names, datas, strict=True))
        names.clear()
        return events

    async def _pump(self) -> None:
        stream = self._stream
        assert stream is not None
        try:
            async for chunk in stream.aiter_body():
                for name, data in self._events(chunk):
                    if name == "message" and data.strip():
                        try:
                            message = decode(
                                data, "SSE event data is not JSON", "SSE event is not a JSON-RPC message"
                            )
                        except ProtocolError:
                            continue  # one bad event does not end the stream
                        await self._dispatch(message)
        except McpRuntimeError as exc:
            self._failure = exc  # the waiting requests fail with it (an event over the limit, ...)
        finally:
            self._ended = True
            with contextlib.suppress(McpRuntimeError, OSError):
                await stream.aclose()
            for waiter, _ in list(self._waiting.values()):
                waiter.set(None)  # the stream ended: every waiting request is lost

    async def _dispatch(self, message: Message) -> None:
        if is_response(message):
            entry = self._waiting.get(message["id"])
            if entry is not None:
                entry[0].set(message)
        elif is_request(message):
            on_request = self._endpoint.on_request
            if on_request is not None:
                try:
                    answer = await on_request(message)
                except Exception as exc:
                    answer = hook_failed(message, exc)
                with contextlib.suppress(McpRuntimeError):
                    await self.post(answer, self._headers, "answer to a server request")
        elif "method" in message:
            seen: set[int] = set()
            for _, on_notification in list(self._waiting.values()):
                if on_notification is not None and id(on_notification) not in seen:
                    seen.add(id(on_notification))
                    on_notification(message)

    # The signature of the legacy session's `request` (legacy_session.py), which hands requests on here.
    async def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        timeout: Timeout,
        on_notification: OnNotification | None,
    ) -> Reply:
        request_id = message.get("id")
        waiter = AsyncWaiter()
        self._waiting[request_id] = (waiter, on_notification)
        try:
            if self._ended:
                raise stream_ended(self._endpoint.shown_url) from self._failure
            await self.post(message, headers, "request")
            while True:
                try:
                    reply = await waiter.wait(seconds_left(timeout))
                    break
                except TimeoutError:
                    if not isinstance(timeout, Deadline) or timeout.expired():
                        raise timed_out(self._endpoint.shown_url, timeout) from None
                    # progress came meanwhile (on the stream): wait on
            if reply is None:
                if self._failure is not None:
                    raise self._failure  # as a Future gives its one exception to every awaiter
                raise stream_ended(self._endpoint.shown_url)
            return reply, None
        finally:
            self._waiting.pop(request_id, None)

    async def post(self, message: Message, headers: Mapping[str, str], what: str) -> None:
        """POST one message to the endpoint; the answer (if any) comes on the stream."""
        poster = self._poster
        if poster is None:
            raise TransportError("the HTTP+SSE stream is not open")
        response = await poster.post(_json.dumps(message), headers, self._timeout)
        try:
            content = await response.aread()
        finally:
            await response.aclose()
        if not 200 <= response.status < 300:
            raise rejected(f"HTTP+SSE {what}", response.status, content)

    async def aclose(self) -> None:
        self._ended = True
        stream = self._stream
        if stream is not None:
            stream.abort()
        if self._worker is not None:
            self._worker.stop()
        if self._poster is not None:
            await self._poster.aclose()
