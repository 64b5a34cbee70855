"""A raw-HTTP/1.1 load generator: N keep-alive connections, each a closed loop of POSTs.

It measures servers, not a client library: requests are pre-built bytes (only the JSON-RPC id
changes), written with `asyncio.Protocol` transports; responses are framed by hand
(Content-Length or chunked) and checked (status 200; the first responses on every connection
are parsed in full and must carry `structuredContent.sum == 3`). One event loop, one process.

`era="legacy"` drives a client of the initialize-based revisions instead: before the load, every
connection opens its own session (`initialize` for 2025-11-25, then `notifications/initialized`,
on that same connection, untimed), then sends `tools/call` with its `Mcp-Session-Id` and
`MCP-Protocol-Version: 2025-11-25` and no `_meta`; after the load the sessions are ended (DELETE).

    result = run_load("127.0.0.1", port, connections=8, duration=3.0, warmup=0.5)
    result = run_load("127.0.0.1", port, connections=8, duration=3.0, warmup=0.5, era="legacy")

`request=Request(...)` sends another modern request instead of add(1, 2) (bench/task_poll.py:
`tasks/get`), its replies checked by the request's own `check`.
"""

from __future__ import annotations

import asyncio
import functools
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

# The request: protocol 2026-07-28 `tools/call` of add(1, 2), with every header the spec asks for.
BODY_TEMPLATE = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
)
HEAD_TEMPLATE = (
    "POST {path} HTTP/1.1\r\n"
    "Host: {host}:{port}\r\n"
    "Accept: application/json, text/event-stream\r\n"
    "Content-Type: application/json\r\n"
    "MCP-Protocol-Version: 2026-07-28\r\n"
    "Mcp-Method: tools/call\r\n"
    "Mcp-Name: add\r\n"
    "Content-Length: "
)
Era = Literal["modern", "legacy"]
VERIFY_FIRST = 3  # responses per connection parsed and checked in full

# The legacy-era request: 2025-11-25 `tools/call` of add(1, 2) in a session, as the SDK 1.x
# clients send it (no `_meta`, no Mcp-Method/Mcp-Name; the session and version headers).
LEGACY_VERSION = "2025-11-25"
LEGACY_BODY_TEMPLATE = (
    b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}'
)
LEGACY_HEAD_TEMPLATE = (
    "POST {path} HTTP/1.1\r\n"
    "Host: {host}:{port}\r\n"
    "Accept: application/json, text/event-stream\r\n"
    "Content-Type: application/json\r\n"
    "Mcp-Session-Id: {session}\r\n"
    "MCP-Protocol-Version: " + LEGACY_VERSION + "\r\n"
    "Content-Length: "
)
INITIALIZE_BODY = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"'
    + LEGACY_VERSION.encode()
    + b'","capabilities":{},"clientInfo":{"name":"bench-loadgen","version":"1.0.0"}}}'
)
INITIALIZED_BODY = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


def build_request(host: str, port: int, path: str, request_id: int) -> bytes:
    body = BODY_TEMPLATE % request_id
    head = HEAD_TEMPLATE.format(path=path, host=host, port=port).encode()
    return head + b"%d\r\n\r\n" % len(body) + body


def legacy_head(host: str, port: int, path: str, session_id: str) -> bytes:
    """The head of a legacy `tools/call` in session `session_id`, up to the Content-Length value."""
    return LEGACY_HEAD_TEMPLATE.format(path=path, host=host, port=port, session=session_id).encode()


def build_legacy_request(host: str, port: int, path: str, session_id: str, request_id: int) -> bytes:
    body = LEGACY_BODY_TEMPLATE % request_id
    return legacy_head(host, port, path, session_id) + b"%d\r\n\r\n" % len(body) + body


class BadResponse(Exception):
    pass


@dataclass(frozen=True)
class Request:
    """A modern request the load sends: its `Mcp-Method` and `Mcp-Name` headers, the body (`%d`:
    the JSON-RPC id) and the check of a reply (content type, body; None: not checked)."""

    method: str
    name: str
    body_template: bytes
    check: Callable[[bytes, bytes], None] | None

    def head(self, host: str, port: int, path: str) -> bytes:
        head = HEAD_TEMPLATE.format(path=path, host=host, port=port)
        return (
            head.replace("tools/call", self.method)
            .replace("Mcp-Name: add", f"Mcp-Name: {self.name}")
            .encode()
        )


def check_result(content_type: bytes, body: bytes) -> None:
    """The reply must be the add(1, 2) result: JSON, or an SSE stream whose last event is it."""
    if content_type.startswith(b"text/event-stream"):
        data = [
            line[5:].strip()
            for line in body.replace(b"\r\n", b"\n").split(b"\n")
            if line.startswith(b"data:")
        ]
        if not data:
            raise BadResponse(f"SSE reply without data: {body[:200]!r}")
        body = data[-1]
    try:
        message = orjson.loads(body)
        structured = message["result"]["structuredContent"]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise BadResponse(f"not an add result: {body[:300]!r}") from exc
    if structured.get("sum") != 3 or message["result"].get("isError"):
        raise BadResponse(f"wrong add result: {body[:300]!r}")


ADD = Request("tools/call", "add", BODY_TEMPLATE, check_result)
LEGACY = Request("tools/call", "add", LEGACY_BODY_TEMPLATE, check_result)  # its head is per session


@dataclass
class LoadResult:
    connections: int
    duration: float  # measured window, seconds
    requests: int  # responses completed inside the window
    errors: int
    latencies_us: list[float] = field(repr=False)
    loadgen_cpu: float  # seconds of this process's CPU inside the window
    server_cpu_ticks: int | None  # utime+stime ticks of the server inside the window
    first_error: str | None = None

    @property
    def rps(self) -> float:
        return self.requests / self.duration if self.duration else 0.0

    def percentile(self, q: float) -> float:
        if not self.latencies_us:
            return float("nan")
        ordered = sorted(self.latencies_us)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class _Run:
    """Shared state of one load run: the measurement window and the tallies."""

    def __init__(self, host: str, port: int, path: str, request: Request) -> None:
        self.head = request.head(host, port, path)
        self.body_template = request.body_template
        self.check = request.check
        self.next_id = 0
        self.measuring = False
        self.stopping = False
        self.requests = 0
        self.errors = 0
        self.first_error: str | None = None
        self.latencies: list[float] = []
        self.in_flight = 0
        self.drained = asyncio.Event()

    def request(self, head: bytes) -> bytes:
        self.next_id += 1
        body = self.body_template % self.next_id
        return head + b"%d\r\n\r\n" % len(body) + body

    def error(self, why: str) -> None:
        self.errors += 1
        if self.first_error is None:
            self.first_error = why


class _Connection(asyncio.Protocol):
    def __init__(self, run: _Run, head: bytes | None = None) -> None:
        self.run = run
        self.head = run.head if head is None else head  # legacy: this connection's session header
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.started = 0.0
        self.verified = 0
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.send()

    def send(self) -> None:
        assert self.transport is not None
        run = self.run
        if run.stopping:
            run.in_flight -= 1
            if run.in_flight == 0:
                run.drained.set()
            return
        self.started = time.perf_counter()
        self.transport.write(run.request(self.head))

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            parsed = self._parse()
            if parsed is None:
                return
            status, content_type, body = parsed
            self._done(status, content_type, body)
            if not self.buffer:
                return

    def _parse(self) -> tuple[int, bytes, bytes] | None:
        buffer = self.buffer
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        head = buffer[:end]
        lines = head.split(b"\r\n")
        try:
            status = int(lines[0].split(b" ", 2)[1])
        except (IndexError, ValueError) as exc:
            raise BadResponse(f"bad status line {lines[0][:100]!r}") from exc
        length = -1
        chunked = False
        content_type = b""
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"content-type":
                content_type = value.strip().lower()
        start = end + 4
        if chunked:
            body_parts: list[bytes] = []
            pos = start
            while True:
                line_end = buffer.find(b"\r\n", pos)
                if line_end < 0:
                    return None
                size = int(buffer[pos:line_end].split(b";", 1)[0], 16)
                if size == 0:
                    trailer_end = buffer.find(b"\r\n\r\n", line_end)  # no trailers: right here
                    if trailer_end < 0:
                        return None
                    self.buffer = buffer[trailer_end + 4 :]
                    return status, content_type, b"".join(body_parts)
                chunk_start = line_end + 2
                if len(buffer) < chunk_start + size + 2:
                    return None
                body_parts.append(buffer[chunk_start : chunk_start + size])
                pos = chunk_start + size + 2
        if length < 0:
            raise BadResponse("response without Content-Length or chunked framing")
        if len(buffer) < start + length:
            return None
        self.buffer = buffer[start + length :]
        return status, content_type, buffer[start : start + length]

    def _done(self, status: int, content_type: bytes, body: bytes) -> None:
        run = self.run
        elapsed = time.perf_counter() - self.started
        if status != 200:
            run.error(f"HTTP {status}: {body[:200]!r}")
        elif self.verified < VERIFY_FIRST and run.check is not None:
            self.verified += 1
            try:
                run.check(content_type, body)
            except BadResponse as exc:
                run.error(str(exc))
        if run.measuring:
            run.requests += 1
            run.latencies.append(elapsed * 1e6)
        self.send()

    def connection_lost(self, exc: Exception | None) -> None:
        run = self.run
        if not run.stopping:
            run.error(f"connection lost: {exc!r}")
            run.in_flight -= 1
            if run.in_flight == 0:
                run.drained.set()
        if not self.closed.done():
            self.closed.set_result(None)


async def _load(
    host: str,
    port: int,
    path: str,
    connections: int,
    duration: float,
    warmup: float,
    sample: Callable[[], int] | None,
    era: Era,
    request: Request,
) -> LoadResult:
    loop = asyncio.get_running_loop()
    legacy = era == "legacy"
    run = _Run(host, port, path, LEGACY if legacy else request)
    protocols: list[_Connection] = []
    sessions: list[str] = []
    if legacy:  # every session opened before any load starts (blocking, untimed)
        opened = [open_session(host, port, path) for _ in range(connections)]
        sessions = [session_id for _, session_id in opened]
    run.in_flight = connections
    for index in range(connections):
        if legacy:
            sock, session_id = opened[index]
            sock.setblocking(False)
            head = legacy_head(host, port, path, session_id)
            _, protocol = await loop.create_connection(functools.partial(_Connection, run, head), sock=sock)
        else:
            _, protocol = await loop.create_connection(lambda: _Connection(run), host, port)
        protocols.append(protocol)
    await asyncio.sleep(warmup)
    ticks0 = sample() if sample is not None else None
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    run.measuring = True
    await asyncio.sleep(duration)
    run.measuring = False
    elapsed = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    ticks = sample() - ticks0 if sample is not None and ticks0 is not None else None
    run.stopping = True
    try:
        await asyncio.wait_for(run.drained.wait(), timeout=30)
    finally:
        for protocol in protocols:
            if protocol.transport is not None:
                protocol.transport.close()
        await asyncio.gather(*(p.closed for p in protocols))
    if sessions:
        end_sessions(host, port, path, sessions)
    return LoadResult(
        connections=connections,
        duration=elapsed,
        requests=run.requests,
        errors=run.errors,
        latencies_us=run.latencies,
        loadgen_cpu=cpu,
        server_cpu_ticks=ticks,
        first_error=run.first_error,
    )


def run_load(
    host: str,
    port: int,
    *,
    path: str = "/mcp",
    connections: int = 8,
    duration: float = 3.0,
    warmup: float = 0.5,
    sample: Callable[[], int] | None = None,
    era: Era = "modern",
    request: Request | None = None,
) -> LoadResult:
    """Drive `connections` closed loops for `warmup` + `duration` seconds; `sample()` (server CPU
    ticks) is read at both ends of the measured window. `era="legacy"`: one session per
    connection (see the module docstring). `request`: what to send (default: add(1, 2))."""
    return asyncio.run(_load(host, port, path, connections, duration, warmup, sample, era, request or ADD))


def exchange(sock: socket.socket, request: bytes) -> tuple[bytes, int, bytes, bytes]:
    """Send one request on a blocking socket and read its reply: (head, status, content type, body)."""
    sock.sendall(request)
    data = b""
    conn = _Connection.__new__(_Connection)
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            raise BadResponse(f"connection closed after {data[:300]!r}")
        data += chunk
        conn.buffer = data
        parsed = conn._parse()
        if parsed is not None:
            status, content_type, body = parsed
            return data[: data.find(b"\r\n\r\n")], status, content_type, body


def header(head: bytes, name: bytes) -> str | None:
    """A header's value in a response head (`name` in lower case)."""
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == name:
            return value.strip().decode("latin-1")
    return None


def _plain_request(method: str, host: str, port: int, path: str, body: bytes, extra: str = "") -> bytes:
    return (
        f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: application/json, text/event-stream\r\n"
        f"Content-Type: application/json\r\n{extra}Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def open_session(
    host: str, port: int, path: str = "/mcp", timeout: float = 10.0
) -> tuple[socket.socket, str]:
    """A new connection with a legacy session opened on it (`initialize` for 2025-11-25, then
    `notifications/initialized`): the blocking socket, kept alive, and the session id."""
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head, status, content_type, body = exchange(
            sock, _plain_request("POST", host, port, path, INITIALIZE_BODY)
        )
        if content_type.startswith(b"text/event-stream"):
            data = [
                line[5:].strip()
                for line in body.replace(b"\r\n", b"\n").split(b"\n")
                if line.startswith(b"data:")
            ]
            body = data[-1] if data else body
        session_id = header(head, b"mcp-session-id")
        try:
            version = orjson.loads(body)["result"]["protocolVersion"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            version = None
        if status != 200 or session_id is None or version != LEGACY_VERSION:
            raise BadResponse(f"initialize answered HTTP {status}, session {session_id!r}: {body[:300]!r}")
        extra = f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: {LEGACY_VERSION}\r\n"
        _, status, _, body = exchange(sock, _plain_request("POST", host, port, path, INITIALIZED_BODY, extra))
        if not 200 <= status < 300:
            raise BadResponse(f"notifications/initialized answered HTTP {status}: {body[:300]!r}")
        sock.settimeout(None)
        return sock, session_id
    except BaseException:
        sock.close()
        raise


def end_sessions(host: str, port: int, path: str, session_ids: list[str], timeout: float = 10.0) -> None:
    """DELETE each session (one connection); a server that keeps sessions may answer 405 or 404."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        for session_id in session_ids:
            extra = f"Mcp-Session-Id: {session_id}\r\nMCP-Protocol-Version: {LEGACY_VERSION}\r\n"
            _, status, _, body = exchange(sock, _plain_request("DELETE", host, port, path, b"", extra))
            if status not in (200, 202, 204, 404, 405):
                raise BadResponse(f"DELETE of a session answered HTTP {status}: {body[:300]!r}")


def probe(host: str, port: int, path: str = "/mcp", timeout: float = 10.0) -> dict[str, Any]:
    """One request on a fresh socket; raises BadResponse unless it is a correct add(1, 2) reply."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        _, status, content_type, body = exchange(sock, build_request(host, port, path, 1))
        if status != 200:
            raise BadResponse(f"HTTP {status}: {body[:300]!r}")
        check_result(content_type, body)
        return {"status": status, "content_type": content_type.decode(), "bytes": len(body)}
