"""A lean HTTP/1.1 client for the Streamable HTTP transport: POST a body, read the reply.

Why: a tool call is one small POST and one small reply, and a general-purpose client (httpx
over h11/httpcore) spends ~0.8 ms of CPU per request on it; this module spends tens of
microseconds. It speaks just what the transport needs, for plain `http://` and `https://`
(stdlib `ssl`) origins without a proxy; `http.py` keeps httpx for everything else.

- Connections are kept alive and pooled (LIFO, `max_idle` per pool). A pooled connection
  idle for more than a second is checked for a server-side close before reuse; and a request
  on a reused connection that fails before any response byte arrived is retried once on a
  new connection: the server had closed the idle connection, so it processed nothing.
  Nothing else is ever retried.
- Replies are framed by Content-Length, chunked transfer coding, or connection close; 1xx
  interim responses are skipped. Bodies can be read whole or as decoded pieces as they
  arrive (SSE). A reply not read to its end closes its connection (HTTP-21 cancellation),
  unless its end is already waiting in the socket.
- One deadline covers the whole exchange (connect, send, every read).
- Request heads are built from validated pieces: header names must be tokens, values must
  be ASCII without control characters (no CR/LF injection); Content-Length and
  Transfer-Encoding belong to the transport.
- Failures map to `ConnectError` (could not connect, including a connect timeout and TLS
  verification), `RequestTimeoutError` (no complete reply in time) and `TransportError`.

Sync connections are blocking sockets; on plain TCP the deadline is enforced by the kernel
(SO_RCVTIMEO/SO_SNDTIMEO, set only when it changes), since a Python socket timeout costs a
poll() before every recv and send. Async connections are `asyncio.Protocol`s (one future per
wait, no StreamReader machinery) whose deadlines share one timer per pool (`_Watchdog`). The
HTTP parsing is sans-I/O (`parse_head`, `BodyDecoder`) and shared by both.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import select
import socket
import ssl
import struct
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Final, NamedTuple
from urllib.parse import urlsplit

from ..errors import ConnectError, RequestTimeoutError, TransportError
from ..protocol.headers import FIELD_VALUE, TOKEN

__all__ = [
    "AsyncPool",
    "AsyncResponse",
    "BodyDecoder",
    "HeadBuilder",
    "Origin",
    "ResponseHead",
    "SyncPool",
    "SyncResponse",
    "lean_origin",
    "parse_head",
]

MAX_HEAD_BYTES: Final = 64 * 1024
READ_SIZE: Final = 256 * 1024
DEFAULT_MAX_IDLE: Final = 16
_PAUSE_ABOVE: Final = 4 * 1024 * 1024  # async: stop reading while this much is buffered unread

_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}\Z")
_RESERVED = frozenset({"content-length", "transfer-encoding"})
_NO_BODY_STATUS = frozenset({204, 304})
_RETRYABLE = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)


# -- origins ------------------------------------------------------------------------------------


class Origin(NamedTuple):
    scheme: str  # "http" | "https"
    host: str  # for connecting: no IPv6 brackets
    port: int
    target: str  # request-target: path and query
    host_header: str  # Host: value (brackets, port when not the default)


def lean_origin(url: str) -> Origin | None:
    """The origin when the lean client can serve `url`: http(s), no userinfo, no proxy from the
    environment (HTTP(S)_PROXY / ALL_PROXY, unless NO_PROXY excludes the host). None otherwise."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in ("http", "https") or not host or parts.username is not None or "@" in parts.netloc:
        return None
    proxies = urllib.request.getproxies_environment()
    if (proxies.get(scheme) or proxies.get("all")) and not urllib.request.proxy_bypass(
        host if port is None else f"{host}:{port}"
    ):
        return None
    default = 443 if scheme == "https" else 80
    port = default if port is None else port
    bracketed = f"[{host}]" if ":" in host else host
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Origin(scheme, host, port, target, bracketed if port == default else f"{bracketed}:{port}")


def default_ssl_context() -> ssl.SSLContext:
    """Verified TLS like httpx's default: SSL_CERT_FILE / SSL_CERT_DIR, else certifi, else the system store."""
    if os.environ.get("SSL_CERT_FILE"):
        return ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
    if os.environ.get("SSL_CERT_DIR"):
        return ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
    try:
        import certifi
    except ImportError:  # pragma: no cover - certifi comes with httpx
        return ssl.create_default_context()
    return ssl.create_default_context(cafile=certifi.where())


# -- request heads ------------------------------------------------------------------------------

_VALID_NAMES: dict[str, str] = {}  # header name -> lower-case name, for names already checked


def _lower_name(name: str) -> str:
    lower = _VALID_NAMES.get(name)
    if lower is None:
        if type(name) is not str or not TOKEN.match(name):
            raise TransportError(f"invalid HTTP header name {name!r}")
        lower = name.lower()
        if len(_VALID_NAMES) < 4096:
            _VALID_NAMES[name] = lower
    return lower


def _check_value(name: str, value: str) -> None:
    if type(value) is not str:
        raise TransportError(f"HTTP header {name!r} must be a str, not {type(value).__name__}")
    if not FIELD_VALUE.match(value):
        raise TransportError(
            f"HTTP header {name!r} has a value with CR, LF, another control or a non-ASCII character; "
            "encode it first (the protocol layer uses =?base64?...?= for Mcp-* values)"
        )


class HeadBuilder:
    """Builds `POST` request heads for one origin: fixed default headers, then per-request ones.

    Per-request headers override defaults of the same name (case-insensitively). Heads for a
    repeated header set are cached (the client core reuses its header dicts).
    """

    __slots__ = ("_cache", "_defaults", "_prefix", "_start")

    def __init__(self, origin: Origin, defaults: Mapping[str, str]) -> None:
        for name, value in defaults.items():
            if _lower_name(name) in _RESERVED:
                raise TransportError(f"{name} is set by the transport")
            _check_value(name, value)
        self._start = f"POST {origin.target} HTTP/1.1\r\nHost: {origin.host_header}\r\n"
        self._defaults = {_lower_name(name): (name, value) for name, value in defaults.items()}
        self._prefix = (self._start + "".join(f"{n}: {v}\r\n" for n, v in self._defaults.values())).encode("ascii")
        self._cache: dict[tuple[tuple[str, str], ...], bytes] = {}

    def head(self, headers: Mapping[str, str], content_length: int) -> bytes:
        key = tuple(headers.items())
        try:
            block = self._cache.get(key)
        except TypeError:  # an unhashable value: not a str, which _block rejects
            return self._block(headers) + b"Content-Length: %d\r\n\r\n" % content_length
        if block is None:
            block = self._block(headers)
            if len(self._cache) >= 256:
                self._cache.clear()
            self._cache[key] = block
        return block + b"Content-Length: %d\r\n\r\n" % content_length

    def _block(self, headers: Mapping[str, str]) -> bytes:
        lines: list[str] = []
        overrides: dict[str, tuple[str, str]] = {}
        for name, value in headers.items():
            lower = _lower_name(name)
            _check_value(name, value)
            if lower in _RESERVED:
                raise TransportError(f"{name} is set by the transport")
            if lower in self._defaults or lower == "host":
                overrides[lower] = (name, value)
            else:
                lines.append(f"{name}: {value}\r\n")
        if not overrides:
            return self._prefix + "".join(lines).encode("ascii")
        start = self._start
        if "host" in overrides:
            start = start.split("\r\n", 1)[0] + f"\r\nHost: {overrides.pop('host')[1]}\r\n"
        merged = {**self._defaults, **overrides}
        return (start + "".join(f"{n}: {v}\r\n" for n, v in merged.values()) + "".join(lines)).encode("ascii")


# -- responses (sans-I/O) -----------------------------------------------------------------------


class ResponseHead(NamedTuple):
    status: int
    headers: dict[str, str]  # lower-case names; repeated fields joined with ", "
    keep_alive: bool
    framing: str  # "length" | "chunked" | "close" | "none"
    length: int  # for "length"


def _find_head_end(buffer: bytes | bytearray) -> tuple[int, int]:
    """(end of head, start of body), or (-1, -1) while incomplete."""
    end = buffer.find(b"\r\n\r\n")
    if end >= 0:
        return end, end + 4
    end = buffer.find(b"\n\n")  # lenient: bare-LF heads
    if end >= 0:
        return end, end + 2
    return -1, -1


def parse_head(raw: bytes) -> ResponseHead:
    """Parse a status line and header fields (without the blank line)."""
    if raw.count(b"\n") == raw.count(b"\r\n"):
        lines = raw.split(b"\r\n")
    else:  # lenient: bare-LF (or mixed) line ends
        lines = raw.replace(b"\r\n", b"\n").split(b"\n")
    status_line = lines[0]
    version, _, rest = status_line.partition(b" ")
    code = rest[:3]
    if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise TransportError(f"not an HTTP/1.x status line: {status_line[:100]!r}")
    status = int(code)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        if line[:1] in (b" ", b"\t"):
            raise TransportError("obsolete line folding in an HTTP response header")
        name_b, colon, value_b = line.partition(b":")
        if not colon or not name_b or name_b != name_b.strip():
            raise TransportError(f"malformed HTTP response header line: {line[:100]!r}")
        name = name_b.decode("latin-1").lower()
        value = value_b.strip(b" \t").decode("latin-1")
        previous = headers.get(name)
        headers[name] = value if previous is None else f"{previous}, {value}"
    connection = headers.get("connection", "").lower()
    keep_alive = version == b"HTTP/1.1" and "close" not in connection
    if version == b"HTTP/1.0" and "keep-alive" in connection:
        keep_alive = True
    if 100 <= status < 200 or status in _NO_BODY_STATUS:
        return ResponseHead(status, headers, keep_alive, "none", 0)
    coding = headers.get("transfer-encoding")
    if coding is not None:
        if coding.rpartition(",")[2].strip().lower() == "chunked":
            # Content-Length next to Transfer-Encoding is ignored, and the connection not reused.
            return ResponseHead(status, headers, keep_alive and "content-length" not in headers, "chunked", 0)
        return ResponseHead(status, headers, False, "close", 0)
    length_text = headers.get("content-length")
    if length_text is not None:
        values = {part.strip() for part in length_text.split(",")}
        if len(values) != 1 or not (value := values.pop()).isdigit():
            raise TransportError(f"invalid Content-Length {length_text!r}")
        return ResponseHead(status, headers, keep_alive, "length", int(value))
    return ResponseHead(status, headers, False, "close", 0)


_HEAD_CACHE: dict[bytes, ResponseHead] = {}


def _head_of(raw: bytes) -> ResponseHead:
    """`parse_head`, memoized: a server answers a given call with the same head bytes (status,
    type, length), so a steady client parses each distinct head once. Treat the result as
    read-only."""
    head = _HEAD_CACHE.get(raw)
    if head is None:
        head = parse_head(raw)
        if len(raw) <= 1024:
            if len(_HEAD_CACHE) >= 256:
                _HEAD_CACHE.clear()
            _HEAD_CACHE[raw] = head
    return head


class BodyDecoder:
    """Turns the raw bytes after a head into body pieces; `done` once the body is complete.

    Bytes past the end of the body (a server that sends more than it framed) are kept in
    `extra`; the connection is then not reused.
    """

    __slots__ = ("_buffer", "_remaining", "_state", "done", "extra", "framing")

    def __init__(self, head: ResponseHead) -> None:
        self.framing = head.framing
        self.done = head.framing == "none" or (head.framing == "length" and head.length == 0)
        self._remaining = head.length
        self._state = "size"  # chunked: size | data | crlf | trailer
        self._buffer = b""
        self.extra = b""

    def feed(self, data: bytes) -> list[bytes]:
        if self.done:
            self.extra += data
            return []
        framing = self.framing
        if framing == "length":
            remaining = self._remaining
            if len(data) < remaining:
                self._remaining = remaining - len(data)
                return [data] if data else []
            self._remaining = 0
            self.done = True
            if len(data) > remaining:
                self.extra = data[remaining:]
                data = data[:remaining]
            return [data]
        if framing == "close":
            return [data] if data else []
        return self._chunked(data)

    def _chunked(self, data: bytes) -> list[bytes]:
        buffer = self._buffer + data if self._buffer else data
        out: list[bytes] = []
        pos = 0
        size = len(buffer)
        state = self._state
        while pos < size:
            if state == "data":
                take = min(self._remaining, size - pos)
                out.append(buffer[pos : pos + take])
                pos += take
                self._remaining -= take
                if self._remaining == 0:
                    state = "crlf"
                continue
            end = buffer.find(b"\n", pos)
            if end < 0:
                if size - pos > 4096:
                    raise TransportError("chunked response: line too long")
                break
            line = buffer[pos:end].rstrip(b"\r")
            pos = end + 1
            if state == "crlf":
                if line:
                    raise TransportError("chunked response: chunk data not followed by CRLF")
                state = "size"
            elif state == "size":
                size_text = line.split(b";", 1)[0].strip(b" \t")
                if not _HEX.match(size_text):
                    raise TransportError(f"chunked response: bad chunk size {line[:40]!r}")
                chunk_size = int(size_text, 16)
                if chunk_size == 0:
                    state = "trailer"
                else:
                    self._remaining = chunk_size
                    state = "data"
            elif not line:  # the blank line after the trailer section ends the body
                self.done = True
                self.extra = buffer[pos:]
                self._buffer = b""
                self._state = "done"
                return out
        self._state = state
        self._buffer = buffer[pos:]
        return out

    def eof(self) -> None:
        """The peer closed the connection: fine for close-framed bodies, an error otherwise."""
        if self.done:
            return
        if self.framing == "close":
            self.done = True
            return
        raise TransportError("the server closed the connection before the response body was complete")


# -- errors -------------------------------------------------------------------------------------


class _Retry(Exception):
    """A reused connection failed before any response byte: safe to resend on a new one."""


def _timed_out(url: str, timeout: float | None) -> RequestTimeoutError:
    return RequestTimeoutError(f"no response from {url} within {timeout}s")


def _connect_failed(url: str, exc: BaseException) -> ConnectError:
    return ConnectError(f"cannot connect to {url}: {type(exc).__name__}: {exc}")


def _exchange_failed(url: str, exc: BaseException) -> TransportError:
    return TransportError(f"HTTP exchange with {url} failed: {type(exc).__name__}: {exc}")


# -- blocking sockets ---------------------------------------------------------------------------


# Plain TCP sockets stay in blocking mode and get their deadline from SO_RCVTIMEO/SO_SNDTIMEO:
# a Python-level socket timeout would poll() before every recv and send (two syscalls for one).
_KERNEL_TIMEOUTS: Final = sys.platform.startswith(("linux", "darwin", "freebsd"))
_IDLE_CHECK_AFTER: Final = 1.0  # seconds idle after which a pooled connection is polled before reuse


_NO_TIMEOUT: Final = struct.pack("@ll", 0, 0)


def _timeval(seconds: float) -> bytes:
    seconds = max(seconds, 0.001)  # 0 would mean "no timeout"
    whole = int(seconds)
    return struct.pack("@ll", whole, int((seconds - whole) * 1_000_000))


class _SyncConnection:
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

    def stale(self) -> bool:
        """An idle connection with something to read is closing (EOF) or out of sync; on TLS
        the something may also be a record without data (a TLS 1.3 session ticket). Checked
        only after a second of idleness: a close racing a quicker reuse is caught by the retry."""
        if time.monotonic() - self.idle_since < _IDLE_CHECK_AFTER:
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
            self.sock.close()


class SyncPool:
    """Keep-alive connections to one origin, for blocking use (thread-safe checkout)."""

    def __init__(self, origin: Origin, url: str, *, timeout: float | None,
                 ssl_context: ssl.SSLContext | None = None, max_idle: int = DEFAULT_MAX_IDLE) -> None:
        self.origin = origin
        self.url = url
        self.timeout = timeout
        self.max_idle = max_idle
        self._ssl = ssl_context
        self._idle: list[_SyncConnection] = []
        self._closed = False

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = default_ssl_context()
        return self._ssl

    def _connect(self, deadline: float | None) -> _SyncConnection:
        origin = self.origin
        try:
            timeout = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            sock = socket.create_connection((origin.host, origin.port), timeout=timeout)
        except OSError as exc:
            raise _connect_failed(self.url, exc) from exc
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if origin.scheme == "https":
                sock = self._ssl_context().wrap_socket(sock, server_hostname=origin.host)
        except OSError as exc:
            sock.close()
            raise _connect_failed(self.url, exc) from exc
        return _SyncConnection(sock, tls=origin.scheme == "https")

    def _checkout(self) -> _SyncConnection | None:
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

    def release(self, conn: _SyncConnection) -> None:
        if self._closed or len(self._idle) >= self.max_idle:
            conn.close()
        else:
            conn.idle_since = time.monotonic()
            self._idle.append(conn)

    def post(self, payload: bytes, timeout: float | None) -> SyncResponse:
        """Send `payload` (a complete request) and read the reply head."""
        deadline = None if timeout is None else time.monotonic() + timeout
        conn = self._checkout()
        if conn is not None:
            try:
                return self._exchange(conn, payload, deadline, timeout)
            except _Retry:
                pass
        conn = self._connect(deadline)
        try:
            return self._exchange(conn, payload, deadline, timeout)
        except _Retry as exc:  # a fresh connection is never retried
            raise _exchange_failed(self.url, exc.__cause__ or exc) from exc.__cause__

    def _exchange(self, conn: _SyncConnection, payload: bytes, deadline: float | None,
                  timeout: float | None) -> SyncResponse:
        received = False
        try:
            send_error: OSError | None = None
            try:
                conn.send(payload, deadline)
            except _RETRYABLE as exc:
                send_error = exc  # the server may still have answered (an early reply); read it
            buffer = b""
            while True:
                try:
                    data = conn.recv(deadline)
                except _RETRYABLE as exc:
                    if not received and conn.reused:
                        raise _Retry from exc
                    raise
                if not data:
                    if not received and conn.reused:
                        raise _Retry from send_error
                    if send_error is not None:
                        raise send_error
                    raise TransportError(f"{self.url} closed the connection without a complete response head")
                received = True
                buffer += data
                end, body_start = _find_head_end(buffer)
                if end < 0:
                    if len(buffer) > MAX_HEAD_BYTES:
                        raise TransportError(f"response head from {self.url} exceeds {MAX_HEAD_BYTES} bytes")
                    continue
                head = _head_of(buffer[:end])
                if 100 <= head.status < 200:
                    if head.status == 101:
                        raise TransportError(f"{self.url} switched protocols (HTTP 101)")
                    buffer = buffer[body_start:]  # interim response: the final one follows
                    continue
                response = SyncResponse(self, conn, head, deadline, timeout)
                response._feed(buffer[body_start:])
                return response
        except _Retry:
            conn.close()
            raise
        except TimeoutError as exc:
            conn.close()
            raise _timed_out(self.url, timeout) from exc
        except TransportError:
            conn.close()
            raise
        except OSError as exc:
            conn.close()
            raise _exchange_failed(self.url, exc) from exc
        except BaseException:
            conn.close()
            raise

    def close(self) -> None:
        self._closed = True
        while self._idle:
            self._idle.pop().close()


class SyncResponse:
    """A reply whose head has been read; read the body whole (`read`) or as it arrives (`iter_body`)."""

    __slots__ = ("_conn", "_deadline", "_decoder", "_pending", "_pool", "_timeout", "head", "headers", "status")

    def __init__(self, pool: SyncPool, conn: _SyncConnection, head: ResponseHead, deadline: float | None,
                 timeout: float | None) -> None:
        self._pool = pool
        self._conn: _SyncConnection | None = conn
        self._deadline = deadline
        self._timeout = timeout
        self._decoder = BodyDecoder(head)
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

    def _recv(self) -> bytes:
        conn = self._conn
        assert conn is not None
        try:
            return conn.recv(self._deadline)
        except TimeoutError as exc:
            self._abort()
            raise _timed_out(self._pool.url, self._timeout) from exc
        except OSError as exc:
            self._abort()
            raise _exchange_failed(self._pool.url, exc) from exc

    def _abort(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def iter_body(self) -> Iterator[bytes]:
        """Decoded body pieces as they arrive."""
        while True:
            if self._pending:
                pieces, self._pending = self._pending, []
                yield from pieces
            if self._conn is None:
                return
            data = self._recv()
            if not data:
                try:
                    self._decoder.eof()
                finally:
                    self._abort()
                return
            try:
                self._feed(data)
            except TransportError:
                self._abort()
                raise

    def read(self) -> bytes:
        if self._conn is None:
            pieces, self._pending = self._pending, []
            return pieces[0] if len(pieces) == 1 else b"".join(pieces)
        return b"".join(self.iter_body())

    def close(self) -> None:
        """Done with the reply: an unfinished body closes the connection, unless its end is
        already waiting in the socket (then the connection goes back to the pool)."""
        conn = self._conn
        if conn is None:
            return
        try:
            while not self._decoder.done:
                data = conn.drain()
                if not data:
                    break
                self._decoder.feed(data)
        except (OSError, TransportError):
            pass
        if self._decoder.done:
            self._pending = []
            self._finish()
        else:
            self._conn = None
            conn.close()


# -- asyncio streams ----------------------------------------------------------------------------


class _Watchdog:
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


class _AsyncConnection(asyncio.Protocol):
    """One connection as an asyncio protocol: received bytes are buffered until `read()`.

    Lighter than a StreamReader/StreamWriter pair (one future per wait, nothing else), which
    matters at one small request per round trip. Reading pauses while a large unread body is
    buffered.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, watchdog: _Watchdog) -> None:
        self.loop = loop
        self.watchdog = watchdog
        self.transport: asyncio.Transport | None = None
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

    def data_received(self, data: bytes) -> None:
        self._chunks.append(data)
        self._buffered += len(data)
        if self._buffered > _PAUSE_ABOVE and not self._paused and self.transport is not None:
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

    async def read(self, deadline: float | None) -> bytes:
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
        chunks = self._chunks
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        self._chunks = []
        self._buffered = 0
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()
        return data

    def write(self, data: bytes) -> None:
        assert self.transport is not None
        self.transport.write(data)

    def stale(self, loop: asyncio.AbstractEventLoop) -> bool:
        """An idle connection with something received (EOF, stray bytes) or of another loop."""
        return (loop is not self.loop or self._eof or bool(self._chunks) or self.transport is None
                or self.transport.is_closing())

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


class AsyncPool:
    """Keep-alive connections to one origin, for one asyncio event loop at a time."""

    def __init__(self, origin: Origin, url: str, *, timeout: float | None,
                 ssl_context: ssl.SSLContext | None = None, max_idle: int = DEFAULT_MAX_IDLE) -> None:
        self.origin = origin
        self.url = url
        self.timeout = timeout
        self.max_idle = max_idle
        self._ssl = ssl_context
        self._idle: list[_AsyncConnection] = []
        self._closed = False
        self._watchdog: _Watchdog | None = None

    async def _connect(self) -> _AsyncConnection:
        origin = self.origin
        context: ssl.SSLContext | None = None
        if origin.scheme == "https":
            if self._ssl is None:
                self._ssl = default_ssl_context()
            context = self._ssl
        loop = asyncio.get_running_loop()
        watchdog = self._watchdog
        if watchdog is None or watchdog.loop is not loop:
            if watchdog is not None:
                watchdog.close()
            watchdog = self._watchdog = _Watchdog(loop)
        try:
            _, conn = await loop.create_connection(
                lambda: _AsyncConnection(loop, watchdog), origin.host, origin.port, ssl=context,
                server_hostname=origin.host if context else None,
            )
        except OSError as exc:
            raise _connect_failed(self.url, exc) from exc
        return conn

    def _checkout(self) -> _AsyncConnection | None:
        idle = self._idle
        loop = asyncio.get_running_loop()
        while idle:
            conn = idle.pop()
            if conn.stale(loop):
                conn.close()
                continue
            conn.reused = True
            return conn
        return None

    def release(self, conn: _AsyncConnection) -> None:
        if self._closed or len(self._idle) >= self.max_idle:
            conn.close()
        else:
            self._idle.append(conn)

    async def post(self, payload: bytes, timeout: float | None) -> AsyncResponse:
        """Send `payload` (a complete request) and read the reply head; `timeout` bounds the
        whole exchange, the body included (see `AsyncResponse`)."""
        deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        conn = self._checkout()
        if conn is not None:
            try:
                return await self._exchange(conn, payload, deadline, timeout)
            except _Retry:
                pass
        if deadline is None:
            conn = await self._connect()
        else:
            try:
                async with asyncio.timeout_at(deadline):
                    conn = await self._connect()
            except TimeoutError as exc:
                raise _connect_failed(self.url, exc) from exc
        try:
            return await self._exchange(conn, payload, deadline, timeout)
        except _Retry as exc:  # a fresh connection is never retried
            raise _exchange_failed(self.url, exc.__cause__ or exc) from exc.__cause__

    async def _exchange(self, conn: _AsyncConnection, payload: bytes, deadline: float | None,
                        timeout: float | None) -> AsyncResponse:
        received = False
        try:
            conn.write(payload)
            buffer = b""
            while True:
                try:
                    data = await conn.read(deadline)
                except _RETRYABLE as exc:
                    if not received and conn.reused:
                        raise _Retry from exc
                    raise
                if not data:
                    if not received and conn.reused:
                        raise _Retry
                    raise TransportError(f"{self.url} closed the connection without a complete response head")
                received = True
                buffer += data
                end, body_start = _find_head_end(buffer)
                if end < 0:
                    if len(buffer) > MAX_HEAD_BYTES:
                        raise TransportError(f"response head from {self.url} exceeds {MAX_HEAD_BYTES} bytes")
                    continue
                head = _head_of(buffer[:end])
                if 100 <= head.status < 200:
                    if head.status == 101:
                        raise TransportError(f"{self.url} switched protocols (HTTP 101)")
                    buffer = buffer[body_start:]
                    continue
                response = AsyncResponse(self, conn, head, deadline, timeout)
                response._feed(buffer[body_start:])
                return response
        except (_Retry, TransportError):
            conn.close()
            raise
        except TimeoutError as exc:
            conn.close()
            raise _timed_out(self.url, timeout) from exc
        except OSError as exc:
            conn.close()
            raise _exchange_failed(self.url, exc) from exc
        except BaseException:  # cancelled: the connection is mid-exchange
            conn.close()
            raise

    def close(self) -> None:
        self._closed = True
        while self._idle:
            self._idle.pop().close()
        if self._watchdog is not None and not self._watchdog.loop.is_closed():
            self._watchdog.close()


class AsyncResponse:
    """The asyncio twin of `SyncResponse`."""

    __slots__ = ("_conn", "_deadline", "_decoder", "_pending", "_pool", "_timeout", "head", "headers", "status")

    def __init__(self, pool: AsyncPool, conn: _AsyncConnection, head: ResponseHead, deadline: float | None,
                 timeout: float | None) -> None:
        self._pool = pool
        self._deadline = deadline
        self._timeout = timeout
        self._conn: _AsyncConnection | None = conn
        self._decoder = BodyDecoder(head)
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

    async def aiter_body(self) -> AsyncIterator[bytes]:
        while True:
            if self._pending:
                pieces, self._pending = self._pending, []
                for piece in pieces:
                    yield piece
            conn = self._conn
            if conn is None:
                return
            try:
                data = await conn.read(self._deadline)
            except TimeoutError as exc:
                self._abort()
                raise _timed_out(self._pool.url, self._timeout) from exc
            except OSError as exc:
                self._abort()
                raise _exchange_failed(self._pool.url, exc) from exc
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
            except TransportError:
                self._abort()
                raise

    async def read(self) -> bytes:
        if self._conn is None:
            pieces, self._pending = self._pending, []
            return pieces[0] if len(pieces) == 1 else b"".join(pieces)
        return b"".join([piece async for piece in self.aiter_body()])

    def _abort(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Done with the reply: an unfinished body closes the connection (HTTP-21)."""
        if self._conn is None:
            return
        if self._decoder.done:
            self._finish()
        else:
            self._abort()
