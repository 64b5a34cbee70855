"""Streamable HTTP transport (2026-07-28): every message its own POST; JSON or SSE replies.

Rules: HTTP-06/07/09 (one POST per message, Accept lists both types), HTTP-13 (both reply
types), HTTP-19 (SSE comments ignored), HTTP-20 (no resumption: `id:`/`retry:` ignored),
HTTP-21 / CANCEL-02 (closing the stream is the cancellation).

Two engines behind one interface. Plain `http://` and `https://` URLs without a proxy in the
environment go through `_http11` (keep-alive sockets, tens of microseconds per request);
anything else (a proxy, userinfo in the URL, or an `httpx.Client`/`httpx.AsyncClient` passed
in for custom TLS, auth, transports or mounts) goes through httpx, imported only then.
Both read SSE replies incrementally, and both bound a request by `timeout` end to end for
the lean engine (httpx applies it per connect/read/write and the SSE loop checks a deadline).
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from .. import _json
from .._version import __version__
from ..errors import (
    ConnectError,
    HttpStatusError,
    ProtocolError,
    RequestTimeoutError,
    ResponseLostError,
    TransportError,
)
from ._http11 import AsyncPool, AsyncResponse, HeadBuilder, SyncPool, SyncResponse, lean_origin
from .base import Message, OnNotification, Reply

if TYPE_CHECKING:
    import httpx

BASE_HEADERS: Final[Mapping[str, str]] = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
}
USER_AGENT: Final = f"mcpgen/{__version__}"
_BODY_PREVIEW = 2000

# SSE line terminators: CRLF, LF or CR (WHATWG "event stream interpretation").
_EOL = re.compile(rb"\r\n|\r|\n")


class SseDecoder:
    """Incremental `text/event-stream` parser that yields the `data` payload of each event.

    Comment lines (`:` keep-alives) and the `event`, `id` and `retry` fields are ignored; a
    multi-line `data` field is joined with `\\n`. Chunks may split lines anywhere, including
    between the CR and LF of a CRLF.
    """

    __slots__ = ("_buffer", "_data")

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[bytes] | None = None

    def feed(self, chunk: bytes) -> list[bytes]:
        buffer = self._buffer + chunk if self._buffer else chunk
        events: list[bytes] = []
        start = 0
        end = len(buffer)
        for match in _EOL.finditer(buffer):
            if match.end() == end and match.group() == b"\r":
                break  # may be the first half of a CRLF split across chunks
            self._line(buffer[start : match.start()], events)
            start = match.end()
        self._buffer = buffer[start:]
        return events

    def finish(self) -> list[bytes]:
        """End of stream: flush a final unterminated line and event (lenient with servers
        that close without the closing blank line)."""
        events: list[bytes] = []
        if self._buffer:
            self._line(self._buffer.rstrip(b"\r"), events)
            self._buffer = b""
        self._line(b"", events)
        return events

    def _line(self, line: bytes, events: list[bytes]) -> None:
        if not line:
            if self._data is not None:
                events.append(b"\n".join(self._data))
                self._data = None
            return
        if line[:1] == b":":
            return
        field, _, value = line.partition(b":")
        if field == b"data":
            if value[:1] == b" ":
                value = value[1:]
            if self._data is None:
                self._data = [value]
            else:
                self._data.append(value)


class ResponseStream:
    """Reads one request's SSE reply: notifications go to `on_notification`, and the
    response carrying the request's id ends the read."""

    __slots__ = ("_decoder", "_id", "_on_notification")

    def __init__(self, request_id: Any, on_notification: OnNotification | None) -> None:
        self._decoder = SseDecoder()
        self._id = request_id
        self._on_notification = on_notification

    def feed(self, chunk: bytes) -> Message | None:
        for data in self._decoder.feed(chunk):
            message = self._accept(data)
            if message is not None:
                return message
        return None

    def finish(self) -> Message | None:
        for data in self._decoder.finish():
            message = self._accept(data)
            if message is not None:
                return message
        return None

    def _accept(self, data: bytes) -> Message | None:
        if not data.strip():
            return None
        try:
            message = _json.loads(data)
        except _json.JSONDecodeError as exc:
            raise ProtocolError(f"SSE event data is not JSON: {data[:200]!r}") from exc
        if not isinstance(message, dict):
            raise ProtocolError(f"SSE event is not a JSON-RPC message: {data[:200]!r}")
        if "id" in message:
            if "result" in message or "error" in message:
                msg_id = message["id"]
                # An error with id null answers a request the server could not read: ours.
                if msg_id == self._id or (msg_id is None and "error" in message):
                    return message
            # Responses to other ids and server-sent requests (forbidden, HTTP-15) are dropped.
            return None
        if "method" in message and self._on_notification is not None:
            self._on_notification(message)
        return None


def is_event_stream(content_type: str) -> bool:
    return content_type[:17].lower() == "text/event-stream"


def classify_body(status: int, body: bytes) -> Message:
    """The JSON-RPC message of a non-streamed reply, or the error the HTTP status stands for."""
    if 200 <= status < 300:
        if not body:
            raise ProtocolError(f"HTTP {status} reply to a request has no body")
        try:
            message = _json.loads(body)
        except _json.JSONDecodeError as exc:
            raise ProtocolError(f"HTTP {status} reply is not JSON: {body[:200]!r}") from exc
        if not isinstance(message, dict):
            raise ProtocolError(f"HTTP {status} reply is not a JSON-RPC message: {body[:200]!r}")
        return message
    # A non-2xx reply carrying a JSON-RPC error is the server's answer; the caller raises it
    # with `http_status` (e.g. 400 + -32022, 404 + -32601).
    try:
        message = _json.loads(body) if body else None
    except _json.JSONDecodeError:
        message = None
    if isinstance(message, dict) and isinstance(message.get("error"), dict):
        return message
    raise HttpStatusError(f"HTTP {status} without a JSON-RPC error body", status_code=status,
                          body=body[:_BODY_PREVIEW])


def _transport_error(exc: Exception, url: str) -> TransportError:
    import httpx

    if isinstance(exc, httpx.ConnectTimeout | httpx.ConnectError):
        return ConnectError(f"cannot connect to {url}: {exc}")
    if isinstance(exc, httpx.TimeoutException):
        return RequestTimeoutError(f"no response from {url} in time: {exc}")
    return TransportError(f"HTTP exchange with {url} failed: {type(exc).__name__}: {exc}")


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout


def _stream_ended(url: str) -> TransportError:
    # HTTP-26: the request is lost; a caller may re-issue it with a new id.
    return ResponseLostError(f"SSE response stream from {url} ended before the response")


# -- stream(): every message of one reply, for long-lived replies (subscriptions/listen) ----------


def _event_message(data: bytes) -> Message | None:
    if not data.strip():
        return None
    try:
        message = _json.loads(data)
    except _json.JSONDecodeError as exc:
        raise ProtocolError(f"SSE event data is not JSON: {data[:200]!r}") from exc
    if not isinstance(message, dict):
        raise ProtocolError(f"SSE event is not a JSON-RPC message: {data[:200]!r}")
    return message


def _sse_messages(events: list[bytes]) -> Iterator[Message]:
    for data in events:
        message = _event_message(data)
        if message is not None:
            yield message


def _stream_messages(status: int, content_type: str, chunks: Iterable[bytes]) -> Iterator[Message]:
    if not is_event_stream(content_type):
        yield classify_body(status, b"".join(chunks))
        return
    decoder = SseDecoder()
    for chunk in chunks:
        yield from _sse_messages(decoder.feed(chunk))
    yield from _sse_messages(decoder.finish())


async def _astream_messages(status: int, content_type: str, chunks: AsyncIterable[bytes]) -> AsyncIterator[Message]:
    if not is_event_stream(content_type):
        yield classify_body(status, b"".join([chunk async for chunk in chunks]))
        return
    decoder = SseDecoder()
    async for chunk in chunks:
        for message in _sse_messages(decoder.feed(chunk)):
            yield message
    for message in _sse_messages(decoder.finish()):
        yield message


def _overdue(url: str, timeout: float | None) -> RequestTimeoutError:
    return RequestTimeoutError(f"no response from {url} within {timeout}s")


def _rejected_notification(status: int, body: bytes) -> HttpStatusError:
    return HttpStatusError(f"notification rejected with HTTP {status}", status_code=status,
                           body=body[:_BODY_PREVIEW])


class HttpTransport:
    """Blocking Streamable HTTP transport: pooled keep-alive connections of its own for plain
    http(s) URLs, or one pooled `httpx.Client` (passed in, or made when a proxy applies)."""

    sends_headers = True

    def __init__(self, url: str, *, timeout: float | None = 30.0, client: httpx.Client | None = None) -> None:
        self.url = url
        self._owns_client = client is None
        self._client = client
        self._pool: SyncPool | None = None
        origin = lean_origin(url) if client is None else None
        if origin is not None:
            self._pool = SyncPool(origin, url, timeout=timeout)
            self._heads = HeadBuilder(origin, {**BASE_HEADERS, "User-Agent": USER_AGENT})
        elif client is None:
            import httpx

            self._client = httpx.Client(headers=dict(BASE_HEADERS), timeout=timeout)

    @property
    def engine(self) -> str:
        """"http11" (the lean client) or "httpx"."""
        return "http11" if self._pool is not None else "httpx"

    def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        *,
        timeout: float | None,
        on_notification: OnNotification | None = None,
    ) -> Reply:
        pool = self._pool
        if pool is None:
            return self._httpx_request(message, headers, timeout, on_notification)
        body = _json.dumps(message)
        response = pool.post(self._heads.head(headers, len(body)) + body, timeout)
        try:
            status = response.status
            if is_event_stream(response.headers.get("content-type", "")):
                return self._lean_stream(response, message.get("id"), on_notification), status
            return classify_body(status, response.read()), status
        finally:
            response.close()  # on an unfinished SSE stream this is the cancellation (HTTP-21)

    def _lean_stream(self, response: SyncResponse, request_id: Any, on_notification: OnNotification | None) -> Message:
        stream = ResponseStream(request_id, on_notification)
        for chunk in response.iter_body():  # the pool's deadline bounds every read
            message = stream.feed(chunk)
            if message is not None:
                return message
        message = stream.finish()
        if message is None:
            raise _stream_ended(self.url)
        return message

    def _httpx_request(self, message: Message, headers: Mapping[str, str], timeout: float | None,
                       on_notification: OnNotification | None) -> Reply:
        import httpx

        client = self._client
        assert client is not None
        try:
            response = client.send(
                client.build_request("POST", self.url, content=_json.dumps(message), headers=headers, timeout=timeout),
                stream=True,
            )
        except httpx.HTTPError as exc:
            raise _transport_error(exc, self.url) from exc
        try:
            status = response.status_code
            if is_event_stream(response.headers.get("content-type", "")):
                return self._httpx_stream(response, message.get("id"), timeout, on_notification), status
            return classify_body(status, response.read()), status
        except httpx.HTTPError as exc:
            raise _transport_error(exc, self.url) from exc
        finally:
            response.close()  # on an unfinished SSE stream this is the cancellation (HTTP-21)

    def _httpx_stream(self, response: httpx.Response, request_id: Any, timeout: float | None,
                      on_notification: OnNotification | None) -> Message:
        stream = ResponseStream(request_id, on_notification)
        deadline = _deadline(timeout)
        for chunk in response.iter_bytes():
            message = stream.feed(chunk)
            if message is not None:
                return message
            if deadline is not None and time.monotonic() > deadline:
                raise _overdue(self.url, timeout)
        message = stream.finish()
        if message is None:
            raise _stream_ended(self.url)
        return message

    def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        pool = self._pool
        if pool is not None:
            body = _json.dumps(message)
            response = pool.post(self._heads.head(headers, len(body)) + body, pool.timeout)
            try:
                content = response.read()
            finally:
                response.close()
            if not 200 <= response.status < 300:
                raise _rejected_notification(response.status, content)
            return
        import httpx

        assert self._client is not None
        try:
            reply = self._client.post(self.url, content=_json.dumps(message), headers=headers)
        except httpx.HTTPError as exc:
            raise _transport_error(exc, self.url) from exc
        if not 200 <= reply.status_code < 300:
            raise _rejected_notification(reply.status_code, reply.content)

    def stream(self, message: Message, headers: Mapping[str, str]) -> Iterator[Message]:
        """Send one request and yield every message of its reply as it arrives (notifications,
        then the response), with no deadline: a `subscriptions/listen` reply stays open.
        Closing the iterator closes the reply, which the server takes as cancellation (HTTP-21)."""
        body = _json.dumps(message)
        pool = self._pool
        if pool is not None:
            response = pool.post(self._heads.head(headers, len(body)) + body, None)
            try:
                yield from _stream_messages(response.status, response.headers.get("content-type", ""),
                                            response.iter_body())
            finally:
                response.close()
            return
        import httpx

        assert self._client is not None
        try:
            with self._client.stream("POST", self.url, content=body, headers={**BASE_HEADERS, **headers},
                                     timeout=None) as reply:
                yield from _stream_messages(reply.status_code, reply.headers.get("content-type", ""),
                                            reply.iter_bytes())
        except httpx.HTTPError as exc:
            raise _transport_error(exc, self.url) from exc

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
        elif self._owns_client and self._client is not None:
            self._client.close()


class AsyncHttpTransport:
    """The asyncio twin of `HttpTransport` (asyncio streams, or one pooled `httpx.AsyncClient`)."""

    sends_headers = True

    def __init__(self, url: str, *, timeout: float | None = 30.0, client: httpx.AsyncClient | None = None) -> None:
        self.url = url
        self._owns_client = client is None
        self._client = client
        self._pool: AsyncPool | None = None
        origin = lean_origin(url) if client is None else None
        if origin is not None:
            self._pool = AsyncPool(origin, url, timeout=timeout)
            self._heads = HeadBuilder(origin, {**BASE_HEADERS, "User-Agent": USER_AGENT})
        elif client is None:
            import httpx

            self._client = httpx.AsyncClient(headers=dict(BASE_HEADERS), timeout=timeout)

    @property
    def engine(self) -> str:
        """"http11" (the lean client) or "httpx"."""
        return "http11" if self._pool is not None else "httpx"

    async def request(
        self,
        message: Message,
        headers: Mapping[str, str],
        *,
        timeout: float | None,
        on_notification: OnNotification | None = None,
    ) -> Reply:
        pool = self._pool
        if pool is None:
            return await self._httpx_request(message, headers, timeout, on_notification)
        body = _json.dumps(message)
        response = await pool.post(self._heads.head(headers, len(body)) + body, timeout)
        try:
            status = response.status
            if is_event_stream(response.headers.get("content-type", "")):
                return await self._lean_stream(response, message.get("id"), on_notification), status
            return classify_body(status, await response.read()), status
        finally:
            response.close()

    async def _lean_stream(self, response: AsyncResponse, request_id: Any,
                           on_notification: OnNotification | None) -> Message:
        stream = ResponseStream(request_id, on_notification)
        async for chunk in response.aiter_body():  # the pool's deadline bounds every read
            message = stream.feed(chunk)
            if message is not None:
                return message
        message = stream.finish()
        if message is None:
            raise _stream_ended(self.url)
        return message

    async def _httpx_request(self, message: Message, headers: Mapping[str, str], timeout: float | None,
                             on_notification: OnNotification | None) -> Reply:
        import httpx

        client = self._client
        assert client is not None
        try:
            response = await client.send(
                client.build_request("POST", self.url, content=_json.dumps(message), headers=headers, timeout=timeout),
                stream=True,
            )
        except httpx.HTTPError as exc:
            raise _transport_error(exc, self.url) from exc
        try:
            status = response.status_code
            if is_event_stream(response.headers.get("content-type", "")):
                return await self._httpx_stream(response, message.get("id"), timeout, on_notification), status
            return classify_body(status, await response.aread()), status
        except httpx.HTTPError as exc:
            raise _transport_error(exc, self.url) from exc
        finally:
            await response.aclose()

    async def _httpx_stream(self, response: httpx.Response, request_id: Any, timeout: float | None,
                            on_notification: OnNotification | None) -> Message:
        stream = ResponseStream(request_id, on_notification)
        deadline = _deadline(timeout)
        async for chunk in response.aiter_bytes():
            message = stream.feed(chunk)
            if message is not None:
                return message
            if deadline is not None and time.monotonic() > deadline:
                raise _overdue(self.url, timeout)
        message = stream.finish()
        if message is None:
            raise _stream_ended(self.url)
        return message

    async def notify(self, message: Message, headers: Mapping[str, str]) -> None:
        pool = self._pool
        if pool is not None:
            body = _json.dumps(message)
            response = await pool.post(self._heads.head(headers, len(body)) + body, pool.timeout)
            try:
                content = await response.read()
            finally:
                response.close()
            if not 200 <= response.status < 300:
                raise _rejected_notification(response.status, content)
            return
        import httpx

        assert self._client is not None
        try:
            reply = await self._client.post(self.url, content=_json.dumps(message), headers=headers)
        except httpx.HTTPError as exc:
            raise _transport_error(exc, self.url) from exc
        if not 200 <= reply.status_code < 300:
            raise _rejected_notification(reply.status_code, reply.content)

    async def stream(self, message: Message, headers: Mapping[str, str]) -> AsyncIterator[Message]:
        """The asyncio twin of `HttpTransport.stream` (cancelling the task closes it too)."""
        body = _json.dumps(message)
        pool = self._pool
        if pool is not None:
            response = await pool.post(self._heads.head(headers, len(body)) + body, None)
            try:
                async for item in _astream_messages(response.status, response.headers.get("content-type", ""),
                                                    response.aiter_body()):
                    yield item
            finally:
                response.close()
            return
        import httpx

        assert self._client is not None
        try:
            async with self._client.stream("POST", self.url, content=body, headers={**BASE_HEADERS, **headers},
                                           timeout=None) as reply:
                async for item in _astream_messages(reply.status_code, reply.headers.get("content-type", ""),
                                                    reply.aiter_bytes()):
                    yield item
        except httpx.HTTPError as exc:
            raise _transport_error(exc, self.url) from exc

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.close()
        elif self._owns_client and self._client is not None:
            await self._client.aclose()
