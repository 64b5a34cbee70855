"""The two HTTP engines behind one interface: `post` a body, get a response with `status`,
`headers`, the body whole (`aread`) or as it arrives (`aiter_body`), and `aclose` it.

- `AsyncLeanEngine`: the lean HTTP/1.1 pool (`pool.py`), for plain `http://` and `https://`
  URLs without a proxy in the environment: keep-alive sockets, tens of microseconds per
  request, one deadline per request covering the whole exchange.
- `AsyncHttpxEngine`: httpx, imported only then, for anything else (a proxy, userinfo in the
  URL, or an httpx client passed in for custom TLS, auth, transports or mounts). httpx applies
  a timeout to each connect/read/write; a body read as it arrives also checks the request's
  deadline between pieces. httpx failures become the lean engine's errors (`failures.py`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Protocol

from ..failures import from_httpx, timed_out
from ..http11 import HeadBuilder, Origin, lean_origin
from ..streamable import BASE_HEADERS, USER_AGENT
from .pool import AsyncPool, AsyncResponse

if TYPE_CHECKING:
    import httpx


class AsyncEngineResponse(Protocol):
    """A reply whose head has arrived."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    async def aread(self) -> bytes: ...

    def aiter_body(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None:
        """Done with it: closing an unfinished body is the cancellation (HTTP-21)."""

    def forever(self) -> None:
        """Lift the deadline for the rest of the body (a long-lived event stream)."""

    async def linger(self, seconds: float) -> None:
        """Wait briefly for the rest of the body (its connection is then kept)."""

    def abort(self) -> None:
        """Close it now, from any thread (best effort)."""


class AsyncEngine(Protocol):
    name: str
    timeout: float | None  # for POSTs that carry no request (notifications, answers to the peer)

    async def post(self, body: bytes, headers: Mapping[str, str], timeout: float | None) -> AsyncEngineResponse:
        """POST `body` (JSON) with `headers` on top of `BASE_HEADERS`; `timeout` None: no deadline."""
        ...

    async def bare(self, method: str, headers: Mapping[str, str], timeout: float | None) -> AsyncEngineResponse:
        """A request without a body (`GET`, `DELETE`: the legacy session's)."""
        ...

    async def aclose(self) -> None: ...


def open_engine(url: str, timeout: float | None, client: httpx.AsyncClient | None) -> AsyncEngine:
    """The lean engine when it can serve `url` and no httpx client was given, else httpx."""
    origin = lean_origin(url) if client is None else None
    if origin is not None:
        return AsyncLeanEngine(origin, url, timeout)
    return AsyncHttpxEngine(url, timeout, client)


class AsyncLeanEngine:
    name = "http11"

    def __init__(self, origin: Origin, url: str, timeout: float | None) -> None:
        self.timeout = timeout
        self.pool = AsyncPool(origin, url, timeout=timeout)
        self.heads = HeadBuilder(origin, {**BASE_HEADERS, "User-Agent": USER_AGENT})

    async def post(self, body: bytes, headers: Mapping[str, str], timeout: float | None) -> AsyncResponse:
        return await self.pool.post(self.heads.head(headers, len(body)) + body, timeout)

    async def bare(self, method: str, headers: Mapping[str, str], timeout: float | None) -> AsyncResponse:
        return await self.pool.post(self.heads.bare(method, headers), timeout)

    async def aclose(self) -> None:
        self.pool.close()


class AsyncHttpxEngine:
    name = "httpx"

    def __init__(self, url: str, timeout: float | None, client: httpx.AsyncClient | None) -> None:
        import httpx

        self.url = url
        self.timeout = timeout
        self._owns_client = client is None
        self._client = httpx.AsyncClient(headers=dict(BASE_HEADERS), timeout=timeout) if client is None else client

    async def post(self, body: bytes, headers: Mapping[str, str], timeout: float | None) -> AsyncHttpxResponse:
        return await self._send("POST", body, headers, timeout)

    async def bare(self, method: str, headers: Mapping[str, str], timeout: float | None) -> AsyncHttpxResponse:
        return await self._send(method, None, headers, timeout)

    async def _send(self, method: str, body: bytes | None, headers: Mapping[str, str],
                    timeout: float | None) -> AsyncHttpxResponse:
        import httpx

        client = self._client
        merged = httpx.Headers(BASE_HEADERS)  # a client passed in may lack them (HTTP-07)
        merged.update(headers)
        request = client.build_request(method, self.url, content=body, headers=merged, timeout=timeout)
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise from_httpx(exc, self.url) from exc
        return AsyncHttpxResponse(response, self.url, timeout)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


class AsyncHttpxResponse:
    """An httpx response as the engine interface has it, failures mapped."""

    __slots__ = ("_response", "_timeout", "_url", "headers", "status")

    def __init__(self, response: httpx.Response, url: str, timeout: float | None) -> None:
        self._response = response
        self._url = url
        self._timeout = timeout
        self.status = response.status_code
        self.headers = response.headers

    async def aread(self) -> bytes:
        import httpx

        try:
            return await self._response.aread()
        except httpx.HTTPError as exc:
            raise from_httpx(exc, self._url) from exc

    async def aiter_body(self) -> AsyncIterator[bytes]:
        import httpx

        deadline = None if self._timeout is None else time.monotonic() + self._timeout
        try:
            async for chunk in self._response.aiter_bytes():
                yield chunk
                if deadline is not None and time.monotonic() > deadline:
                    raise timed_out(self._url, self._timeout)  # httpx bounds each read, not the stream
        except httpx.HTTPError as exc:
            raise from_httpx(exc, self._url) from exc

    async def aclose(self) -> None:
        await self._response.aclose()

    async def linger(self, seconds: float) -> None:
        pass  # httpx keeps or drops the connection itself

    def forever(self) -> None:
        self._timeout = None  # httpx still bounds each read: a quiet stream ends, and is resumed

    def abort(self) -> None:
        pass  # httpx offers no cross-thread close; the stream ends at its next read timeout
