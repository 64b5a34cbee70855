"""HTTP/1.1 for the lean engine, without I/O: origins, request heads, response heads and bodies.

Why a lean engine: a tool call is one small POST and one small reply, and a general-purpose
client (httpx over h11/httpcore) spends ~0.8 ms of CPU per request on it; the lean engine
spends tens of microseconds. It speaks just what the Streamable HTTP transport needs, for
plain `http://` and `https://` (stdlib `ssl`) origins without a proxy (`lean_origin`); the
httpx engine serves everything else.

This module is the protocol half, shared by both sides: the pool and its responses
(`_async/pool.py`, generated into `_sync/pool.py`) step it with bytes that the per-side
connections (`sync_backend.py`: blocking sockets; `asyncio_backend.py`: asyncio protocols)
move.

- Request heads are built from validated pieces: header names must be tokens, values must be
  ASCII without control characters (no CR/LF injection); Content-Length and
  Transfer-Encoding belong to the transport. A repeated header set reuses its built block.
- Replies are framed by Content-Length, chunked transfer coding, or connection close; 1xx
  interim responses are skipped (`final_head`). Response heads are memoized: a server
  answers a given call with the same head bytes, so a steady client parses each one once.
"""

from __future__ import annotations

import os
import re
import ssl
import urllib.request
from collections.abc import Mapping
from typing import Final, NamedTuple
from urllib.parse import urlsplit

from ..errors import ProtocolError, TransportError
from ..protocol.headers import FIELD_VALUE, TOKEN
from .limits import too_large

__all__ = [
    "BodyDecoder",
    "HeadBuilder",
    "Origin",
    "ResponseHead",
    "ReusedConnectionLost",
    "cached_head",
    "default_ssl_context",
    "final_head",
    "lean_origin",
    "parse_head",
]

MAX_HEAD_BYTES: Final = 64 * 1024

_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}\Z")
_RESERVED = frozenset({"content-length", "transfer-encoding"})
_NO_BODY_STATUS = frozenset({204, 304})


# -- origins ------------------------------------------------------------------------------------


class Origin(NamedTuple):
    scheme: str  # "http" | "https"
    host: str  # for connecting: no IPv6 brackets
    port: int
    target: str  # request-target: path and query
    host_header: str  # Host: value (brackets, port when not the default)


def lean_origin(url: str) -> Origin | None:
    """The origin when the lean engine can serve `url`: http(s), no userinfo, no proxy from the
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
    """Verified TLS like httpx's default: SSL_CERT_FILE / SSL_CERT_DIR, else certifi, else the
    system store."""
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
        self._prefix = (self._start + "".join(f"{n}: {v}\r\n" for n, v in self._defaults.values())).encode(
            "ascii"
        )
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

    def bare(self, method: str, headers: Mapping[str, str]) -> bytes:
        """A complete head for a request without a body (the legacy session's GET and
        DELETE); not cached: they are rare."""
        return method.encode("ascii") + self._block(headers)[4:] + b"\r\n"  # the block starts "POST"

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


# -- response heads -----------------------------------------------------------------------------


class ResponseHead(NamedTuple):
    status: int
    headers: dict[str, str]  # lower-case names; repeated fields joined with ", "
    keep_alive: bool
    framing: str  # "length" | "chunked" | "close" | "none"
    length: int  # for "length"


def _find_head_end(buffer: bytes) -> tuple[int, int]:
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


def cached_head(raw: bytes) -> ResponseHead:
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


def final_head(buffer: bytes, url: str) -> tuple[ResponseHead | None, bytes]:
    """Where a reply stands once `buffer` (everything received so far) is in: (the final
    response head, the body bytes after it), or (None, `buffer`) until a complete final head
    has arrived. Interim 1xx responses are skipped; 101 is an error (no upgrades here)."""
    while True:
        end, body_start = _find_head_end(buffer)
        if end < 0:
            if len(buffer) > MAX_HEAD_BYTES:
                raise TransportError(f"response head from {url} exceeds {MAX_HEAD_BYTES} bytes")
            return None, buffer
        head = cached_head(buffer[:end])
        if not 100 <= head.status < 200:
            return head, buffer[body_start:]
        if head.status == 101:
            raise TransportError(f"{url} switched protocols (HTTP 101)")
        buffer = buffer[body_start:]  # an interim response: the final one follows


class ReusedConnectionLost(Exception):
    """A reused connection failed before any response byte: the server had closed it while
    idle, so it processed nothing and the request is safe to resend on a new connection."""


# -- response bodies ----------------------------------------------------------------------------


class BodyDecoder:
    """Turns the raw bytes after a head into body pieces; `done` once the body is complete.

    Bytes past the end of the body (a server that sends more than it framed) are kept in
    `extra`; the connection is then not reused.

    `budget` bounds the body (`limits.py`): the pool refuses a Content-Length over it before
    this decoder exists, so only chunked and close-delimited bodies are counted here (a chunk
    at its size line, before its data). None: unbounded (a long-lived event stream).
    """

    __slots__ = ("_buffer", "_remaining", "_state", "budget", "done", "extra", "framing", "limit", "url")

    def __init__(self, head: ResponseHead, limit: int | None = None, url: str = "the server") -> None:
        self.framing = head.framing
        self.done = head.framing == "none" or (head.framing == "length" and head.length == 0)
        self._remaining = head.length
        self._state = "size"  # chunked: size | data | crlf | trailer
        self._buffer = b""
        self.extra = b""
        self.limit = limit
        self.budget = limit
        self.url = url

    def _spend(self, size: int) -> None:
        budget = self.budget
        if budget is not None:
            if size > budget:
                assert self.limit is not None
                raise too_large(self.url, self.limit, "response body")
            self.budget = budget - size

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
            if self.budget is not None:
                self._spend(len(data))
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
                    raise ProtocolError(
                        f"chunked response from {self.url}: a chunk-size or trailer line over 4096 bytes"
                    )
                break
            line = buffer[pos:end].rstrip(b"\r")
            pos = end + 1
            if state == "crlf":
                if line:
                    raise ProtocolError(f"chunked response from {self.url}: chunk data not followed by CRLF")
                state = "size"
            elif state == "size":
                size_text = line.split(b";", 1)[0].strip(b" \t")
                if not _HEX.match(size_text):
                    raise ProtocolError(f"chunked response from {self.url}: bad chunk size {line[:40]!r}")
                chunk_size = int(size_text, 16)
                if chunk_size == 0:
                    state = "trailer"
                else:
                    if self.budget is not None:
                        self._spend(
                            chunk_size
                        )  # refused before its data: 0xffffffffffffffff is no allocation
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
        raise TransportError(
            "the server closed the connection before the response body was complete", retryable=True
        )
