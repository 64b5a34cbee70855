"""Streamable HTTP server side as a raw ASGI app (no framework: this is the hot path).

Per POST (docs/RULES.md conformance §4 order; the JSON-RPC checks themselves live in core/dispatch/):

  1. read the whole body (> max_body_bytes -> 413; not in time, `HttpLimits` -> 408; both close
     the connection)
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
(HTTP-19) until the client closes it or the server ends it (SUB-07).

Paths: MCP is answered on `path` (`/mcp`, a trailing slash or not) under the point the app is
mounted at (ASGI `root_path`), and at that mount point itself; any other path is a plain `404` (no
JSON-RPC: nothing there speaks MCP), after the body is read. Probes (core/health.py): a GET or HEAD
of `ServerConfig.health_path` / `ready_path` (under the mount point too) is answered before the Host
check and authentication (the Origin check still applies); the test is made only for verbs other
than POST, so MCP requests pay nothing for it. `/.well-known/…` (OAuth metadata) is answered by the
`ProtectedResource` layer in front of this app.

Clients of the initialize-based revisions (legacy/sessions.py) are told apart once, early, from the
header block (memoized): an `Mcp-Session-Id` without a 2026-07-28 `MCP-Protocol-Version`, or a
legacy version header, sends the request to its session; an `initialize` without modern `_meta`
opens one; GET and DELETE with a session id serve its streams and its end. Everything else is the
stateless path above, where a session id is ignored and never minted (HTTP-24) and GET/DELETE get
405 (HTTP-23). With `ServerConfig.modern_only` there is no legacy path at all.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from ... import _json
from ..._version import LEGACY_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from ...protocol import jsonrpc
from ...protocol.headers import PROTOCOL_VERSION_LC, SESSION_ID_LC
from ...protocol.legacy.serving import carries_modern_meta
from ..core.bearer_auth import VERIFIED_TOKEN, Unauthorized, authenticate
from ..core.config import IncomingRequest, Outcome
from ..core.dispatch import Dispatcher
from ..store import StoreUnavailable
from .asgi_io import (
    EVENT_PREFIX,
    EVENT_SUFFIX,
    SSE_HEADERS,
    ASGIApp,
    Gone,
    Receive,
    Resumed,
    Scope,
    Send,
    cancel_on_disconnect,
    reply,
    send_body,
    send_empty,
    send_error,
)
from .body_reader import BodyTimeout, body_deadline, finish_first, read_rest, take_first
from .legacy.sessions import LegacyHttp

__all__ = ["MCP_PATH", "ASGIApp", "McpAsgiApp", "Receive", "Scope", "Send"]

_LOG = logging.getLogger("mcpgen.server")

_KEEPALIVE: Final = b": keep-alive\n\n"
_UNSET: Any = object()
# Answered from prebuilt data: nothing to cancel, so not worth watching for a disconnect.
_INSTANT = frozenset({"tools/list", "server/discover"})
_MODERN_VERSIONS = frozenset(SUPPORTED_PROTOCOL_VERSIONS)
_LEGACY_VERSIONS = frozenset(LEGACY_PROTOCOL_VERSIONS)
_LEGACY_VERBS = frozenset({"GET", "DELETE"})
MCP_PATH: Final = "/mcp"  # the endpoint's path under the app's mount point
_NOT_FOUND: Final = b"Not Found\n"
_PLAIN: Final = [(b"content-type", b"text/plain; charset=utf-8")]


def _route_path(scope: Scope) -> str:
    """The request's path under the app's mount point (`root_path`), "" for the mount point itself.
    A path not under `root_path` is taken as already relative (mounts that strip the prefix)."""
    path: str = scope["path"]
    root = scope.get("root_path")
    if root and path.startswith(root) and (len(path) == len(root) or path[len(root)] == "/"):
        return path[len(root) :]
    return path


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
            return (
                bool(sep) and "/" not in authority and f"{scheme}://{_split_port(authority)}" in self._exact
            )
        return _split_port(value) in self._exact


def _accepts(header: str | None) -> tuple[bool, bool]:
    """(JSON acceptable, SSE acceptable) for an Accept header; a missing header accepts anything."""
    if header is None:
        return True, True
    json_ok = sse_ok = False
    for part in header.split(","):
        media, _, parameters = part.partition(";")
        media = media.strip().lower()
        if any(
            p.strip().replace(" ", "") in ("q=0", "q=0.0", "q=0.00", "q=0.000") for p in parameters.split(";")
        ):
            continue
        if media in ("application/json", "application/*", "*/*"):
            json_ok = True
        if media in ("text/event-stream", "text/*", "*/*"):
            sse_ok = True
    return json_ok, sse_ok


class _SseStream:
    """Lazily started SSE response: the first notification (or `open`) sends the headers (status 200)."""

    __slots__ = ("send", "started")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def open(self) -> None:
        if not self.started:
            self.started = True
            await self.send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})

    async def notify(self, message: dict[str, Any]) -> None:
        if not self.started:
            await self.open()
        await self.send(
            {
                "type": "http.response.body",
                "body": EVENT_PREFIX + _json.dumps(message) + EVENT_SUFFIX,
                "more_body": True,
            }
        )

    async def keepalive(self) -> None:
        if self.started:
            await self.send({"type": "http.response.body", "body": _KEEPALIVE, "more_body": True})

    async def finish(self, message: dict[str, Any] | None) -> None:
        body = EVENT_PREFIX + _json.dumps(message) + EVENT_SUFFIX if message is not None else b""
        await self.send({"type": "http.response.body", "body": body, "more_body": False})  # HTTP-16


class McpAsgiApp:
    """ASGI callable for one server (any `Dispatcher`; `ToolServer.asgi_app()` makes one).

    MCP is answered on `path` (with or without a trailing slash) under the point the app is mounted
    at, and at the mount point itself (an app mounted at `/tools` answers `/tools/mcp` and `/tools`);
    every other path but the probes is a plain 404."""

    def __init__(
        self, server: Dispatcher, *, allowed_hosts: tuple[str, ...] | None = _UNSET, path: str = MCP_PATH
    ) -> None:
        if not path.startswith("/"):
            raise ValueError(f"the MCP path starts with '/', not {path!r}")
        self.server = server
        self.path = path
        endpoint = path.rstrip("/")
        self._endpoints = frozenset({endpoint or "/", f"{endpoint}/"})  # with or without a trailing slash
        cfg = server.config
        hosts = cfg.allowed_hosts if allowed_hosts is _UNSET else allowed_hosts
        self._origins = (
            _Allowlist(cfg.allowed_origins, origins=True) if cfg.allowed_origins is not None else None
        )
        self._hosts = _Allowlist(hosts, origins=False) if hosts is not None else None
        self._max_body = cfg.max_body_bytes
        self._limits = cfg.http_limits
        self._blocks = _HeaderTable(self._classify)
        self._auth = cfg.auth
        self._legacy = None if cfg.modern_only else LegacyHttp(server)
        self._probes = server.probes
        self._probe_paths = self._probes.paths

    def close_sessions(self) -> None:
        """Server shutdown: end every legacy session (their open streams close)."""
        if self._legacy is not None:
            self._legacy.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await _lifespan(receive, send, self)
            return  # other scopes (websocket) are not served: returning closes them
        route = _route_path(scope)
        if scope["method"] != "POST" and route in self._probe_paths:
            await self._probe(scope, route, send)
            return
        # The endpoint, or the mount point (route "" or "/" with a root_path; a stripped path is "/").
        on_path = route in self._endpoints or (route in ("", "/") and bool(scope.get("root_path")))
        block = self._blocks.of(scope["headers"])
        headers = block.headers
        # RULES.md conformance §4.1: always read the whole body first; one chunk is the common case.
        if block.declared_too_large:
            await send_error(send, 413, f"Request body exceeds {self._max_body} bytes", close=True)
            return
        # The body is nearly always here already: take it without arming a timer (body_reader.py).
        message, pending, first = take_first(receive)
        if message is None or message.get("more_body", False):
            body = await self._read_slowly(message, pending, first, receive, send)
            if body is None:  # the client went away, or took too long and was answered 408
                return
        elif message["type"] == "http.disconnect":
            return
        else:
            body = message.get("body", b"")
        if len(body) > self._max_body:
            await send_error(send, 413, f"Request body exceeds {self._max_body} bytes", close=True)
            return
        if not on_path:  # read first (RULES.md conformance §4.1), then: nothing here speaks MCP
            await send_body(send, 404, _NOT_FOUND, _PLAIN)
            return
        if block.refused is not None:  # Origin (HTTP-03) or Host
            await send_error(send, *block.refused)
            return
        verb = scope["method"]
        if verb != "POST" and not (block.legacy and verb in _LEGACY_VERBS):
            await send(
                {
                    "type": "http.response.start",
                    "status": 405,
                    "headers": [(b"allow", b"POST"), (b"content-length", b"0")],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        principal = scope.get("user")
        if self._auth is not None:
            try:
                principal = await authenticate(self._auth, headers, scope.get(VERIFIED_TOKEN))
            except Unauthorized as exc:  # HTTP-05, RFC 6750 §3
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"www-authenticate", exc.challenge.encode("latin-1", "replace")),
                            (b"content-length", b"0"),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": b""})
                return
        legacy = self._legacy
        if verb != "POST":  # a legacy session's stream (GET) or end (DELETE)
            assert legacy is not None
            await (
                legacy.get(block, principal, receive, send)
                if verb == "GET"
                else legacy.delete(block, principal, send)
            )
            return
        if block.unacceptable is not None:  # Content-Type, Accept
            await send_error(send, *block.unacceptable)
            return
        json_ok, sse_ok = block.json_ok, block.sse_ok
        try:
            message = _json.loads(body)
        except _json.JSONDecodeError:
            await send_error(send, 400, "Parse error", code=jsonrpc.PARSE_ERROR)
            return

        client = scope.get("client")
        peer = client[0] if client else None
        if block.legacy:  # decided once per header block: a legacy session's message
            assert legacy is not None
            await legacy.post(message, block, principal, peer, receive, send)
            return
        method = message.get("method") if type(message) is dict and "id" in message else None
        if method is None or method in _INSTANT:
            outcome = await self.server.handle_message(
                message, IncomingRequest("http", headers, None, principal, peer=peer)
            )
            await reply(send, outcome, sse=not json_ok)
        elif method == "subscriptions/listen":
            if not sse_ok:
                await send_error(send, 406, "subscriptions/listen needs Accept: text/event-stream")
                return
            del body  # the stream may stay open for hours: its request body (max_body_bytes) goes now
            await self._watched(message, headers, principal, peer, receive, send, False, True, True)
        elif method == "initialize" and legacy is not None and not carries_modern_meta(message.get("params")):
            await legacy.initialize(message, block, principal, send)  # opens a legacy session
        else:
            await self._watched(message, headers, principal, peer, receive, send, json_ok, sse_ok, False)

    async def _probe(self, scope: Scope, path: str, send: Send) -> None:
        """Liveness or readiness (core/health.py): no Host check, no authentication, Origin still checked."""
        if scope["method"] not in ("GET", "HEAD"):
            await send_empty(send, 405, [(b"allow", b"GET, HEAD")])
            return
        block = self._blocks.of(scope["headers"])
        origin = block.headers.get("origin")
        if origin is not None and self._origins is not None and not self._origins.allows(origin):
            await send_error(send, 403, "Origin not allowed")  # HTTP-02/03
            return
        status, body = await self._probes.answer(path)
        if scope["method"] == "HEAD":
            await send_empty(send, status, self._probes.headers())
        else:
            await send_body(send, status, body, self._probes.headers())

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
        session_id = headers.get(SESSION_ID_LC)
        version = headers.get(PROTOCOL_VERSION_LC)
        if version is not None:
            version = version.strip(" \t")
        # A 2026-07-28 version header makes the request modern whatever else it carries (HTTP-24).
        legacy = (
            self._legacy is not None
            and version not in _MODERN_VERSIONS
            and (session_id is not None or version in _LEGACY_VERSIONS)
        )
        return _Block(
            headers,
            length is not None and length.isdigit() and int(length) > self._max_body,
            refused,
            unacceptable,
            json_ok,
            sse_ok,
            legacy,
            session_id,
            version,
        )

    async def _read_slowly(
        self, message: Any, pending: Any, first: Any, receive: Receive, send: Send
    ) -> bytes | None:
        """A body still on its way or in several parts, within the body deadlines: the body (maybe
        past the size limit, for the 413), or None when the client went away or was too slow (408)."""
        try:
            if message is None:
                message, deadline = await finish_first(pending, first, self._limits)
            else:
                deadline = body_deadline(self._limits)
            if message["type"] == "http.disconnect":
                return None
            body: bytes = message.get("body", b"")
            if not message.get("more_body", False):
                return body
            return await read_rest(receive, body, self._max_body, self._limits, deadline)
        except BodyTimeout as exc:
            await send_error(send, 408, f"{exc}; closing the connection", close=True)
            return None

    async def _watched(
        self,
        message: Any,
        headers: Mapping[str, str],
        principal: Any,
        peer: str | None,
        receive: Receive,
        send: Send,
        json_ok: bool,
        sse_ok: bool,
        listen: bool,
    ) -> None:
        """Run a request whose handler may take time; a client disconnect cancels it (HTTP-21).

        The handler runs in this task; a small watcher task waits for `http.disconnect` and
        cancels it. After a disconnect nothing more is sent for the request (HTTP-22).
        """
        stream: _SseStream | None = None
        # Positional (the field order of IncomingRequest): this runs for every tools/call.
        if sse_ok:
            stream = sse = _SseStream(send)
            request = IncomingRequest(
                "http", headers, sse.notify, principal, sse.open, sse.keepalive if listen else None, peer
            )
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
                await reply(send, outcome, sse=not json_ok)
            return
        current = asyncio.current_task()
        assert current is not None
        gone = Gone()
        watcher = asyncio.get_running_loop().create_task(cancel_on_disconnect(receive, current, gone))
        try:
            try:
                outcome = await Resumed(work, first)
            finally:
                watcher.cancel()
        except asyncio.CancelledError:
            if not (gone.disconnected or self._probes.draining):
                raise
            current.uncancel()
            if gone.disconnected:
                _LOG.debug("client closed the connection; request %r cancelled", message.get("id"))
                return
            # run_http's drain outlasted its grace period: a retryable answer rather than a reset.
            outcome = _cut_off_by_shutdown(message.get("id"))
        if stream is not None and stream.started:
            await stream.finish(outcome.response)
        else:
            await reply(send, outcome, sse=not json_ok)


def _cut_off_by_shutdown(id_: Any) -> Outcome:
    """The answer to a call still running when the shutdown grace period ended: HTTP 503 (with
    `Retry-After`) and -32603 whose data says it can be retried, on another replica."""
    return Outcome(
        503,
        jsonrpc.error(
            id_,
            jsonrpc.INTERNAL_ERROR,
            "The server is shutting down; retry the request",
            {"retryable": True},
        ),
    )


class _Block(NamedTuple):
    """One distinct request header block and what the checks make of it."""

    headers: Mapping[str, str]  # lower-case names, repeated fields combined; read-only
    declared_too_large: bool  # Content-Length over the body limit
    refused: tuple[int, str] | None  # Origin or Host not allowed: (status, message)
    unacceptable: tuple[int, str] | None  # Content-Type or Accept not usable: (status, message)
    json_ok: bool
    sse_ok: bool
    legacy: bool  # a legacy session's request (legacy/sessions.py)
    session_id: str | None  # Mcp-Session-Id
    version: str | None  # MCP-Protocol-Version, trimmed


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


async def _lifespan(receive: Receive, send: Send, app: McpAsgiApp) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await app.server.open_shared_state()  # a shared store: join the replicas' change fan-out
            except StoreUnavailable as exc:
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            app.server.close_subscriptions()  # SUB-07: listen streams end with their final response
            app.close_sessions()
            await app.server.close_shared_state()
            await send({"type": "lifespan.shutdown.complete"})
            return
