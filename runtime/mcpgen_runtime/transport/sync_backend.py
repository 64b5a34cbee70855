"""The lean engine's blocking I/O: one connection is one blocking socket.

`_sync/pool.py` (generated from `_async/pool.py`) uses this module where the asyncio pool
uses `asyncio_backend.py`; both offer the same names: `now`, `Connector.connect`/`close`,
and a `Connection` with `send`, `recv`, `stale`, `park`, `drain`, `close` and `reused`.

Plain TCP sockets stay in blocking mode and get their deadline from SO_RCVTIMEO/SO_SNDTIMEO,
set only when it changes: a Python-level socket timeout would poll() before every recv and
send (two syscalls for one). TLS sockets use Python timeouts (the kernel ones would cut a
TLS record in half).
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import struct
import sys
import threading
import time
from collections.abc import Callable
from queue import Full, Queue
from typing import Any, Final, TypeVar

from .http1_wire import Origin

T = TypeVar("T")

# Reads stay below glibc's mmap threshold (128 KiB): a larger buffer per recv() is mapped and
# unmapped on every call unless the allocator happened to raise its threshold earlier (~50 µs a
# call, depending on what the process did before).
READ_SIZE: Final = 64 * 1024
IDLE_CHECK_AFTER: Final = 1.0  # seconds idle after which a pooled connection is polled before reuse

_KERNEL_TIMEOUTS: Final = sys.platform.startswith(("linux", "darwin", "freebsd"))
_NO_TIMEOUT: Final = struct.pack("@ll", 0, 0)

# The clock deadlines and a pooled connection's idleness are measured on. `park` and `stale` read
# it at each call, so a test can drive idleness without sleeping: `monkeypatch.setattr(sync_backend,
# "now", ...)` (the pool's deadlines keep the clock it imported).
now = time.monotonic


def _timeval(seconds: float) -> bytes:
    seconds = max(seconds, 0.001)  # 0 would mean "no timeout"
    whole = int(seconds)
    return struct.pack("@ll", whole, int((seconds - whole) * 1_000_000))


class Connection:
    """One blocking socket to the origin, with its deadlines in the kernel where it can."""

    __slots__ = ("idle_since", "kernel_timeouts", "poller", "rcvtimeo", "reused", "sndtimeo", "sock")

    def __init__(self, sock: socket.socket, *, tls: bool) -> None:
        self.sock = sock
        self.reused = False
        self.idle_since = 0.0
        self.poller = select.poll()
        self.poller.register(sock.fileno(), select.POLLIN | select.POLLPRI)
        self.kernel_timeouts = _KERNEL_TIMEOUTS and not tls
        self.rcvtimeo: float | None = None  # what SO_RCVTIMEO is set to (None: no timeout)
        self.sndtimeo: float | None = None
        if self.kernel_timeouts:
            sock.settimeout(None)

    def _arm(self, option: int, current: float | None, remaining: float | None) -> float | None:
        """Set SO_RCVTIMEO/SO_SNDTIMEO to `remaining` unless it is already within 1% + 1 ms."""
        if remaining is None:
            if current is not None:
                self.sock.setsockopt(socket.SOL_SOCKET, option, _NO_TIMEOUT)
            return None
        if current is None or abs(current - remaining) > 0.001 + 0.01 * remaining:
            self.sock.setsockopt(socket.SOL_SOCKET, option, _timeval(remaining))
            return remaining
        return current

    def send(self, data: bytes, deadline: float | None) -> None:
        """All of `data`, or TimeoutError at `deadline`."""
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            raise TimeoutError
        sock = self.sock
        if not self.kernel_timeouts:
            sock.settimeout(remaining)
            sock.sendall(data)
            return
        self.sndtimeo = self._arm(socket.SO_SNDTIMEO, self.sndtimeo, remaining)
        try:
            sock.sendall(data)
        except BlockingIOError as exc:  # SO_SNDTIMEO expired
            raise TimeoutError from exc

    def recv(self, deadline: float | None) -> bytes:
        """What arrived (b"" at EOF); TimeoutError when nothing did by `deadline`."""
        sock = self.sock
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise TimeoutError
            if not self.kernel_timeouts:
                sock.settimeout(remaining)
                return sock.recv(READ_SIZE)
            self.rcvtimeo = self._arm(socket.SO_RCVTIMEO, self.rcvtimeo, remaining)
            try:
                return sock.recv(READ_SIZE)
            except BlockingIOError:  # SO_RCVTIMEO expired (perhaps within the tolerance: look again)
                continue

    def park(self) -> None:
        """Back in the pool: idle from now."""
        self.idle_since = now()

    def stale(self) -> bool:
        """An idle connection with something to read is closing (EOF) or out of sync; on TLS
        the something may also be a record without data (a TLS 1.3 session ticket). Checked
        only after a second of idleness: a close racing a quicker reuse is caught by the retry."""
        if now() - self.idle_since < IDLE_CHECK_AFTER:
            return False
        sock = self.sock
        if not isinstance(sock, ssl.SSLSocket):
            return bool(self.poller.poll(0))
        if not sock.pending() and not self.poller.poll(0):
            return False
        try:
            sock.settimeout(0.0)
            sock.recv(1)  # data or EOF: either way the connection is unusable now
        except ssl.SSLWantReadError:
            return False  # only TLS housekeeping was waiting
        except OSError:
            pass
        return True

    def drain(self) -> bytes | None:
        """Whatever is already waiting in the socket, without blocking (None: nothing)."""
        if not self.poller.poll(0):
            return None
        sock = self.sock
        sock.setblocking(False)
        try:
            return sock.recv(READ_SIZE)
        except (BlockingIOError, ssl.SSLWantReadError):
            return None
        finally:
            if self.kernel_timeouts:
                sock.setblocking(True)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            # shutdown first: a read blocked in another thread (the legacy GET stream's) wakes up
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()


class Connector:
    """Opens a pool's connections (blocking: nothing to keep between them)."""

    __slots__ = ()

    def connect(self, origin: Origin, context: ssl.SSLContext | None, deadline: float | None) -> Connection:
        """A connected (and, with `context`, TLS-verified) connection; OSError when that fails."""
        timeout = None if deadline is None else max(deadline - time.monotonic(), 0.001)
        sock = socket.create_connection((origin.host, origin.port), timeout=timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if context is not None:
                sock = context.wrap_socket(sock, server_hostname=origin.host)
        except BaseException:
            sock.close()
            raise
        return Connection(sock, tls=context is not None)

    def close(self) -> None:
        pass


# -- background work (the legacy session's GET stream: `_sync/session_events.py`) --------------


class Worker:
    """Runs `target()` on a daemon thread; `stop()` only marks it: the target notices when its
    blocked read is ended by closing the response it reads."""

    __slots__ = ("_thread",)

    def __init__(self, target: Callable[[], None], name: str) -> None:
        self._thread = threading.Thread(target=target, name=name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        pass


def pause(seconds: float) -> None:
    time.sleep(seconds)


def within(value: T, deadline: float | None) -> T:
    """The blocking side of `asyncio_backend.within`: the step has run already (each of its
    reads bounded by the library's own timeout); the caller checks `deadline` between steps."""
    return value


class Mailbox:
    """A bounded queue of messages from one producer thread to one reader; `close()` ends it.
    A full mailbox drops what arrives (`put` says False): a flood never grows memory."""

    __slots__ = ("_closed", "_queue")

    def __init__(self, limit: int) -> None:
        self._queue: Queue[Any] = Queue(limit + 1)  # +1: room for the end mark
        self._closed = False

    def put(self, item: Any) -> bool:
        if self._closed or self._queue.qsize() >= self._queue.maxsize - 1:
            return False
        try:
            self._queue.put_nowait(item)
        except Full:
            return False
        return True

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Full):
                self._queue.put_nowait(_END)

    def get(self) -> Any:
        """The next item, or `MAILBOX_END` once closed and emptied."""
        item = self._queue.get()
        if item is _END:
            with contextlib.suppress(Full):
                self._queue.put_nowait(_END)
        return item


_END: Final = object()
MAILBOX_END: Final = _END


class Waiter:
    """One reply awaited by one thread and delivered by another (the HTTP+SSE reader)."""

    __slots__ = ("_event", "_value")

    def __init__(self) -> None:
        self._event = threading.Event()
        self._value: Any = None

    def set(self, value: Any) -> None:
        if not self._event.is_set():
            self._value = value
            self._event.set()

    def wait(self, timeout: float | None) -> Any:
        """The value; TimeoutError after `timeout` seconds."""
        if not self._event.wait(timeout):
            raise TimeoutError
        return self._value
