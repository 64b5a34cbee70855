"""`LegacyDispatcher`: the legacy half of a `Dispatcher` (2025-11-25, 2025-06-18, 2025-03-26), without I/O:
the handshake, one message of a legacy session in and an `Outcome` out, the channel back to the
client, and list-changed notifications for sessions that listen.

A dual-era server picks the era from how the client opens (VER-07..10): a request with modern
`_meta` is served statelessly by `Dispatcher.handle_message`; an `initialize` without it opens a
session (on HTTP: `http/legacy/sessions.py`; on stdio: the process), and the session's later messages come
here. They run the very same tool handlers through the dispatcher's own paths (argument checks,
rate limits, result shaping), with the session supplying the protocol version and client
capabilities that `_meta` would carry, and results stripped of what those revisions lack.

Differences from the modern era, all here: `ping` and `logging/setLevel` are answered;
`server/discover` and `subscriptions/listen` are not methods; asks (`ctx.elicit`, `ctx.sample`,
`ctx.list_roots`) are real requests to the client (`SessionChannel`); `ctx.log` sends
`notifications/message`; JSON-RPC errors travel with HTTP 200 (a 404 means "session gone" to
these clients); `notifications/cancelled` cancels a call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ... import telemetry
from ...protocol import jsonrpc
from ...protocol.legacy.handshake import INITIALIZED, LOG_MESSAGE, PING, SET_LEVEL, Handshake
from ...protocol.legacy.serving import (
    CANCELLED,
    LOG_LEVELS,
    MODERN_ONLY_METHODS,
    initialize_result,
    legacy_call_result,
    legacy_result,
    legacy_tools_page,
    log_level_allows,
    parse_initialize,
    server_request_params,
)
from ..core.bearer_auth import principal_id
from ..core.config import IncomingRequest, LegacySessionOptions, LegacySessionStore, Outcome
from ..core.dispatch import Dispatcher
from ..core.dispatch.tool_call import CheckedCall, call_tool
from ..core.handler_errors import ClientCapabilityRequired, RpcError
from ..core.listen import LIST_CHANGED, RESOURCE_UPDATED, Subscription
from ..core.replicas import store_unavailable
from ..core.results import error_result
from ..core.tasks.legacy import (
    LEGACY_TASK_METHODS,
    LEGACY_TASKS_SINCE,
    answer_legacy_task_method,
    legacy_task_capability,
)
from ..store import StoreUnavailable
from .sessions import Session

__all__ = ["Deliver", "LegacyDispatcher", "SessionChannel"]

_LOG = logging.getLogger("mcpgen.server")

_NO_PARAMS: dict[str, Any] = {}
SUBSCRIBE = "resources/subscribe"
UNSUBSCRIBE = "resources/unsubscribe"
# Delivers one notification to a listening client (a GET stream, or stdout).
Deliver = Callable[[dict[str, Any]], Awaitable[None]]


def _valid_id(value: Any) -> bool:
    cls = type(value)
    return cls is int or cls is str


def _error(id_: Any, code: int, message: str, data: Any = None) -> Outcome:
    # HTTP 200: legacy clients read 404 as "session expired" and 400 as a transport failure.
    return Outcome(200, jsonrpc.error(id_, code, message, data))


class LegacyDispatcher:
    """Legacy sessions of one server: the handshake and the messages of a session."""

    __slots__ = ("_forwarder", "_listeners", "_pages", "options", "server", "server_info", "store")

    def __init__(self, server: Dispatcher, store: LegacySessionStore[Session] | None = None) -> None:
        self.server = server
        self.options = server.config.legacy_sessions
        self.store = store  # HTTP: where sessions live (record changes are saved there)
        cfg = server.config
        info: dict[str, Any] = {"name": cfg.name, "version": cfg.version}
        if cfg.title is not None:
            info["title"] = cfg.title
        self.server_info = info
        # Each listener with its session (None: every resource update reaches it).
        self._listeners: dict[Deliver, Session | None] = {}
        self._forwarder: asyncio.Task[None] | None = None
        self._pages: dict[tuple[int, bool], tuple[dict[str, Any], dict[str, Any]]] = {}

    # ---- the handshake --------------------------------------------------------------------------

    def initialize(
        self, message: dict[str, Any], transport: str = "http"
    ) -> tuple[Outcome, Handshake | None]:
        """The answer to an `initialize` request and, when it is valid, what it settled."""
        otel = telemetry.active()
        if otel is None:
            return self._initialize(message)
        params = message.get("params")
        span = telemetry.ServerSpan(otel, "initialize", message.get("id"), params, transport=transport)
        answer = self._initialize(message)
        if answer[1] is not None:
            span.set_protocol_version(answer[1].protocol_version)
        span.end(answer[0].response)
        return answer

    def _initialize(self, message: dict[str, Any]) -> tuple[Outcome, Handshake | None]:
        id_ = message.get("id")
        if not _valid_id(id_):
            return Outcome(
                400, jsonrpc.error(None, jsonrpc.INVALID_REQUEST, "initialize needs a string or integer id")
            ), None
        try:
            requested, handshake = parse_initialize(message.get("params"))
        except ValueError as exc:
            return Outcome(400, jsonrpc.error(id_, jsonrpc.INVALID_PARAMS, str(exc))), None
        if requested != handshake.protocol_version:
            _LOG.debug("initialize asked for %.40r; answering %s", requested, handshake.protocol_version)
        capabilities = self.capabilities()
        if handshake.protocol_version >= LEGACY_TASKS_SINCE:  # the experimental tasks of 2025-11-25
            capabilities["tasks"] = legacy_task_capability()
        result = initialize_result(
            handshake.protocol_version, capabilities, self.server_info, self.server.config.instructions
        )
        return Outcome(200, jsonrpc.result(id_, result)), handshake

    def capabilities(self) -> dict[str, Any]:
        """The server's capabilities for a legacy client: what discover announces, plus `logging`
        (these revisions have `logging/setLevel` and `notifications/message`)."""
        declared = self.server.capabilities
        return {**{name: dict(settings) for name, settings in declared.items()}, "logging": {}}

    def open_session(self, handshake: Handshake, session_id: str | None, principal: str | None) -> Session:
        capabilities = handshake.capabilities
        session = Session(
            session_id,
            principal,
            handshake.protocol_version,
            capabilities if type(capabilities) is dict else dict(capabilities),
            handshake.peer_info,
        )
        if telemetry.active() is not None:
            session.opened_at = time.monotonic()  # its end records mcp.server.session.duration
        return session

    # ---- one message of a session --------------------------------------------------------------

    async def handle(
        self, session: Session, message: dict[str, Any], request: IncomingRequest, *, _in_span: bool = False
    ) -> Outcome:
        """Answer one request of `session` (`message` has an id and a method); with telemetry active,
        inside a SERVER span (`_traced` calls this again with `_in_span`, as `handle_message` does)."""
        id_: jsonrpc.RequestId = message.get("id")  # type: ignore[assignment]  # checked next
        if not _valid_id(id_):
            return Outcome(
                400,
                jsonrpc.error(None, jsonrpc.INVALID_REQUEST, "The request id must be a string or an integer"),
            )
        method = message.get("method")
        if message.get("jsonrpc") != "2.0" or type(method) is not str:
            return Outcome(
                400,
                jsonrpc.error(id_, jsonrpc.INVALID_REQUEST, 'A request needs "jsonrpc": "2.0" and a method'),
            )
        params = message.get("params")
        if params is None:
            params = _NO_PARAMS
        elif type(params) is not dict:
            return _error(id_, jsonrpc.INVALID_PARAMS, "params must be an object")
        if not _in_span:
            otel = telemetry.active()
            if otel is not None:
                return await self._traced(otel, session, message, id_, method, params, request)
        server = self.server
        meta = params.get("_meta")
        if type(meta) is not dict:
            meta = _NO_PARAMS
        checked = CheckedCall(meta, session.protocol_version, session.client_capabilities, request)
        try:
            if method == "tools/call":
                try:
                    result = await call_tool(server, id_, params, checked)
                except ClientCapabilityRequired as exc:
                    result = error_result(f"Tool {params.get('name')!r} {self._missing(exc)}", None)
                return Outcome(200, {"jsonrpc": "2.0", "id": id_, "result": legacy_call_result(result)})
            elif method == "tools/list":
                page = self._tools_page(server._list_tools(params), session.protocol_version)
                return Outcome(200, jsonrpc.result(id_, page))
            elif method in LEGACY_TASK_METHODS and session.protocol_version >= LEGACY_TASKS_SINCE:
                owner = principal_id(server.config.auth, request.principal)
                result = await answer_legacy_task_method(server._tasks, method, params, owner)
            elif method == PING:
                return Outcome(200, jsonrpc.result(id_, {}))
            elif method == SET_LEVEL:
                return await self._set_level(session, id_, params)
            elif method in (SUBSCRIBE, UNSUBSCRIBE):
                return await self._subscribe(session, id_, params, method == SUBSCRIBE, request.principal)
            elif method in MODERN_ONLY_METHODS:
                return _error(
                    id_, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method} (MCP 2026-07-28 only)"
                )
            else:
                entry = server._methods.get(method)
                if entry is None:
                    return _error(id_, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")
                try:
                    result = await server._call_method(entry, id_, method, params, checked)
                except ClientCapabilityRequired as exc:
                    return _error(id_, jsonrpc.INVALID_REQUEST, f"{method} {self._missing(exc)}")
        except RpcError as exc:
            return _error(id_, exc.code, exc.message, exc.data)
        except StoreUnavailable as exc:  # a shared rate limit or state claim could not be checked
            return store_unavailable(id_, exc)
        return Outcome(200, {"jsonrpc": "2.0", "id": id_, "result": legacy_result(result)})

    async def _traced(
        self,
        otel: telemetry.Otel,
        session: Session,
        message: dict[str, Any],
        id_: jsonrpc.RequestId,
        method: str,
        params: dict[str, Any],
        request: IncomingRequest,
    ) -> Outcome:
        return await self.server._answer_in_span(
            otel,
            id_,
            method,
            params,
            request,
            lambda: self.handle(session, message, request, _in_span=True),
            protocol_version=session.protocol_version,
            session_id=session.id,
        )

    def _tools_page(self, page: dict[str, Any], version: str) -> dict[str, Any]:
        """The legacy form of a prebuilt tools/list page, made once per page and revision (pages are
        replaced, never changed, when the tool set changes): 2025-11-25 shows each tool's
        `execution.taskSupport` again (the 2026-07-28 listing has no `execution`)."""
        tasks = version >= LEGACY_TASKS_SINCE
        key = (id(page), tasks)
        cached = self._pages.get(key)
        if cached is not None and cached[0] is page:
            return cached[1]
        if len(self._pages) >= 256:
            self._pages.clear()
        legacy = legacy_tools_page(page)
        if tasks:
            legacy["tools"] = [self._with_execution(tool) for tool in legacy["tools"]]
        self._pages[key] = (page, legacy)
        return legacy

    def _with_execution(self, tool: Mapping[str, Any]) -> Mapping[str, Any]:
        served = self.server._tools.get(str(tool.get("name")))
        if served is None or served.task_support is None:
            return tool
        return {**tool, "execution": {"taskSupport": served.task_support}}

    @staticmethod
    def _missing(exc: ClientCapabilityRequired) -> str:
        required = exc.data.get("requiredCapabilities", {}) if isinstance(exc.data, dict) else {}
        names = ", ".join(sorted(required)) or "?"
        return f"needs the client capability {names}, which this client did not declare at initialize"

    async def _set_level(self, session: Session, id_: Any, params: dict[str, Any]) -> Outcome:
        level = params.get("level")
        if level not in LOG_LEVELS:
            return _error(id_, jsonrpc.INVALID_PARAMS, f"level must be one of {', '.join(LOG_LEVELS)}")
        session.log_level = level
        if self.store is not None:
            await self.store.save(session)
        return Outcome(200, jsonrpc.result(id_, {}))

    async def _subscribe(
        self, session: Session, id_: Any, params: dict[str, Any], add: bool, principal: Any
    ) -> Outcome:
        """resources/subscribe and /unsubscribe (RES-08): the session's URIs for
        `notifications/resources/updated` (kept in its record, so every replica sees them), within
        the server's `subscribe_rules` (a served URI this principal may watch; bounded count and size)."""
        if self.server.capabilities.get("resources", {}).get("subscribe") is not True:
            method = SUBSCRIBE if add else UNSUBSCRIBE
            return _error(id_, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")
        uri = params.get("uri")
        if type(uri) is not str or not uri:
            return _error(id_, jsonrpc.INVALID_PARAMS, "params.uri must be a non-empty string")
        uris = session.resource_subscriptions
        if add:
            rules = self.server.subscribe_rules
            held = uris if uris is not None else ()
            refusal = await rules.refusal(uri, principal, held, session.protocol_version)
            if refusal is not None:
                return _error(id_, refusal.code, refusal.message, refusal.data)
            if uris is None:
                uris = session.resource_subscriptions = set()
            uris.add(uri)
        elif uris is not None:
            uris.discard(uri)
        if self.store is not None:
            await self.store.save(session)
        return Outcome(200, jsonrpc.result(id_, {}))

    async def notification(self, session: Session, method: str, params: Any) -> bool:
        """A notification of `session`: `initialized` is noted, `cancelled` cancels the call it
        names (CANCEL-09; unknown ids are ignored, CANCEL-13); others are ignored. False when a
        cancellation named no call running here."""
        otel = telemetry.active()
        if otel is not None:
            telemetry.ServerSpan(
                otel,
                method,
                None,
                params,
                transport="stdio" if session.id is None else "http",
                protocol_version=session.protocol_version,
                session_id=session.id,
            ).end()
        if method == INITIALIZED:
            if not session.initialized:
                session.initialized = True
                if self.store is not None:
                    await self.store.save(session)
        elif method == CANCELLED:
            request_id = params.get("requestId") if type(params) is dict else None
            if _valid_id(request_id) and session.cancel(request_id):
                _LOG.info(
                    "request %r cancelled by the client: %.200s",
                    request_id,
                    params.get("reason", "no reason given"),
                )
            else:
                return False
        else:
            _LOG.debug("legacy notification %.80s ignored", method)
        return True

    # ---- list-changed notifications for listening clients ------------------------------------------

    def add_listener(self, deliver: Deliver, session: Session | None = None) -> None:
        """Send `notifications/*/list_changed` to `deliver` (a session's GET stream, or stdout), and
        `notifications/resources/updated` for the URIs `session` subscribed to."""
        self._listeners[deliver] = session
        if self._forwarder is None:
            hub = self.server.hub
            subscription = hub.open("legacy-sessions", dict.fromkeys(LIST_CHANGED, True))
            subscription.every_uri = True
            self._forwarder = asyncio.get_running_loop().create_task(self._forward(subscription))

    def remove_listener(self, deliver: Deliver) -> None:
        self._listeners.pop(deliver, None)

    async def _forward(self, subscription: Subscription) -> None:
        try:
            while True:
                batch = await subscription.next_batch(None)
                if batch is None:  # the server is shutting down
                    return
                for tagged in batch:
                    notification: dict[str, Any] = {"jsonrpc": "2.0", "method": tagged["method"]}
                    params = {k: v for k, v in tagged.get("params", {}).items() if k != "_meta"}
                    if params:
                        notification["params"] = params
                    uri = params.get("uri") if tagged["method"] == RESOURCE_UPDATED else None
                    for deliver, session in list(self._listeners.items()):
                        if uri is not None and not await self._subscribed(session, uri):
                            continue
                        try:
                            await deliver(notification)
                        except Exception:  # one broken listener never stops the others
                            _LOG.debug("list-changed notification not delivered", exc_info=True)
        finally:
            self.server.hub.discard(subscription)
            self._forwarder = None

    async def _subscribed(self, session: Session | None, uri: str) -> bool:
        if session is None:
            return False
        if self.store is not None and session.id is not None:
            # A subscription made through another replica is in the record.
            with contextlib.suppress(StoreUnavailable):
                await self.store.get(session.id)
        uris = session.resource_subscriptions
        return uris is not None and uri in uris


class SessionChannel:
    """The way back to the client of a legacy session for one request (`ClientChannel`):
    requests and log messages go out through `send` (stdout; on HTTP a subclass sends on the
    request's SSE stream)."""

    __slots__ = ("_send", "options", "protocol_version", "session")

    def __init__(self, options: LegacySessionOptions, session: Session, send: Deliver | None = None) -> None:
        self.session = session
        self.protocol_version = session.protocol_version
        self.options = options
        self._send = send

    async def send(self, message: dict[str, Any]) -> None:
        assert self._send is not None
        await self._send(message)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        options = self.options
        wire = server_request_params(method, params, self.protocol_version)
        otel = telemetry.active()
        if otel is None:
            return await self.session.ask_client(
                method,
                wire,
                self.send,
                timeout=options.client_request_timeout_s,
                limit=options.max_pending_client_requests,
            )
        span = telemetry.PeerRequestSpan(otel, method, wire, self.protocol_version, self.session.id)
        try:
            result = await self.session.ask_client(
                method,
                span.params,
                self.send,
                timeout=options.client_request_timeout_s,
                limit=options.max_pending_client_requests,
            )
        except BaseException as exc:
            span.end(exc=exc)
            raise
        span.end({"result": result})
        return result

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        if not log_level_allows(self.session.log_level, level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.send(jsonrpc.notification(LOG_MESSAGE, params))

    async def close_stream(self) -> None:
        """Nothing to close off HTTP."""
