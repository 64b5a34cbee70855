"""The lean HTTP/1.1 engine (mcpgen_runtime/transport/http1_wire.py, _async/pool.py and its blocking
twin): parsing, head building and wire behaviour against a raw-socket server whose every byte a
test scripts.

Real servers (uvicorn with our server and the SDK's) are in test_http11_servers.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime import _json
from mcpgen_runtime.errors import ConnectError, ProtocolError, RequestTimeoutError, TransportError
from mcpgen_runtime.transport import AsyncHttpTransport, HttpTransport
from mcpgen_runtime.transport._async.pool import AsyncPool
from mcpgen_runtime.transport._sync.pool import Pool as SyncPool
from mcpgen_runtime.transport.http1_wire import BodyDecoder, HeadBuilder, lean_origin, parse_head
from tests.support import free_port

pytestmark = pytest.mark.timeout(30)

# -- origins ------------------------------------------------------------------------------------


@pytest.fixture
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://127.0.0.1:8000/mcp", ("http", "127.0.0.1", 8000, "/mcp", "127.0.0.1:8000")),
        ("http://example.com/mcp?x=1&y=2#frag", ("http", "example.com", 80, "/mcp?x=1&y=2", "example.com")),
        ("https://example.com/mcp", ("https", "example.com", 443, "/mcp", "example.com")),
        ("https://example.com:8443", ("https", "example.com", 8443, "/", "example.com:8443")),
        ("HTTP://[::1]:9000/m", ("http", "::1", 9000, "/m", "[::1]:9000")),
        ("http://[::1]/m", ("http", "::1", 80, "/m", "[::1]")),
    ],
)
def test_lean_origin(no_proxy_env: pytest.MonkeyPatch, url: str, expected: tuple[Any, ...]) -> None:
    assert tuple(lean_origin(url) or ()) == expected


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/x",
        "http://user:pw@example.com/mcp",
        "http:///nohost",
        "http://example.com:notaport/",
        "unix:///tmp/socket",
    ],
)
def test_lean_origin_declines_what_it_cannot_serve(no_proxy_env: pytest.MonkeyPatch, url: str) -> None:
    assert lean_origin(url) is None


def test_proxy_in_environment_means_httpx(no_proxy_env: pytest.MonkeyPatch) -> None:
    no_proxy_env.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    assert lean_origin("https://example.com/mcp") is None
    assert lean_origin("http://example.com/mcp") is not None  # the proxy is for https only
    no_proxy_env.setenv("NO_PROXY", "example.com")
    assert lean_origin("https://example.com/mcp") is not None
    no_proxy_env.setenv("ALL_PROXY", "http://proxy.internal:3128")
    assert lean_origin("http://other.example/mcp") is None
    transport = HttpTransport("http://other.example/mcp")
    try:
        assert transport.engine == "httpx"
    finally:
        transport.close()


def test_engine_choice(no_proxy_env: pytest.MonkeyPatch) -> None:
    import httpx

    plain = HttpTransport("http://127.0.0.1:9/mcp")
    client = httpx.Client()
    custom = HttpTransport("http://127.0.0.1:9/mcp", client=client)
    aplain = AsyncHttpTransport("https://127.0.0.1:9/mcp")
    try:
        assert (plain.engine, custom.engine, aplain.engine) == ("http11", "httpx", "http11")
    finally:
        plain.close()
        custom.close()
        client.close()  # not the transport's to close


# -- request heads ------------------------------------------------------------------------------

DEFAULTS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _builder(url: str = "http://127.0.0.1:8000/mcp?a=b") -> HeadBuilder:
    origin = lean_origin(url)
    assert origin is not None
    return HeadBuilder(origin, DEFAULTS)


def test_head_layout() -> None:
    head = _builder().head({"MCP-Protocol-Version": "2026-07-28", "Mcp-Name": "add"}, 42)
    assert head == (
        b"POST /mcp?a=b HTTP/1.1\r\nHost: 127.0.0.1:8000\r\n"
        b"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Name: add\r\nContent-Length: 42\r\n\r\n"
    )


def test_head_overrides_defaults_case_insensitively() -> None:
    head = _builder().head({"accept": "application/json", "Host": "example.com", "X-A": "1"}, 0)
    text = head.decode()
    assert "accept: application/json\r\n" in text and "text/event-stream" not in text
    assert text.count("Host:") == 1 and "Host: example.com\r\n" in text
    assert text.startswith("POST /mcp?a=b HTTP/1.1\r\nHost: example.com\r\n")
    assert text.endswith("X-A: 1\r\nContent-Length: 0\r\n\r\n")


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("X-Evil", "a\r\nInjected: yes", "CR, LF"),
        ("X-Evil", "a\nb", "CR, LF"),
        ("X-Evil", "a\rb", "CR, LF"),
        ("X-Evil", "nul\x00", "CR, LF"),
        ("X-Evil", "Grüße", "non-ASCII"),
        ("Bad Name", "x", "invalid HTTP header name"),
        ("Bad:Name", "x", "invalid HTTP header name"),
        ("X-Evil\r\nInjected", "x", "invalid HTTP header name"),
        ("", "x", "invalid HTTP header name"),
        ("Content-Length", "5", "set by the transport"),
        ("transfer-encoding", "chunked", "set by the transport"),
    ],
)
def test_head_rejects_injection(name: str, value: str, match: str) -> None:
    with pytest.raises(TransportError, match=match):
        _builder().head({name: value}, 1)


def test_head_rejects_non_str_values() -> None:
    with pytest.raises(TransportError, match="must be a str"):
        _builder().head({"X-List": ["a"]}, 1)  # type: ignore[dict-item]
    with pytest.raises(TransportError, match="must be a str"):
        _builder().head({"X-Int": 1}, 1)  # type: ignore[dict-item]


def test_head_cache_does_not_leak_between_header_sets() -> None:
    builder = _builder()
    first = builder.head({"Mcp-Name": "a"}, 1)
    second = builder.head({"Mcp-Name": "b"}, 1)
    assert b"Mcp-Name: a" in first and b"Mcp-Name: b" in second
    assert builder.head({"Mcp-Name": "a"}, 7).endswith(b"Content-Length: 7\r\n\r\n")


# -- response heads and bodies (sans-I/O) -------------------------------------------------------


def test_parse_head_basics() -> None:
    head = parse_head(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n"
        b"Set-Cookie: a=1\r\nset-cookie: b=2"
    )
    assert (head.status, head.keep_alive, head.framing, head.length) == (200, True, "length", 12)
    assert head.headers["content-type"] == "application/json"
    assert head.headers["set-cookie"] == "a=1, b=2"


@pytest.mark.parametrize(
    ("raw", "framing", "keep_alive"),
    [
        (b"HTTP/1.1 200 OK\nContent-Length: 3", "length", True),  # bare LF
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked", "chunked", True),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked", "chunked", True),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5", "chunked", False),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip", "close", False),
        (b"HTTP/1.1 200 OK", "close", False),
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1", "length", False),
        (b"HTTP/1.0 200 OK\r\nContent-Length: 1", "length", False),
        (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1", "length", True),
        (b"HTTP/1.1 204 No Content", "none", True),
        (b"HTTP/1.1 304 Not Modified\r\nContent-Length: 10", "none", True),
        (b"HTTP/1.1 202 Accepted\r\nContent-Length: 0", "length", True),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 7, 7", "length", True),
        (b"HTTP/1.1 200", "close", False),  # no reason phrase
    ],
)
def test_parse_head_framing(raw: bytes, framing: str, keep_alive: bool) -> None:
    head = parse_head(raw)
    assert (head.framing, head.keep_alive) == (framing, keep_alive)


@pytest.mark.parametrize(
    "raw",
    [
        b"HTTP/2 200 OK",
        b"ICY 200 OK",
        b"HTTP/1.1 2x0 OK",
        b"garbage",
        b"HTTP/1.1 200 OK\r\nContent-Length: 5, 6",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1",
        b"HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded",
        b"HTTP/1.1 200 OK\r\nno colon here",
        b"HTTP/1.1 200 OK\r\nBad Name : x",
    ],
)
def test_parse_head_rejects_malformed(raw: bytes) -> None:
    with pytest.raises(TransportError):
        parse_head(raw)


def _decode_in_pieces(head: bytes, wire: bytes, step: int) -> tuple[bytes, BodyDecoder]:
    decoder = BodyDecoder(parse_head(head))
    out = b""
    for i in range(0, len(wire), step):
        out += b"".join(decoder.feed(wire[i : i + step]))
    return out, decoder


CHUNKED = b"5;ext=1\r\nhello\r\n1\r\n \r\nA\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n"


@pytest.mark.parametrize("step", [1, 2, 3, 7, 1000])
def test_chunked_decoding_split_anywhere(step: int) -> None:
    body, decoder = _decode_in_pieces(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked", CHUNKED, step)
    assert body == b"hello 0123456789"
    assert decoder.done and decoder.extra == b""


def test_chunked_bare_lf_and_extra_bytes() -> None:
    body, decoder = _decode_in_pieces(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked", b"3\nabc\n0\n\nEXTRA", 1000
    )
    assert body == b"abc" and decoder.done and decoder.extra == b"EXTRA"


@pytest.mark.parametrize("wire", [b"zz\r\n", b"3\r\nabcX\r\n", b"-3\r\nabc\r\n", b"0x3\r\nabc\r\n"])
def test_chunked_errors(wire: bytes) -> None:
    decoder = BodyDecoder(parse_head(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked"))
    with pytest.raises(ProtocolError):
        decoder.feed(wire)


@pytest.mark.parametrize("step", [1, 5, 1000])
def test_length_decoding_and_extra(step: int) -> None:
    body, decoder = _decode_in_pieces(b"HTTP/1.1 200 OK\r\nContent-Length: 5", b"helloEXTRA", step)
    assert body == b"hello" and decoder.done and decoder.extra == b"EXTRA"


def test_eof_rules() -> None:
    closing = BodyDecoder(parse_head(b"HTTP/1.1 200 OK"))
    assert closing.feed(b"abc") == [b"abc"] and not closing.done
    closing.eof()
    assert closing.done
    short = BodyDecoder(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 5"))
    short.feed(b"abc")
    with pytest.raises(TransportError, match="before the response body was complete"):
        short.eof()
    assert BodyDecoder(parse_head(b"HTTP/1.1 204 No Content")).done
    assert BodyDecoder(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 0")).done


# -- a raw-socket server ------------------------------------------------------------------------


def read_request(sock: socket.socket, buffer: bytearray) -> bytes | None:
    """One request (head + Content-Length body) from `sock`, or None at EOF."""
    while b"\r\n\r\n" not in buffer:
        data = sock.recv(65536)
        if not data:
            return None
        buffer += data
    end = buffer.index(b"\r\n\r\n") + 4
    head = bytes(buffer[:end]).lower()
    length = int(head.split(b"content-length:")[1].split(b"\r\n")[0]) if b"content-length:" in head else 0
    while len(buffer) < end + length:
        data = sock.recv(65536)
        if not data:
            return None
        buffer += data
    request = bytes(buffer[: end + length])
    del buffer[: end + length]
    return request


def json_reply(body: bytes | dict[str, Any], status: str = "200 OK", extra: bytes = b"") -> bytes:
    payload = body if isinstance(body, bytes) else _json.dumps(body)
    return (
        b"HTTP/1.1 "
        + status.encode()
        + b"\r\nContent-Type: application/json\r\n"
        + extra
        + b"Content-Length: %d\r\n\r\n" % len(payload)
        + payload
    )


def result_for(request: bytes, value: Any = None) -> dict[str, Any]:
    message = _json.loads(request.split(b"\r\n\r\n", 1)[1])
    return {"jsonrpc": "2.0", "id": message.get("id"), "result": {"echo": value}}


Handler = Callable[["RawServer", socket.socket, int], None]


@dataclass
class RawServer:
    """Accepts connections on a thread; `handler(server, sock, connection_index)` serves each."""

    handler: Handler
    tls: ssl.SSLContext | None = None
    connections: int = 0
    requests: list[tuple[int, bytes]] = field(default_factory=list)
    events: dict[str, threading.Event] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}/mcp"
        self._threads: list[threading.Thread] = []
        self._sockets: list[socket.socket] = []
        self._stop = False
        self._accept = threading.Thread(target=self._serve, daemon=True)

    def event(self, name: str) -> threading.Event:
        return self.events.setdefault(name, threading.Event())

    def _serve(self) -> None:
        self.listener.settimeout(0.05)
        while not self._stop:
            try:
                sock, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            index = self.connections
            self.connections += 1
            self._sockets.append(sock)
            thread = threading.Thread(target=self._run, args=(sock, index), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _run(self, sock: socket.socket, index: int) -> None:
        with contextlib.suppress(OSError), sock:
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_side=True)
            self.handler(self, sock, index)

    def __enter__(self) -> RawServer:
        self._accept.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        for event in self.events.values():
            event.set()
        self._accept.join(2)
        self.listener.close()
        for sock in self._sockets:  # unblock handlers still waiting on a kept-alive connection
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(2)


def keep_alive_echo(server: RawServer, sock: socket.socket, index: int) -> None:
    buffer = bytearray()
    while (request := read_request(sock, buffer)) is not None:
        server.requests.append((index, request))
        sock.sendall(json_reply(result_for(request, index)))


MESSAGE = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}


def _message(id_: int) -> dict[str, Any]:
    return {**MESSAGE, "id": id_}


class Runner:
    """Calls a transport the same way, sync or async (an async one on its own event loop)."""

    def __init__(self, mode: str, url: str, timeout: float | None = 5.0) -> None:
        self.mode = mode
        self.loop = asyncio.new_event_loop() if mode == "async" else None
        self.transport: Any = (
            HttpTransport(url, timeout=timeout)
            if mode == "sync"
            else AsyncHttpTransport(url, timeout=timeout)
        )
        assert self.transport.engine == "http11"
        self.ids = iter(range(1, 10_000))

    def request(
        self,
        message: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        timeout: float | None = 5.0,
        on_notification: Callable[[dict[str, Any]], None] | None = None,
    ) -> tuple[dict[str, Any], int | None]:
        message = message if message is not None else _message(next(self.ids))
        call = self.transport.request(
            message, headers or {}, timeout=timeout, on_notification=on_notification
        )
        if self.loop is not None:
            return self.loop.run_until_complete(call)  # type: ignore[no-any-return]
        return call  # type: ignore[no-any-return]

    def notify(self, message: dict[str, Any]) -> None:
        call = self.transport.notify(message, {})
        if self.loop is not None:
            self.loop.run_until_complete(call)

    def pool(self) -> Any:
        return self.transport._engine.pool

    def close(self) -> None:
        if self.loop is not None:
            self.loop.run_until_complete(self.transport.aclose())
            self.loop.close()
        else:
            self.transport.close()


MODES = ("sync", "async")


@contextlib.contextmanager
def serving(handler: Handler, mode: str, timeout: float | None = 5.0) -> Iterator[tuple[RawServer, Runner]]:
    with RawServer(handler) as server:
        runner = Runner(mode, server.url, timeout)
        try:
            yield server, runner
        finally:
            runner.close()


# -- wire behaviour -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_keep_alive_reuses_one_connection(mode: str) -> None:
    with serving(keep_alive_echo, mode) as (server, runner):
        for _ in range(5):
            reply, status = runner.request()
            assert status == 200 and reply["result"]["echo"] == 0
    assert server.connections == 1 and len(server.requests) == 5
    request = server.requests[0][1]
    assert request.startswith(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"\r\nAccept: application/json, text/event-stream\r\n" in request
    assert b"\r\nContent-Type: application/json\r\n" in request
    assert b"\r\nUser-Agent: mcpgen/" in request


@pytest.mark.parametrize("mode", MODES)
def test_idle_connection_closed_by_server_is_replaced(mode: str) -> None:
    """The server closes the connection after each reply (no `Connection: close`); the next
    request notices the closed idle connection and uses a new one."""

    def one_shot(server: RawServer, sock: socket.socket, index: int) -> None:
        request = read_request(sock, bytearray())
        assert request is not None
        server.requests.append((index, request))
        sock.sendall(json_reply(result_for(request, index)))

    with serving(one_shot, mode) as (server, runner):
        for expected in range(3):
            assert runner.request()[0]["result"]["echo"] == expected
            time.sleep(0.05)  # let the FIN arrive
    assert server.connections == 3 and len(server.requests) == 3


@pytest.mark.parametrize("mode", MODES)
def test_reused_connection_dying_before_any_byte_is_retried_once(mode: str) -> None:
    """A close racing with our reuse (request read, no reply byte): resent on a new connection."""

    def drop_second(server: RawServer, sock: socket.socket, index: int) -> None:
        buffer = bytearray()
        while (request := read_request(sock, buffer)) is not None:
            server.requests.append((index, request))
            if index == 0 and len(server.requests) == 2:
                sock.shutdown(socket.SHUT_RDWR)  # read it, answer nothing, close
                return
            sock.sendall(json_reply(result_for(request, index)))

    with serving(drop_second, mode) as (server, runner):
        assert runner.request()[0]["result"]["echo"] == 0
        pool = runner.pool()
        pool._checkout = _no_stale_check(pool)  # the close races the reuse: the check cannot see it
        reply, _ = runner.request()
        assert reply["result"]["echo"] == 1
    assert [index for index, _ in server.requests] == [0, 0, 1]
    assert server.requests[1][1] == server.requests[2][1]  # the same request, resent


def _no_stale_check(pool: Any) -> Callable[[], Any]:
    def checkout() -> Any:
        if not pool._idle:
            return None
        conn = pool._idle.pop()
        conn.reused = True
        return conn

    return checkout


@pytest.mark.parametrize("mode", MODES)
def test_fresh_connection_dying_is_not_retried(mode: str) -> None:
    def drop(server: RawServer, sock: socket.socket, index: int) -> None:
        request = read_request(sock, bytearray())
        if request is not None:
            server.requests.append((index, request))

    with serving(drop, mode) as (server, runner), pytest.raises(TransportError) as info:
        runner.request()
    assert not isinstance(info.value, (ConnectError, RequestTimeoutError))
    assert len(server.requests) == 1


@pytest.mark.parametrize("mode", MODES)
def test_failure_after_a_response_byte_is_not_retried(mode: str) -> None:
    def partial(server: RawServer, sock: socket.socket, index: int) -> None:
        buffer = bytearray()
        while (request := read_request(sock, buffer)) is not None:
            server.requests.append((index, request))
            if len(server.requests) == 2:
                sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Le")
                sock.shutdown(socket.SHUT_RDWR)
                return
            sock.sendall(json_reply(result_for(request, index)))

    with serving(partial, mode) as (server, runner):
        runner.request()
        with pytest.raises(TransportError, match="without a complete response head"):
            runner.request()
    assert len(server.requests) == 2


@pytest.mark.parametrize("mode", MODES)
def test_truncated_body_is_transport_error(mode: str) -> None:
    def short(server: RawServer, sock: socket.socket, index: int) -> None:
        read_request(sock, bytearray())
        sock.sendall(b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":')

    with serving(short, mode) as (_, runner), pytest.raises(TransportError, match="body was complete"):
        runner.request()


@pytest.mark.parametrize("mode", MODES)
def test_no_reply_is_request_timeout_and_connection_dropped(mode: str) -> None:
    def silent_first(server: RawServer, sock: socket.socket, index: int) -> None:
        buffer = bytearray()
        while (request := read_request(sock, buffer)) is not None:
            server.requests.append((index, request))
            if index == 0:
                server.event("release").wait(10)
                return
            sock.sendall(json_reply(result_for(request, index)))

    with serving(silent_first, mode) as (server, runner):
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError):
            runner.request(timeout=0.3)
        assert 0.25 < time.monotonic() - started < 3  # 0.33 s at worst on 2 loaded cores
        server.event("release").set()
        assert runner.request()[0]["result"]["echo"] == 1  # a new connection, not the timed-out one


@pytest.mark.parametrize("mode", MODES)
def test_timeout_bounds_a_trickling_body(mode: str) -> None:
    def trickle(server: RawServer, sock: socket.socket, index: int) -> None:
        read_request(sock, bytearray())
        sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n")
        for _ in range(50):
            sock.sendall(b" ")
            time.sleep(0.05)

    with serving(trickle, mode) as (_, runner):
        started = time.monotonic()
        with pytest.raises(RequestTimeoutError):
            runner.request(timeout=0.4)
        assert time.monotonic() - started < 2  # 0.42 s at worst on 2 loaded cores


@pytest.mark.parametrize("mode", MODES)
def test_nothing_listening_is_connect_error(mode: str) -> None:
    port = free_port()
    runner = Runner(mode, f"http://127.0.0.1:{port}/mcp")
    try:
        with pytest.raises(ConnectError):
            runner.request()
    finally:
        runner.close()


@pytest.mark.parametrize("mode", MODES)
def test_chunked_close_delimited_and_interim_replies(mode: str) -> None:
    def variety(server: RawServer, sock: socket.socket, index: int) -> None:
        buffer = bytearray()
        request = read_request(sock, buffer)
        assert request is not None
        body = _json.dumps(result_for(request, "chunked"))
        # an interim 103, then a chunked reply written in small pieces
        sock.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n")
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        for i in range(0, len(body), 7):
            piece = body[i : i + 7]
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            time.sleep(0.002)
        sock.sendall(b"0\r\n\r\n")
        request = read_request(sock, buffer)  # the same connection, kept alive
        assert request is not None
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"
            + _json.dumps(result_for(request, "until close"))
        )
        sock.shutdown(socket.SHUT_WR)

    with serving(variety, mode) as (server, runner):
        assert runner.request()[0]["result"]["echo"] == "chunked"
        assert runner.request()[0]["result"]["echo"] == "until close"
        assert not runner.pool()._idle  # a close-delimited reply never returns its connection
    assert server.connections == 1


@pytest.mark.parametrize("mode", MODES)
def test_malformed_chunk_mid_body_fails_and_drops_the_connection(mode: str) -> None:
    def bad_chunk(server: RawServer, sock: socket.socket, index: int) -> None:
        buffer = bytearray()
        while (request := read_request(sock, buffer)) is not None:
            server.requests.append((index, request))
            if index == 0:
                sock.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b'2\r\n{"\r\n'
                )
                time.sleep(0.05)
                sock.sendall(b"zz\r\n")
                server.event("done").wait(5)
                return
            sock.sendall(json_reply(result_for(request, index)))

    with serving(bad_chunk, mode) as (server, runner):
        with pytest.raises(ProtocolError, match="bad chunk size"):
            runner.request()
        server.event("done").set()
        assert runner.request()[0]["result"]["echo"] == 1
    assert server.connections == 2


@pytest.mark.parametrize("mode", MODES)
def test_sse_is_streamed_incrementally(mode: str) -> None:
    """The final response is written only after the client has handed the notification to
    `on_notification`: a client that waited for the whole body would time out."""

    def sse(server: RawServer, sock: socket.socket, index: int) -> None:
        request = read_request(sock, bytearray())
        assert request is not None
        rid = _json.loads(request.split(b"\r\n\r\n", 1)[1])["id"]
        sock.sendall(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        note = (
            b"event: message\n"
            b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n\n'
        )
        sock.sendall(b"%x\r\n%s\r\n" % (len(note), note))
        if not server.event("notified").wait(5):
            return
        final = b'data: {"jsonrpc":"2.0","id":%d,"result":{"ok":true}}\n\n' % rid
        sock.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(final), final))

    with serving(sse, mode) as (server, runner):
        seen: list[dict[str, Any]] = []

        def on_notification(message: dict[str, Any]) -> None:
            seen.append(message)
            server.event("notified").set()

        reply, status = runner.request(on_notification=on_notification, timeout=3)
    assert status == 200 and reply["result"] == {"ok": True}
    assert [n["method"] for n in seen] == ["notifications/progress"]


@pytest.mark.parametrize("mode", MODES)
def test_abandoned_sse_stream_closes_the_connection(mode: str) -> None:
    """Reading stops at the response; the rest of the stream never comes, so the connection is
    closed (HTTP-21) rather than pooled; the next request opens a new one."""

    def endless(server: RawServer, sock: socket.socket, index: int) -> None:
        buffer = bytearray()
        while (request := read_request(sock, buffer)) is not None:
            server.requests.append((index, request))
            rid = _json.loads(request.split(b"\r\n\r\n", 1)[1])["id"]
            sock.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            )
            event = b'data: {"jsonrpc":"2.0","id":%d,"result":{}}\n\n' % rid
            sock.sendall(b"%x\r\n%s\r\n" % (len(event), event))
            server.event("closed").wait(5) if index == 0 and sock.recv(1) == b"" else None
            return

    with serving(endless, mode) as (server, runner):
        assert runner.request()[1] == 200
        assert runner.request()[1] == 200
    assert server.connections == 2


@pytest.mark.parametrize("mode", MODES)
def test_non_2xx_json_rpc_error_and_plain_error(mode: str) -> None:
    def errors(server: RawServer, sock: socket.socket, index: int) -> None:
        buffer = bytearray()
        request = read_request(sock, buffer)
        assert request is not None
        error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "nope"}}
        sock.sendall(json_reply(error, "404 Not Found"))
        read_request(sock, buffer)
        sock.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nbad")

    from mcpgen_runtime.errors import HttpStatusError

    with serving(errors, mode) as (_, runner):
        reply, status = runner.request()
        assert status == 404 and reply["error"]["code"] == -32601
        with pytest.raises(HttpStatusError) as info:
            runner.request()
    assert (info.value.status_code, info.value.body) == (502, b"bad")


@pytest.mark.parametrize("mode", MODES)
def test_notify_accepts_202_and_keeps_the_connection(mode: str) -> None:
    def accept(server: RawServer, sock: socket.socket, index: int) -> None:
        buffer = bytearray()
        while (request := read_request(sock, buffer)) is not None:
            server.requests.append((index, request))
            sock.sendall(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")

    with serving(accept, mode) as (server, runner):
        runner.notify({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
        runner.notify({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    assert server.connections == 1 and len(server.requests) == 2


@pytest.mark.parametrize("mode", MODES)
def test_header_injection_never_reaches_the_wire(mode: str) -> None:
    with serving(keep_alive_echo, mode) as (server, runner), pytest.raises(TransportError, match="CR, LF"):
        runner.request(headers={"X-Note": "ok\r\nX-Injected: 1"})
    assert server.requests == []


def test_async_cancellation_drops_the_connection() -> None:
    def slow(server: RawServer, sock: socket.socket, index: int) -> None:
        buffer = bytearray()
        while (request := read_request(sock, buffer)) is not None:
            server.requests.append((index, request))
            if index == 0:
                server.event("go").wait(5)
                return
            sock.sendall(json_reply(result_for(request, index)))

    async def scenario(pool_owner: AsyncHttpTransport) -> Any:
        task = asyncio.ensure_future(pool_owner.request(_message(1), {}, timeout=5))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return await pool_owner.request(_message(2), {}, timeout=5)

    with RawServer(slow) as server:
        transport = AsyncHttpTransport(server.url)
        reply, _ = asyncio.run(scenario(transport))
        server.event("go").set()
        assert reply["result"]["echo"] == 1
    assert server.connections == 2


@pytest.mark.parametrize("mode", MODES)
def test_closing_a_reply_whose_end_has_arrived_keeps_the_connection(mode: str) -> None:
    """Closed before its body was read to the end: the end already waiting is read and the
    connection goes back to the pool (both sides; a reply whose end has not come is closed,
    HTTP-21, see test_abandoned_sse_stream_closes_the_connection)."""

    def in_two_parts(server: RawServer, sock: socket.socket, index: int) -> None:
        buffer = bytearray()
        while (request := read_request(sock, buffer)) is not None:
            server.requests.append((index, request))
            sock.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"5\r\nhello\r\n"
            )
            time.sleep(0.05)
            sock.sendall(b"0\r\n\r\n")

    def sync_scenario(pool: SyncPool, payload: bytes) -> int:
        for _ in range(2):
            response = pool.post(payload, 5)
            assert next(response.iter_body()) == b"hello"
            time.sleep(0.3)  # the end arrives, unread
            response.close()
        return len(pool._idle)

    async def async_scenario(pool: AsyncPool, payload: bytes) -> int:
        for _ in range(2):
            response = await pool.post(payload, 5)
            assert await response.aiter_body().__anext__() == b"hello"
            await asyncio.sleep(0.3)
            await response.aclose()
        return len(pool._idle)

    with RawServer(in_two_parts) as server:
        origin = lean_origin(server.url)
        assert origin is not None
        body = _json.dumps(_message(1))
        payload = HeadBuilder(origin, DEFAULTS).head({}, len(body)) + body
        if mode == "sync":
            pool = SyncPool(origin, server.url, timeout=5)
            idle = sync_scenario(pool, payload)
        else:
            apool = AsyncPool(origin, server.url, timeout=5)
            idle = asyncio.run(async_scenario(apool, payload))
    assert idle == 1 and server.connections == 1 and len(server.requests) == 2


def test_async_pool_survives_a_new_event_loop() -> None:
    with RawServer(keep_alive_echo) as server:
        transport = AsyncHttpTransport(server.url)
        assert asyncio.run(transport.request(_message(1), {}, timeout=5))[1] == 200
        assert asyncio.run(transport.request(_message(2), {}, timeout=5))[1] == 200  # stale loop: reconnects
        asyncio.run(transport.aclose())
    assert server.connections == 2


def test_sync_pool_is_thread_safe() -> None:
    origin = None
    with RawServer(keep_alive_echo) as server:
        origin = lean_origin(server.url)
        assert origin is not None
        pool = SyncPool(origin, server.url, timeout=5)
        builder = HeadBuilder(origin, DEFAULTS)
        errors: list[BaseException] = []

        def worker(n: int) -> None:
            try:
                for i in range(20):
                    body = _json.dumps(_message(n * 100 + i))
                    response = pool.post(builder.head({}, len(body)) + body, 5)
                    assert _json.loads(response.read())["id"] == n * 100 + i
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        pool.close()
    assert errors == []
    assert 1 <= server.connections <= 4 and len(server.requests) == 80


def test_async_pool_concurrent_requests() -> None:
    async def scenario(pool: AsyncPool, builder: HeadBuilder) -> list[int]:
        async def one(i: int) -> int:
            body = _json.dumps(_message(i))
            response = await pool.post(builder.head({}, len(body)) + body, 5)
            return int(_json.loads(await response.aread())["id"])

        try:
            return await asyncio.gather(*(one(i) for i in range(30)))
        finally:
            pool.close()

    with RawServer(keep_alive_echo) as server:
        origin = lean_origin(server.url)
        assert origin is not None
        pool = AsyncPool(origin, server.url, timeout=5)
        assert asyncio.run(scenario(pool, HeadBuilder(origin, DEFAULTS))) == list(range(30))
    assert len(server.requests) == 30


# -- TLS ----------------------------------------------------------------------------------------


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@pytest.mark.parametrize("mode", MODES)
def test_https_verified_keep_alive(mode: str, tmp_path: Path, no_proxy_env: pytest.MonkeyPatch) -> None:
    """https:// through stdlib ssl, verified against SSL_CERT_FILE (as httpx does); TLS 1.3
    session tickets on an idle connection do not make it look closed."""
    cert, key = _self_signed(tmp_path)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    no_proxy_env.setenv("SSL_CERT_FILE", str(cert))
    with RawServer(keep_alive_echo, tls=server_tls) as server:
        runner = Runner(mode, server.url)
        try:
            for _ in range(3):
                assert runner.request()[0]["result"]["echo"] == 0
                time.sleep(0.05)
        finally:
            runner.close()
    assert server.connections == 1 and len(server.requests) == 3


@pytest.mark.parametrize("mode", MODES)
def test_https_untrusted_certificate_is_connect_error(
    mode: str, tmp_path: Path, no_proxy_env: pytest.MonkeyPatch
) -> None:
    cert, key = _self_signed(tmp_path)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    no_proxy_env.delenv("SSL_CERT_FILE", raising=False)
    no_proxy_env.delenv("SSL_CERT_DIR", raising=False)
    with RawServer(keep_alive_echo, tls=server_tls) as server:
        runner = Runner(mode, server.url)
        try:
            with pytest.raises(ConnectError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
                runner.request()
        finally:
            runner.close()
    assert server.requests == []
