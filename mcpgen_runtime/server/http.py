"""Streamable HTTP server side as a raw ASGI app (no framework: this is the hot path).

Per POST (docs/RULES.md conformance §4 order; the JSON-RPC checks themselves live in dispatch.py):

  1. read the whole body (> max_body_bytes -> 413, connection closed)
  2. Origin present and not allowed -> 403 (HTTP-02/03); Host not allowed -> 421
  3. not POST -> 405 `Allow: POST` (HTTP-23); bearer token missing/invalid when `auth` is
     configured -> 401 `WWW-Authenticate: Bearer` (HTTP-05); Content-Type not JSON -> 415;
     Accept allowing neither JSON nor SSE -> 406
  4. invalid JSON -> 400 -32700 (id null); then `Dispatcher.handle_message`

`tools/list` and `server/discover` are answered directly. Every other request runs a
handler, so it is watched: a client disconnect cancels it (HTTP-21, CANCEL-02). Its reply is
JSON, or an SSE stream (`event: message`, HTTP-12/18) as soon as the handler sends a
notification (progress) or asks for one (`ctx.open_stream()`), when the client accepts SSE.
`subscriptions/listen` always streams: acknowledgment, notifications, comment keep-alives
(HTTP-19) until the client closes it or the server ends it (SUB-07). Session ids are never
minted or echoed (HTTP-24).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping, MutableMapping
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from .. import _json
from ..protocol import jsonrpc
from .auth import Unauthorized, authenticate
from .config import LOCAL_HOSTS, IncomingRequest, Outcome
from .dispatch import Dispatcher

__all__ = ["ASGIApp", "McpAsgiApp", "Receive", "Scope", "Send", "run_http"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_LOG = logging.getLogger("mcpgen.server")

_CONTENT_TYPE_JSON: Final = (b"content-type", b"application/json")
_JSON_HEADERS: Final = [_CONTENT_TYPE_JSON]
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),  # HTTP-18
]
_EVENT_PREFIX: Final = b"event: message\ndata: "
_EVENT_SUFFIX: Final = b"\n\n"
_KEEPALIVE: Final = b": keep-alive\n\n"
_UNSET: Any = object()
# Answered from prebuilt data: nothing to cancel, so not worth watching for a disconnect.
_INSTANT = frozenset({"tools/list", "server/discover"})


class _Disconnected(Exception):
    pass


def _split_port(authority: str) -> str:
    """`host[:port]` -> host, keeping IPv6 brackets."""
    if authority.startswith("["):
        end = authority.find("]")
        return authority[: end + 1] if end != -1 else authority
    return authority.rpartition(":")[0] if ":" in authority else authority


class _Allowlist:
    """Port-agnostic matching for entries without a port, exact matching for entries with one."""

    def __init__(self, entries: tuple[str, ...], *, origins: bool) -> None:
        self._origins = origins
        self._exact = frozenset(e.lower() for e in entries)

    def allows(self, value: str) -> bool:
        # Not memoized here: the header table keeps each block's conclusions.
        value = value.strip().lower()
        if value in self._exact:
            return True
        if self._origins:
            scheme, sep, authority = value.partition("://")
            return bool(sep) and "/" not in authority and f"{scheme}://{_split_port(authority)}" in self._exact
        return _split_port(value) in self._exact


def _accepts(header: str | None) -> tuple[bool, bool]:
    """(JSON acceptable, SSE acceptable) for an Accept header; a missing header accepts anything."""
    if header is None:
        return True, True
    json_ok = sse_ok = False
    for part in header.split(","):
        media, _, parameters = part.partition(";")
        media = media.strip().lower()
        if any(p.strip().replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in parameters.split(";")):
            continue
        if media in ("application/json", "application/*", "*/*"):
            json_ok = True
        if media in ("text/event-stream", "text/*", "*/*"):
            sse_ok = True
    return json_ok, sse_ok


async def _send_body(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _send_error(send: Send, status: int, message: str, *, code: int = jsonrpc.INVALID_REQUEST,
                      close: bool = False) -> None:
    headers = [*_JSON_HEADERS, (b"connection", b"close")] if close else _JSON_HEADERS
    await _send_body(send, status, _json.dumps(jsonrpc.error(None, code, message)), headers)


class _SseStream:
    """Lazily started SSE response: the first notification (or `open`) sends the headers (status 200)."""

    __slots__ = ("send", "started")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def open(self) -> None:
        if not self.started:
            self.started = True
            await self.send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})

    async def notify(self, message: dict[str, Any]) -> None:
        if not self.started:
            await self.open()
        await self.send({"type": "http.response.body", "body": _EVENT_PREFIX + _json.dumps(message) + _EVENT_SUFFIX,
                         "more_body": True})

    async def keepalive(self) -> None:
        if self.started:
            await self.send({"type": "http.response.body", "body": _KEEPALIVE, "more_body": True})

    async def finish(self, message: dict[str, Any] | None) -> None:
        body = _EVENT_PREFIX + _json.dumps(message) + _EVENT_SUFFIX if message is not None else b""
        await self.send({"type": "http.response.body", "body": body, "more_body": False})  # HTTP-16


class McpAsgiApp:
    """ASGI callable for one server (any `Dispatcher`; `ToolServer.asgi_app()` makes one);
    answers on whatever path it is mounted at."""

    def __init__(self, server: Dispatcher, *, allowed_hosts: tuple[str, ...] | None = _UNSET) -> None:
        self.server = server
        cfg = server.config
        hosts = cfg.allowed_hosts if allowed_hosts is _UNSET else allowed_hosts
        self._origins = _Allowlist(cfg.allowed_origins, origins=True) if cfg.allowed_origins is not None else None
        self._hosts = _Allowlist(hosts, origins=False) if hosts is not None else None
        self._max_body = cfg.max_body_bytes
        self._blocks = _HeaderTable(self._classify)
        self._auth = cfg.auth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await _lifespan(receive, send, self.server)
            return  # other scopes (websocket) are not served: returning closes them
        block = self._blocks.of(scope["headers"])
        headers = block.headers
        # RULES.md conformance §4.1: always read the whole body first; one chunk is the common case.
        if block.declared_too_large:
            await _send_error(send, 413, f"Request body exceeds {self._max_body} bytes", close=True)
            return
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        body: bytes = message.get("body", b"")
        if message.get("more_body", False):
            try:
                body = await self._read_rest(receive, body)
            except _Disconnected:
                return
        if len(body) > self._max_body:
            await _send_error(send, 413, f"Request body exceeds {self._max_body} bytes", close=True)
            return
        if block.refused is not None:  # Origin (HTTP-03) or Host
            await _send_error(send, *block.refused)
            return
        if scope["method"] != "POST":
            await send({"type": "http.response.start", "status": 405,
                        "headers": [(b"allow", b"POST"), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        principal = scope.get("user")
        if self._auth is not None:
            try:
                principal = await authenticate(self._auth, headers)
            except Unauthorized as exc:  # HTTP-05, RFC 6750 §3
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"www-authenticate", exc.challenge.encode("latin-1", "replace")), (b"content-length", b"0")]})
                await send({"type": "http.response.body", "body": b""})
                return
        if block.unacceptable is not None:  # Content-Type, Accept
            await _send_error(send, *block.unacceptable)
            return
        json_ok, sse_ok = block.json_ok, block.sse_ok
        try:
            message = _json.loads(body)
        except _json.JSONDecodeError:
            await _send_error(send, 400, "Parse error", code=jsonrpc.PARSE_ERROR)
            return

        client = scope.get("client")
        peer = client[0] if client else None
        method = message.get("method") if type(message) is dict and "id" in message else None
        if method is None or method in _INSTANT:
            outcome = await self.server.handle_message(
                message, IncomingRequest("http", headers, None, principal, peer=peer)
            )
            await _reply(send, outcome, sse=not json_ok)
        elif method == "subscriptions/listen":
            if not sse_ok:
                await _send_error(send, 406, "subscriptions/listen needs Accept: text/event-stream")
                return
            await self._watched(message, headers, principal, peer, receive, send, False, True, True)
        else:
            await self._watched(message, headers, principal, peer, receive, send, json_ok, sse_ok, False)

    def _classify(self, headers: Mapping[str, str]) -> _Block:
        """Everything the header checks conclude from one header block (RULES.md conformance §4 order is
        kept by `__call__`, which acts on these conclusions one by one)."""
        length = headers.get("content-length")
        origin = headers.get("origin")
        refused: tuple[int, str] | None = None
        if origin is not None and self._origins is not None and not self._origins.allows(origin):
            refused = (403, "Origin not allowed")
        elif self._hosts is not None and not self._hosts.allows(headers.get("host", "")):
            refused = (421, "Host not allowed")
        content_type = headers.get("content-type")
        json_ok, sse_ok = _accepts(headers.get("accept"))
        unacceptable: tuple[int, str] | None = None
        if content_type != "application/json" and (
            content_type is None or content_type.partition(";")[0].strip().lower() != "application/json"
        ):
            unacceptable = (415, "Content-Type must be application/json")
        elif not (json_ok or sse_ok):
            unacceptable = (406, "Accept must allow application/json or text/event-stream")
        return _Block(
            headers,
            length is not None and length.isdigit() and int(length) > self._max_body,
            refused, unacceptable, json_ok, sse_ok,
        )

    async def _read_rest(self, receive: Receive, first: bytes) -> bytes:
        """The remaining chunks of a body sent in several; stops reading past the size limit."""
        chunks = [first]
        size = len(first)
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Disconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            chunks.append(chunk)
            if size > self._max_body or not message.get("more_body", False):
                return b"".join(chunks)

    async def _watched(self, message: Any, headers: Mapping[str, str], principal: Any, peer: str | None,
                       receive: Receive, send: Send, json_ok: bool, sse_ok: bool, listen: bool) -> None:
        """Run a request whose handler may take time; a client disconnect cancels it (HTTP-21).

        The handler runs in this task; a small watcher task waits for `http.disconnect` and
        cancels it. After a disconnect nothing more is sent for the request (HTTP-22).
        """
        stream: _SseStream | None = None
        # Positional (the field order of IncomingRequest): this runs for every tools/call.
        if sse_ok:
            stream = sse = _SseStream(send)
            request = IncomingRequest("http", headers, sse.notify, principal, sse.open,
                                      sse.keepalive if listen else None, peer)
        else:
            request = IncomingRequest("http", headers, None, principal, None, None, peer)
        work = self.server.handle_message(message, request)
        # Most handlers finish without ever suspending: run the first step inline and start the
        # watcher only if the handler has to wait (saves a task per call on the hot path).
        try:
            first = work.send(None)
        except StopIteration as done:
            outcome = done.value
            if stream is not None and stream.started:
                await stream.finish(outcome.response)
            else:
                await _reply(send, outcome, sse=not json_ok)
            return
        current = asyncio.current_task()
        assert current is not None
        gone = _Gone()
        watcher = asyncio.get_running_loop().create_task(_cancel_on_disconnect(receive, current, gone))
        try:
            try:
                outcome = await _Resumed(work, first)
            finally:
                watcher.cancel()
            if stream is not None and stream.started:
                await stream.finish(outcome.response)
            else:
                await _reply(send, outcome, sse=not json_ok)
        except asyncio.CancelledError:
            if not gone.disconnected:
                raise
            current.uncancel()
            _LOG.debug("client closed the connection; request %r cancelled", message.get("id"))


class _Resumed:
    """Awaitable that continues a coroutine which already ran its first step and yielded `first`
    (PEP 380 delegation, as `await` itself does: values go up to the task, sends and throws
    come back down). What Python 3.12's eager tasks do, for one coroutine."""

    __slots__ = ("coro", "first")

    def __init__(self, coro: Coroutine[Any, Any, Outcome], first: Any) -> None:
        self.coro = coro
        self.first = first

    def __await__(self) -> Generator[Any, Any, Outcome]:
        coro, value = self.coro, self.first
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # cancellation and friends go to the coroutine
                try:
                    value = coro.throw(exc)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
            else:
                try:
                    value = coro.send(sent)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]


class _Gone:
    __slots__ = ("disconnected",)

    def __init__(self) -> None:
        self.disconnected = False


async def _cancel_on_disconnect(receive: Receive, task: asyncio.Task[Any], gone: _Gone) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.disconnected = True
    task.cancel()


class _Block(NamedTuple):
    """One distinct request header block and what the checks make of it."""

    headers: Mapping[str, str]  # lower-case names, repeated fields combined; read-only
    declared_too_large: bool  # Content-Length over the body limit
    refused: tuple[int, str] | None  # Origin or Host not allowed: (status, message)
    unacceptable: tuple[int, str] | None  # Content-Type or Accept not usable: (status, message)
    json_ok: bool
    sse_ok: bool


class _HeaderTable:
    """Raw ASGI headers -> `_Block`, memoized.

    A client sends the same header block on every call to a tool, so decoding and checking are
    done once per distinct block. The table is bounded in entries and never keeps a large block,
    so unique blocks (tracing ids, say) or huge ones only cost the work they would cost anyway.
    """

    __slots__ = ("_classify", "_seen")
    _LIMIT: Final = 256
    _MAX_BLOCK_BYTES: Final = 8192

    def __init__(self, classify: Callable[[Mapping[str, str]], _Block]) -> None:
        self._classify = classify
        self._seen: dict[Any, _Block] = {}

    def of(self, raw: Any) -> _Block:
        key = tuple(raw) if type(raw) is not tuple else raw
        try:
            hit = self._seen.get(key)
        except TypeError:  # a server handing out unhashable pairs (lists): no memo
            return self._classify(_decode_headers(key))
        if hit is None:
            hit = self._classify(_decode_headers(key))
            if sum(len(name) + len(value) for name, value in key) <= self._MAX_BLOCK_BYTES:
                if len(self._seen) >= self._LIMIT:
                    self._seen.clear()
                self._seen[key] = hit
        return hit


def _decode_headers(raw: tuple[Any, ...]) -> Mapping[str, str]:
    headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in raw}
    if len(headers) != len(raw):
        # Repeated fields combine (RFC 9110 §5.3), so a doubled Mcp-Name can never match a body value.
        headers = {}
        for raw_name, raw_value in raw:
            name = raw_name.decode("latin-1").lower()
            value = raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return MappingProxyType(headers)  # shared between requests: nobody may change it


async def _reply(send: Send, outcome: Outcome, *, sse: bool) -> None:
    status, response = outcome
    if response is None:  # accepted notification (HTTP-10)
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
    elif sse and status == 200:  # a client that only takes SSE gets a one-event stream
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        await send({"type": "http.response.body", "body": _EVENT_PREFIX + _json.dumps(response) + _EVENT_SUFFIX})
    else:  # _send_body, inlined: this is every JSON reply
        body = _json.dumps(response)
        await send({"type": "http.response.start", "status": status,
                    "headers": [_CONTENT_TYPE_JSON, (b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send, server: Dispatcher) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            server.close_subscriptions()  # SUB-07: listen streams end with their final response
            await send({"type": "lifespan.shutdown.complete"})
            return


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run_http(server: Dispatcher, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve with uvicorn until interrupted."""
    import uvicorn

    allowed_hosts = server.config.allowed_hosts
    if allowed_hosts == LOCAL_HOSTS and not _is_loopback(host):
        # Remote clients address the server by names we cannot guess; the Origin check stays on.
        _LOG.warning("bound to %s: Host header check disabled (set ServerConfig.allowed_hosts to enable it)", host)
        allowed_hosts = None
    app: ASGIApp = McpAsgiApp(server, allowed_hosts=allowed_hosts)
    if (wrap := getattr(server.config.auth, "wrap_app", None)) is not None:
        app = wrap(app)  # a ProtectedResource (oauth.py): its metadata and 403 insufficient_scope
    config = uvicorn.Config(
        app, host=host, port=port, log_level="warning", lifespan="off",
        server_header=False, date_header=False, timeout_graceful_shutdown=5,
    )

    class _Uvicorn(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            server.close_subscriptions()  # SUB-07: open listen streams end instead of holding shutdown up
            await super().shutdown(sockets)

    _Uvicorn(config).run()
