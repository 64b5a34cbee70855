"""The lean engine's connection pool and its responses, written once (`scripts/sync_twins.py`
writes the blocking twin, `_sync/pool.py`, from this file).

- Connections to one origin are kept alive and pooled (LIFO, `max_idle` per pool); the
  blocking pool is thread-safe, the asyncio one serves one event loop at a time (a pooled
  connection of another loop is stale). A blocking connection idle for more than a second is
  checked for a server-side close before reuse.
- A request on a reused connection that fails before any response byte arrived is retried
  once on a new connection: the server had closed the idle connection, so it processed
  nothing. Nothing else is ever retried.
- One deadline covers the whole exchange (connect, send, every read of the head and body).
- A reply read to its end returns its connection to the pool; one closed before its end
  closes the connection (HTTP-21 cancellation) unless its end is already waiting in the
  socket, which is then read and the connection kept.
- Failures map to `ConnectError`, `RequestTimeoutError` and `TransportError` (`failures.py`).
- A body is bounded by `max_body` (`limits.py`): a Content-Length over it, or a compressed
  reply, is refused at the head; chunked and close-delimited bodies are counted.

HTTP parsing lives in `http1_wire.py`; the connections in `asyncio_backend.py` / `sync_backend.py`.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from typing import Final

from ...errors import McpRuntimeError, TransportError
from ..asyncio_backend import AsyncConnection, AsyncConnector, now
from ..failures import RETRYABLE, connect_failed, exchange_failed, timed_out
from ..http1_wire import (
    BodyDecoder,
    Origin,
    ResponseHead,
    ReusedConnectionLost,
    default_ssl_context,
    final_head,
)
from ..limits import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Deadline,
    Timeout,
    expiry,
    refuse_encoding,
    start_deadline,
    too_large,
)

DEFAULT_MAX_IDLE: Final = 16


class AsyncPool:
    """Keep-alive connections to one origin."""

    def __init__(
        self,
        origin: Origin,
        url: str,
        *,
        timeout: float | None,
        ssl_context: ssl.SSLContext | None = None,
        max_idle: int = DEFAULT_MAX_IDLE,
        max_body: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        self.origin = origin
        self.url = url
        self.timeout = timeout
        self.max_body = max_body
        self.max_idle = max_idle
        self._ssl = ssl_context
        self._idle: list[AsyncConnection] = []
        self._closed = False
        self._connector = AsyncConnector()

    async def _connect(self, deadline: float | None) -> AsyncConnection:
        context: ssl.SSLContext | None = None
        if self.origin.scheme == "https":
            if self._ssl is None:
                self._ssl = default_ssl_context()
            context = self._ssl
        try:
            return await self._connector.connect(self.origin, context, deadline)
        except OSError as exc:  # a connect timeout too
            raise connect_failed(self.url, exc) from exc

    def _checkout(self) -> AsyncConnection | None:
        idle = self._idle
        while idle:
            try:
                conn = idle.pop()
            except IndexError:  # another thread took it
                return None
            if conn.stale():
                conn.close()
                continue
            conn.reused = True
            return conn
        return None

    def release(self, conn: AsyncConnection) -> None:
        if self._closed or len(self._idle) >= self.max_idle:
            conn.close()
        else:
            conn.park()
            self._idle.append(conn)

    async def post(self, payload: bytes, timeout: Timeout) -> AsyncResponse:
        """Send `payload` (a complete request) and read the reply head; `timeout` bounds the
        whole exchange, the body included (a `Deadline` is read again before each wait)."""
        deadline = start_deadline(timeout, now)
        conn = self._checkout()
        if conn is not None:
            try:
                return await self._exchange(conn, payload, deadline, timeout)
            except ReusedConnectionLost:
                pass
        conn = await self._connect(expiry(deadline, now))
        try:
            return await self._exchange(conn, payload, deadline, timeout)
        except ReusedConnectionLost as exc:  # a fresh connection is never retried
            raise exchange_failed(self.url, exc.__cause__ or exc) from exc.__cause__

    async def _exchange(
        self,
        conn: AsyncConnection,
        payload: bytes,
        deadline: float | Deadline | None,
        timeout: Timeout,
    ) -> AsyncResponse:
        received = False
        try:
            send_error: OSError | None = None
            try:
                conn.send(payload, expiry(deadline, now))
            except RETRYABLE as exc:
                send_error = exc  # the server may still have answered (an early reply); read it
            buffer = b""
            while True:
                try:
                    data = await conn.recv(expiry(deadline, now))
                except RETRYABLE as exc:
                    if not received and conn.reused:
                        raise ReusedConnectionLost from exc
                    raise
                if not data:
                    if not received and conn.reused:
                        raise ReusedConnectionLost from send_error
                    if send_error is not None:
                        raise send_error
                    raise TransportError(
                        f"{self.url} closed the connection without a complete response head", retryable=True
                    )
                received = True
                head, buffer = final_head(buffer + data, self.url)
                if head is not None:
                    if head.length > self.max_body:  # a Content-Length over the limit: no body byte read
                        raise too_large(self.url, self.max_body)
                    if "content-encoding" in head.headers:
                        refuse_encoding(head.headers, self.url)
                    response = AsyncResponse(self, conn, head, deadline, timeout)
                    response._feed(buffer)
                    return response
        except (ReusedConnectionLost, McpRuntimeError):
            conn.close()
            raise
        except TimeoutError as exc:
            conn.close()
            raise timed_out(self.url, timeout) from exc
        except OSError as exc:
            conn.close()
            raise exchange_failed(self.url, exc) from exc
        except BaseException:  # interrupted or cancelled: the connection is mid-exchange
            conn.close()
            raise

    def close(self) -> None:
        self._closed = True
        while self._idle:
            self._idle.pop().close()
        self._connector.close()


class AsyncResponse:
    """A reply whose head has been read; read the body whole (`aread`) or as it arrives
    (`aiter_body`), then close it (`aclose`)."""

    __slots__ = (
        "_conn",
        "_deadline",
        "_decoder",
        "_pending",
        "_pool",
        "_timeout",
        "head",
        "headers",
        "status",
    )

    def __init__(
        self,
        pool: AsyncPool,
        conn: AsyncConnection,
        head: ResponseHead,
        deadline: float | Deadline | None,
        timeout: Timeout,
    ) -> None:
        self._pool = pool
        self._conn: AsyncConnection | None = conn
        self._deadline = deadline
        self._timeout = timeout
        self._decoder = BodyDecoder(head, pool.max_body, pool.url)
        self._pending: list[bytes] = []
        self.head = head
        self.status = head.status
        self.headers = head.headers

    def _feed(self, data: bytes) -> None:
        if data:
            self._pending.extend(self._decoder.feed(data))
        if self._decoder.done:
            self._finish()

    def _finish(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self.head.keep_alive and not self._decoder.extra and self._decoder.framing != "close":
            self._pool.release(conn)
        else:
            conn.close()

    def _abort(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    async def linger(self, seconds: float) -> None:
        """Wait up to `seconds` for the rest of the body, so that a reply whose end follows
        closely (a legacy SSE reply, ended right after its response) keeps its connection."""
        deadline = now() + seconds
        try:
            while self._conn is not None and not self._decoder.done:
                data = await self._conn.recv(deadline)
                if not data:
                    return
                self._feed(data)
        except (OSError, McpRuntimeError):  # TimeoutError included: aclose() closes it then
            return

    def forever(self) -> None:
        """No deadline and no body budget for the rest of the body (a long-lived event stream:
        its events are bounded one by one, `sse_reader.SseDecoder`)."""
        self._deadline = None
        self._decoder.budget = None

    def abort(self) -> None:
        """Close the connection now, from any thread: a read blocked on it ends."""
        conn = self._conn
        if conn is not None:
            conn.close()

    async def aiter_body(self) -> AsyncIterator[bytes]:
        """Decoded body pieces as they arrive."""
        while True:
            if self._pending:
                pieces, self._pending = self._pending, []
                for piece in pieces:
                    yield piece
            conn = self._conn
            if conn is None:
                return
            try:
                data = await conn.recv(expiry(self._deadline, now))
            except TimeoutError as exc:
                self._abort()
                raise timed_out(self._pool.url, self._timeout) from exc
            except OSError as exc:
                self._abort()
                raise exchange_failed(self._pool.url, exc) from exc
            except BaseException:
                self._abort()
                raise
            if not data:
                try:
                    self._decoder.eof()
                finally:
                    self._abort()
                return
            try:
                self._feed(data)
            except McpRuntimeError:
                self._abort()
                raise

    async def aread(self) -> bytes:
        if self._conn is None:  # the whole body came with the head: no iterator needed
            pieces, self._pending = self._pending, []
            return pieces[0] if len(pieces) == 1 else b"".join(pieces)
        return b"".join([piece async for piece in self.aiter_body()])

    async def aclose(self) -> None:
        """Done with the reply: an unfinished body closes the connection (HTTP-21), unless its
        end is already waiting in the socket (then the connection goes back to the pool)."""
        conn = self._conn
        if conn is None:
            return
        try:
            while not self._decoder.done:
                data = conn.drain()
                if not data:
                    break
                self._decoder.feed(data)
        except (OSError, McpRuntimeError):
            pass
        if self._decoder.done:
            self._pending = []
            self._finish()
        else:
            self._conn = None
            conn.close()
