"""The two HTTP engines behind one interface (`AsyncEngine`, `interfaces.py`): `post` a body, get a
response with `status`, `headers`, the body whole (`aread`) or as it arrives (`aiter_body`), and
`aclose` it.

- `AsyncLeanEngine`: the lean HTTP/1.1 pool (`pool.py`), for plain `http://` and `https://`
  URLs without a proxy in the environment: keep-alive sockets, tens of microseconds per
  request, one deadline per request covering the whole exchange.
- `AsyncHttpxEngine`: httpx, imported only then, for anything else (a proxy, userinfo in the
  URL, or an httpx client passed in for custom TLS, auth, transports or mounts). httpx applies
  a timeout to each connect/read/write; the request's one deadline is laid over the whole
  exchange (asyncio: each step is cut at it, `within`; blocking: checked between body pieces,
  each read bounded by httpx). httpx failures become the lean engine's errors (`failures.py`).

Both engines bound a body by `max_body` and refuse compressed replies (`limits.py`), and hand each
request's headers to `sign` when one is set (`interfaces.RequestSigner`: a DPoP proof per request).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

from ...errors import McpRuntimeError
from ..asyncio_backend import within
from ..failures import from_httpx, shown_url, timed_out
from ..http1_wire import HeadBuilder, Origin, lean_origin
from ..limits import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Deadline,
    Timeout,
    declared_length,
    expiry,
    refuse_encoding,
    start_deadline,
    too_large,
)
from ..sse_reader import BASE_HEADERS, USER_AGENT
from .interfaces import AsyncEngine, RequestSigner
from .pool import AsyncPool, AsyncResponse

if TYPE_CHECKING:
    import httpx


def open_engine(
    url: str,
    timeout: float | None,
    client: httpx.AsyncClient | None,
    max_body: int = DEFAULT_MAX_RESPONSE_BYTES,
    sign: RequestSigner | None = None,
) -> AsyncEngine:
    """The lean engine when it can serve `url` and no httpx client was given, else httpx."""
    origin = lean_origin(url) if client is None else None
    engine: AsyncEngine = (
        AsyncLeanEngine(origin, url, timeout, max_body)
        if origin is not None
        else AsyncHttpxEngine(url, timeout, client, max_body)
    )
    engine.sign = sign
    return engine


class AsyncLeanEngine:
    name = "http11"
    sign: RequestSigner | None = None

    def __init__(
        self, origin: Origin, url: str, timeout: float | None, max_body: int = DEFAULT_MAX_RESPONSE_BYTES
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.max_body = max_body
        self.pool = AsyncPool(origin, shown_url(url), timeout=timeout, max_body=max_body)
        self.heads = HeadBuilder(origin, {**BASE_HEADERS, "User-Agent": USER_AGENT})

    async def post(self, body: bytes, headers: Mapping[str, str], timeout: Timeout) -> AsyncResponse:
        if self.sign is not None:
            headers = self.sign("POST", self.url, headers)
        return await self.pool.post(self.heads.head(headers, len(body)) + body, timeout)

    async def bare(self, method: str, headers: Mapping[str, str], timeout: Timeout) -> AsyncResponse:
        if self.sign is not None:
            headers = self.sign(method, self.url, headers)
        return await self.pool.post(self.heads.bare(method, headers), timeout)

    async def aclose(self) -> None:
        self.pool.close()


class AsyncHttpxEngine:
    name = "httpx"
    sign: RequestSigner | None = None

    def __init__(
        self,
        url: str,
        timeout: float | None,
        client: httpx.AsyncClient | None,
        max_body: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        import httpx

        self.url = url
        self.shown_url = shown_url(url)  # for messages
        self.timeout = timeout
        self.max_body = max_body
        self._owns_client = client is None
        self._client = (
            httpx.AsyncClient(headers=dict(BASE_HEADERS), timeout=timeout) if client is None else client
        )

    async def post(self, body: bytes, headers: Mapping[str, str], timeout: Timeout) -> AsyncHttpxResponse:
        return await self._send("POST", body, headers, timeout)

    async def bare(self, method: str, headers: Mapping[str, str], timeout: Timeout) -> AsyncHttpxResponse:
        return await self._send(method, None, headers, timeout)

    async def _send(
        self, method: str, body: bytes | None, headers: Mapping[str, str], timeout: Timeout
    ) -> AsyncHttpxResponse:
        import httpx

        client = self._client
        if self.sign is not None:
            headers = self.sign(method, self.url, headers)
        merged = httpx.Headers(BASE_HEADERS)  # a client passed in may lack them (HTTP-07)
        merged.update(headers)
        # httpx bounds each read: by the silence a `Deadline` allows (the whole budget without one)
        per_read = (timeout.timeout or timeout.max_time) if isinstance(timeout, Deadline) else timeout
        request = client.build_request(method, self.url, content=body, headers=merged, timeout=per_read)
        deadline = start_deadline(timeout, time.monotonic)
        try:
            response = await within(client.send(request, stream=True), expiry(deadline, time.monotonic))
        except httpx.HTTPError as exc:
            raise from_httpx(exc, self.shown_url, timeout) from exc
        except TimeoutError as exc:
            raise timed_out(self.shown_url, timeout) from exc
        try:
            length = declared_length(response.headers)
            if length is not None and length > self.max_body:  # refused before a body byte is read
                raise too_large(self.shown_url, self.max_body)
            refuse_encoding(response.headers, self.shown_url)
        except McpRuntimeError:
            await response.aclose()
            raise
        return AsyncHttpxResponse(response, self.shown_url, timeout, deadline, self.max_body)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


class AsyncHttpxResponse:
    """An httpx response as the engine interface has it: failures mapped, the body bounded by
    the request's deadline and `max_body` (both lifted by `forever`)."""

    __slots__ = (
        "_budget",
        "_chunks",
        "_deadline",
        "_limit",
        "_response",
        "_timeout",
        "_url",
        "headers",
        "status",
    )

    def __init__(
        self,
        response: httpx.Response,
        url: str,
        timeout: Timeout,
        deadline: float | Deadline | None,
        max_body: int,
    ) -> None:
        self._response = response
        self._url = url
        self._timeout = timeout
        self._deadline = deadline
        self._limit = max_body
        self._budget: int | None = max_body
        self._chunks: AsyncIterator[bytes] | None = None  # one raw iterator: a stream may be read in turns
        self.status = response.status_code
        self.headers = response.headers

    async def aread(self) -> bytes:
        return b"".join([chunk async for chunk in self.aiter_body()])

    async def aiter_body(self) -> AsyncIterator[bytes]:
        import httpx

        if self._chunks is None:
            self._chunks = self._response.aiter_bytes()  # as sent: an encoded reply was refused at the head
        chunks = self._chunks
        try:
            while True:
                try:
                    chunk = await within(anext(chunks), expiry(self._deadline, time.monotonic))
                except StopAsyncIteration:
                    return
                if self._budget is not None:
                    self._budget -= len(chunk)
                    if self._budget < 0:
                        raise too_large(self._url, self._limit)
                yield chunk
                ends = expiry(self._deadline, time.monotonic)
                if ends is not None and time.monotonic() > ends:
                    raise timed_out(
                        self._url, self._timeout
                    )  # the blocking side: httpx bounds each read only
        except httpx.HTTPError as exc:
            raise from_httpx(exc, self._url, self._timeout) from exc
        except TimeoutError as exc:
            raise timed_out(self._url, self._timeout) from exc

    async def aclose(self) -> None:
        await self._response.aclose()

    async def linger(self, seconds: float) -> None:
        pass  # httpx keeps or drops the connection itself

    def forever(self) -> None:
        self._deadline = None  # httpx still bounds each read: a quiet stream ends, and is resumed
        self._budget = None  # its events are bounded one by one (`sse_reader.SseDecoder`)

    def abort(self) -> None:
        pass  # httpx offers no cross-thread close; the stream ends at its next read timeout
