"""The lean engine's asyncio I/O: one connection is one `asyncio.Protocol`.

`_async/pool.py` uses this module where its generated blocking twin uses `sync_backend.py`;
both offer the same names: `now`, `AsyncConnector.connect`/`close`, and a connection with
`send`, `recv`, `stale`, `park`, `drain`, `close` and `reused`.

A protocol is lighter than a StreamReader/StreamWriter pair (one future per wait, nothing
else), which matters at one small request per round trip. The read deadlines of a pool's
connections share one timer (`Watchdog`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

from .http1_wire import Origin

T = TypeVar("T")

PAUSE_ABOVE: Final = 4 * 1024 * 1024  # stop reading while this much is buffered unread
# Bytes per read, into the connection's own buffer: asyncio's default is a fresh 256 KiB bytes
# object per read, which glibc maps and unmaps on every call unless its mmap threshold happens
# to have been raised (~50 µs a call, depending on what the process did before).
READ_SIZE: Final = 64 * 1024


def now() -> float:
    """The clock deadlines are measured on: the running loop's."""
    return asyncio.get_running_loop().time()


class Watchdog:
    """Deadlines of every waiting read of one pool, on one timer.

    A timer per wait (`loop.call_at`, or an `asyncio.timeout()` scope) costs a TimerHandle and
    a heap push and pop each time, and cancelled handles pile up in the loop's heap until their
    time comes. Requests finish long before their deadline, so one timer at the earliest
    deadline, rescheduled only when an earlier one arrives, serves them all.
    """

    __slots__ = ("_handle", "_when", "loop", "waiting")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.waiting: dict[asyncio.Future[None], float] = {}
        self._handle: asyncio.TimerHandle | None = None
        self._when = float("inf")

    def watch(self, waiter: asyncio.Future[None], deadline: float) -> None:
        self.waiting[waiter] = deadline
        if deadline < self._when:
            if self._handle is not None:
                self._handle.cancel()
            self._when = deadline
            self._handle = self.loop.call_at(deadline, self._fire)

    def _fire(self) -> None:
        self._handle = None
        self._when = float("inf")
        now = self.loop.time()
        following = float("inf")
        for waiter, deadline in list(self.waiting.items()):
            if deadline <= now:
                del self.waiting[waiter]
                if not waiter.done():
                    waiter.set_exception(TimeoutError())
            elif deadline < following:
                following = deadline
        if following != float("inf"):
            self._when = following
            self._handle = self.loop.call_at(following, self._fire)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._when = float("inf")


class AsyncConnection(asyncio.BufferedProtocol):
    """One connection as an asyncio protocol: received bytes are kept until `recv()`.
    Reading pauses while a large unread body is waiting."""

    def __init__(self, loop: asyncio.AbstractEventLoop, watchdog: Watchdog) -> None:
        self.loop = loop
        self.watchdog = watchdog
        self.transport: asyncio.Transport | None = None
        self._read_buffer = memoryview(bytearray(READ_SIZE))
        self.reused = False
        self._chunks: list[bytes] = []
        self._buffered = 0
        self._paused = False
        self._waiter: asyncio.Future[None] | None = None
        self._eof = False
        self._error: BaseException | None = None

    # -- protocol callbacks (event loop) --

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._read_buffer

    def buffer_updated(self, nbytes: int) -> None:
        self._chunks.append(self._read_buffer[:nbytes].tobytes())
        self._buffered += nbytes
        if self._buffered > PAUSE_ABOVE and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self._eof = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._eof = True
        self._error = exc
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- used by the pool --

    def send(self, data: bytes, deadline: float | None) -> None:
        """Queue `data` for sending; failures show up on the next `recv()`."""
        assert self.transport is not None
        self.transport.write(data)

    async def recv(self, deadline: float | None) -> bytes:
        """Whatever has arrived (waiting for something), or b"" once the peer closed;
        `TimeoutError` when nothing arrived by `deadline` (loop time)."""
        if not self._chunks:
            if self._eof:
                if self._error is not None:
                    raise self._error
                return b""
            waiter = self.loop.create_future()
            self._waiter = waiter
            if deadline is not None:
                self.watchdog.watch(waiter, deadline)
            try:
                await waiter
            finally:
                self._waiter = None
                if deadline is not None:
                    self.watchdog.waiting.pop(waiter, None)
            if not self._chunks:
                if self._error is not None:
                    raise self._error
                return b""
        return self._take()

    def _take(self) -> bytes:
        chunks = self._chunks
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        self._chunks = []
        self._buffered = 0
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return data

    def park(self) -> None:
        """Back in the pool (nothing to note: `stale` needs no idle time)."""

    def stale(self) -> bool:
        """An idle connection with something received (EOF, stray bytes) or of another loop."""
        return (
            self.loop is not asyncio.get_running_loop()
            or self._eof
            or bool(self._chunks)
            or self.transport is None
            or self.transport.is_closing()
        )

    def drain(self) -> bytes | None:
        """Whatever has already arrived, without waiting (None: nothing)."""
        return self._take() if self._chunks else None

    def close(self) -> None:
        transport = self.transport
        if transport is None:
            return
        if not self.loop.is_closed():
            transport.close()
            return
        # A connection of a finished event loop: tell the server, let GC release the socket.
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class AsyncConnector:
    """Opens a pool's connections on the running loop; their read deadlines share one
    `Watchdog` per pool (replaced when the pool is used from a new event loop)."""

    __slots__ = ("_watchdog",)

    def __init__(self) -> None:
        self._watchdog: Watchdog | None = None

    async def connect(
        self, origin: Origin, context: ssl.SSLContext | None, deadline: float | None
    ) -> AsyncConnection:
        """A connected (and, with `context`, TLS-verified) connection; OSError (TimeoutError
        at `deadline`) when that fails."""
        loop = asyncio.get_running_loop()
        watchdog = self._watchdog
        if watchdog is None or watchdog.loop is not loop:
            if watchdog is not None:
                watchdog.close()
            watchdog = self._watchdog = Watchdog(loop)
        connecting = loop.create_connection(
            lambda: AsyncConnection(loop, watchdog),
            origin.host,
            origin.port,
            ssl=context,
            server_hostname=origin.host if context else None,
        )
        if deadline is None:
            _, conn = await connecting
        else:
            async with asyncio.timeout_at(deadline):
                _, conn = await connecting
        return conn

    def close(self) -> None:
        if self._watchdog is not None and not self._watchdog.loop.is_closed():
            self._watchdog.close()


# -- background work (the legacy session's GET stream: `_async/session_events.py`) -------------


class AsyncWorker:
    """Runs `target()` in a task of its own; `stop()` cancels it."""

    __slots__ = ("_task",)

    def __init__(self, target: Callable[[], Awaitable[None]], name: str) -> None:
        self._task = asyncio.ensure_future(target())
        self._task.set_name(name)

    def stop(self) -> None:
        self._task.cancel()


async def pause(seconds: float) -> None:
    await asyncio.sleep(seconds)


async def within(step: Awaitable[T], deadline: float | None) -> T:
    """`await step`, cut at `deadline` (on `time.monotonic()`) with `TimeoutError`: one deadline
    over a library that bounds each read only (httpx). The blocking twin (`sync_backend.within`)
    is handed the step's value already computed: there each read is bounded, not the sum."""
    if deadline is None:
        return await step
    async with asyncio.timeout(deadline - time.monotonic()):
        return await step


class AsyncMailbox:
    """A bounded queue of messages from one producer task to one reader; `close()` ends it.
    A full mailbox drops what arrives (`put` says False): a flood never grows memory."""

    __slots__ = ("_closed", "_queue")

    def __init__(self, limit: int) -> None:
        self._queue: asyncio.Queue[Any] = asyncio.Queue(limit + 1)  # +1: room for the end mark
        self._closed = False

    def put(self, item: Any) -> bool:
        if self._closed or self._queue.qsize() >= self._queue.maxsize - 1:
            return False
        self._queue.put_nowait(item)
        return True

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(_END)

    async def get(self) -> Any:
        """The next item, or `MAILBOX_END` once closed and emptied."""
        item = await self._queue.get()
        if item is _END:
            self._queue.put_nowait(_END)  # every later get() sees the end too
        return item


_END: Final = object()
MAILBOX_END: Final = _END


class AsyncWaiter:
    """One reply awaited by one task and delivered by another (the HTTP+SSE reader)."""

    __slots__ = ("_future",)

    def __init__(self) -> None:
        self._future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

    def set(self, value: Any) -> None:
        if not self._future.done():
            self._future.set_result(value)

    async def wait(self, timeout: float | None) -> Any:
        """The value; TimeoutError after `timeout` seconds."""
        if timeout is None:
            return await self._future
        async with asyncio.timeout(timeout):
            return await asyncio.shield(self._future)
