"""Sans-I/O dispatch: one JSON-RPC message in, one `Outcome` (HTTP status + response) out.

`Dispatcher` is the transport-free part of `ToolServer` (tool_server.py adds the HTTP and
stdio entry points; http/app.py and stdio.py drive a `Dispatcher`). The per-message path is
dict lookups, the precompiled validators (catalog.py), the handler and orjson.

Split by job: the router (this module) checks the envelope, `_meta` and headers and routes
by method; tools/call's own checks are tool_call.py, input-required rounds rounds.py, and the
served set with its set-up and run-time changes served.py.

Check order (docs/RULES.md conformance §4, steps 3-14). Header checks run only when the transport
hands over headers (HTTP); stdio has no header layer.

     envelope (-32600) -> notification (202) -> MCP-Protocol-Version present (-32020)
  -> _meta protocolVersion/clientCapabilities (-32602, BASE-31) -> header == _meta version (-32020)
  -> version supported (-32022, VER-01) -> Mcp-Method (-32020) -> Mcp-Name (-32020)
  -> method known (-32601, 404) -> tools/call: tool known (-32602, TOOLS-22)
  -> rate limit (isError, SEC-03) -> Mcp-Param-* (-32020, XHDR-22..25) -> arguments (isError, SEC-01)
  -> inputResponses / requestState (-32602, MRTR-07..10, MRTR-21; only when present)
  -> single-use state claimed in the store (-32602, MRTR-11; only when the state says so) -> handler

Shared state (store/): with the default in-memory store nothing here awaits a store. A shared
store (Redis) is consulted only by the features that need it — a rate limit, a single-use
state — and when it cannot be reached the request is answered with a retryable error (HTTP 503,
`Retry-After`, `-32603` whose data says `retryable`), never with per-process state.

Beyond tools: `subscriptions/listen` streams list-changed notifications (SUB-*, listen.py),
and `add_method` serves further methods (prompts, resources, ...) with caching hints stamped
on their complete results (CACHE-01) and input-required rounds on prompts/get and
resources/read (MRTR-02, input_requests.py).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

from .... import telemetry
from ....protocol import jsonrpc
from ....protocol.headers import PROTOCOL_VERSION_LC
from ....protocol.meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from ....protocol.tasks import TASK_METHODS, declares_tasks
from ...store import StoreUnavailable
from ..bearer_auth import principal_id
from ..catalog import ServedMethod
from ..config import IncomingRequest, Outcome
from ..context import RequestContext, RpcError, status_for_code
from ..handler_errors import tasks_extension_required
from ..header_checks import check_standard_headers
from ..input_requests import MRTR_METHODS, InputRequired
from ..listen import TASK_IDS, listen
from ..replicas import store_unavailable
from ..tasks.methods import answer_task_method
from .rounds import end_round, redeem_round
from .served import ServedSet
from .tool_call import NO_ARGS, CheckedCall, call_tool

__all__ = ["Dispatcher"]

_LOG = logging.getLogger("mcpgen.server")

_DIRECT = IncomingRequest()


def _err(id_: Any, code: int, message: str, data: Any = None, status: int | None = None) -> Outcome:
    return Outcome(
        status if status is not None else status_for_code(code), jsonrpc.error(id_, code, message, data)
    )


def _valid_id(value: Any) -> bool:
    cls = type(value)  # exact JSON types first (the common case), subclasses the long way
    return cls is int or cls is str or (isinstance(value, (str, int)) and not isinstance(value, bool))


class Dispatcher(ServedSet):
    """The served set (served.py) and `handle_message` over it.

    At run time a server can also change its tool set (`add_tool`, `remove_tool`: listeners
    get `notifications/tools/list_changed`), serve further methods (`add_method`) and
    capabilities (`declare_capability`), and announce changes (`notify_list_changed`,
    `notify_resource_updated`). Call these from the event loop thread.
    """

    __slots__ = ()

    # ---- one message --------------------------------------------------------------------

    async def handle_message(
        self, message: Any, request: IncomingRequest | None = None, *, _in_span: bool = False
    ) -> Outcome:
        """Validate and answer one parsed JSON-RPC message (see the module docstring for the order).

        With telemetry active (telemetry/) a request is answered inside a SERVER span: `_traced`
        opens it and calls this again with `_in_span` (internal); when it is off, the cost is one
        check, and no other coroutine.

        `subscriptions/listen` returns only when the subscription ends (client cancellation
        raises CancelledError here; `close_subscriptions` makes it return its final response).
        """
        if request is None:
            request = _DIRECT
        if type(message) is not dict:
            if isinstance(message, list):
                return _err(
                    None,
                    jsonrpc.INVALID_REQUEST,
                    "Batches are not supported: send one JSON-RPC message per request",
                )
            return _err(None, jsonrpc.INVALID_REQUEST, "The message must be a JSON-RPC request object")
        has_id = "id" in message
        id_ = message.get("id")
        if has_id and not _valid_id(id_):
            return _err(None, jsonrpc.INVALID_REQUEST, "The request id must be a string or an integer")
        method = message.get("method")
        if message.get("jsonrpc") != "2.0":
            return _err(id_, jsonrpc.INVALID_REQUEST, 'The message must have "jsonrpc": "2.0"')
        if type(method) is not str:
            if "result" in message or "error" in message:
                return _err(
                    id_, jsonrpc.INVALID_REQUEST, "Clients must not send JSON-RPC responses to the server"
                )
            return _err(id_, jsonrpc.INVALID_REQUEST, "The message has no method")
        params = message.get("params")
        if not has_id:
            otel = telemetry.active()
            if otel is not None:
                telemetry.ServerSpan(otel, method, None, params, transport=request.transport).end()
            return self._notification(method, params)
        if params is None:
            params = NO_ARGS
        elif type(params) is not dict:
            return self._fail(id_, method, jsonrpc.INVALID_PARAMS, "params must be an object")
        if not _in_span:
            otel = telemetry.active()
            if otel is not None:
                return await self._traced(otel, message, id_, method, params, request)

        headers = request.headers
        header_version: str | None = None
        if headers is not None:
            header_version = headers.get(PROTOCOL_VERSION_LC)
            if header_version is None:
                return self._fail(id_, method, jsonrpc.HEADER_MISMATCH, "Missing MCP-Protocol-Version header")
        meta = params.get("_meta")
        if type(meta) is not dict:
            return self._fail(
                id_,
                method,
                jsonrpc.INVALID_PARAMS,
                f"params._meta must be an object carrying {PROTOCOL_VERSION_KEY} "
                f"and {CLIENT_CAPABILITIES_KEY}",
            )
        version = meta.get(PROTOCOL_VERSION_KEY)
        if type(version) is not str:
            return self._fail(
                id_, method, jsonrpc.INVALID_PARAMS, f"params._meta lacks {PROTOCOL_VERSION_KEY}"
            )
        capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
        if type(capabilities) is not dict:
            return self._fail(
                id_, method, jsonrpc.INVALID_PARAMS, f"params._meta lacks {CLIENT_CAPABILITIES_KEY}"
            )
        if (
            header_version is not None
            and header_version != version
            and header_version.strip(" \t") != version
        ):
            return self._fail(
                id_,
                method,
                jsonrpc.HEADER_MISMATCH,
                "MCP-Protocol-Version header does not match params._meta protocolVersion",
            )
        if version not in self._supported:
            return self._fail(
                id_,
                method,
                jsonrpc.UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": self._supported_list, "requested": version},
            )
        if headers is not None:
            mismatch = check_standard_headers(headers, method, params)
            if mismatch is not None:
                return self._fail(id_, method, jsonrpc.HEADER_MISMATCH, mismatch)

        assert id_ is not None  # has_id and _valid_id
        checked = CheckedCall(meta, version, capabilities, request)
        try:
            if method == "tools/call":
                result = await call_tool(self, id_, params, checked)
            elif method == "tools/list":
                result = self._list_tools(params)
            elif method == "server/discover":
                result = self._discover
            elif method == "subscriptions/listen":
                if self._store.shared and not self._fanout.active:
                    await self._fanout.start()  # changes made on other replicas reach this stream
                principal = request.principal
                requested = params.get("notifications")
                admit_tasks = None
                if type(requested) is dict and TASK_IDS in requested:
                    if not declares_tasks(capabilities):
                        raise tasks_extension_required("notifications.taskIds")
                    task_owner = principal_id(self.config.auth, principal)
                    admit_tasks = partial(self._task_watch.admit, owner=task_owner)
                return await listen(
                    self._hub,
                    self._subscription_kinds,
                    id_,
                    params,
                    request,
                    keepalive_s=self.config.keepalive_s,
                    meta=self._result_meta,
                    admit=lambda uris: self._subscribe_rules.admit(uris, principal),
                    admit_tasks=admit_tasks,
                    # Streams per principal; an anonymous client's per connection (its stream sink).
                    owner=("principal", principal_id(self.config.auth, principal))
                    if principal is not None
                    else ("connection", request.notify),
                )
            elif method in TASK_METHODS:
                owner = principal_id(self.config.auth, request.principal)
                result = await answer_task_method(self._tasks, method, params, capabilities, owner)
                if self._result_meta is not None:
                    result["_meta"] = self._result_meta
            else:
                entry = self._methods.get(method)
                if entry is None:
                    return self._fail(id_, method, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")
                result = await self._call_method(entry, id_, method, params, checked)
        except RpcError as exc:
            return self._fail(id_, method, exc.code, exc.message, exc.data, exc.http_status)
        except StoreUnavailable as exc:
            return store_unavailable(id_, exc)
        return Outcome(200, {"jsonrpc": "2.0", "id": id_, "result": result})

    async def _traced(
        self,
        otel: telemetry.Otel,
        message: dict[str, Any],
        id_: Any,
        method: str,
        params: dict[str, Any],
        request: IncomingRequest,
    ) -> Outcome:
        """`handle_message` inside a SERVER span and a duration measurement (telemetry/)."""
        meta = params.get("_meta")
        version = meta.get(PROTOCOL_VERSION_KEY) if type(meta) is dict else None
        return await self._answer_in_span(
            otel,
            id_,
            method,
            params,
            request,
            lambda: self.handle_message(message, request, _in_span=True),
            protocol_version=version if type(version) is str else None,
        )

    async def _answer_in_span(
        self,
        otel: telemetry.Otel,
        id_: Any,
        method: str,
        params: dict[str, Any],
        request: IncomingRequest,
        answer: Callable[[], Awaitable[Outcome]],
        *,
        protocol_version: str | None,
        session_id: str | None = None,
    ) -> Outcome:
        """`answer()` inside a SERVER span, which ends with its response or its exception: the one
        span of a request of either era (a legacy session's too: legacy/session_dispatch.py)."""
        span = telemetry.ServerSpan(
            otel,
            method,
            id_,
            params,
            transport=request.transport,
            protocol_version=protocol_version,
            session_id=session_id,
            headers=request.headers,
            redact=self._redacted_paths(method, params),
        )
        try:
            outcome = await answer()
        except BaseException as exc:
            span.end(exc=exc)
            raise
        span.end(outcome.response)
        return outcome

    def _redacted_paths(self, method: str, params: dict[str, Any]) -> tuple[tuple[str, ...], ...]:
        """Where a tool's Mcp-Param-* values sit in its arguments (kept out of telemetry)."""
        if method != "tools/call":
            return ()
        name = params.get("name")
        tool = self._tools.get(name) if type(name) is str else None
        return tuple(param.path for param, _ in tool.header_params) if tool is not None else ()

    def _fail(
        self, id_: Any, method: str, code: int, message: str, data: Any = None, status: int | None = None
    ) -> Outcome:
        # VER-08: any error to a (legacy) initialize names the versions this server speaks.
        if method == "initialize" and data is None:
            data = {"supported": self._supported_list}
            message = f"{message} ({self._initialize_hint})"
        return _err(id_, code, message, data, status)

    def _notification(self, method: str, params: Any) -> Outcome:
        # Nothing to do for notifications here: stdio cancellation is handled by the stdio loop,
        # and over HTTP a disconnect is the cancellation (HTTP-21). Never answered (BASE-16).
        _LOG.debug("notification %s ignored", method)
        return Outcome(202, None)

    # ---- methods ------------------------------------------------------------------------

    def _list_tools(self, params: Mapping[str, Any]) -> dict[str, Any]:
        cursor = params.get("cursor")
        if cursor is None:
            return self._first_page
        page = self._pages.get(cursor) if type(cursor) is str else None
        if page is None:
            raise RpcError(jsonrpc.INVALID_PARAMS, "Invalid cursor")  # PAGE-08
        return page

    async def _call_method(
        self,
        entry: ServedMethod,
        id_: jsonrpc.RequestId,
        method: str,
        params: dict[str, Any],
        checked: CheckedCall,
    ) -> dict[str, Any]:
        request = checked.request
        ctx = RequestContext._for_request(
            request,
            request_id=id_,
            method=method,
            meta=checked.meta,
            protocol_version=checked.version,
            client_capabilities=checked.capabilities,
            progress_interval=self._progress_interval,
        )
        if method in MRTR_METHODS and ("inputResponses" in params or "requestState" in params):
            await redeem_round(self, ctx, method, params, request)
        try:
            value = await entry.handler(params, ctx)
        except InputRequired as ask:
            ended = end_round(self, ask, method, params, request, method)
            if ended is None:
                raise RpcError(jsonrpc.INTERNAL_ERROR, f"Internal error in {method} (requestState)") from None
            return ended
        except RpcError:
            raise
        except Exception as exc:
            _LOG.exception("handler of %s raised", method)
            raise RpcError(
                jsonrpc.INTERNAL_ERROR, f"Internal error in {method} ({type(exc).__name__})"
            ) from exc
        finally:
            ctx.close()
        if not isinstance(value, dict):
            _LOG.error("handler of %s returned %s, not a result object", method, type(value).__name__)
            raise RpcError(jsonrpc.INTERNAL_ERROR, f"Internal error in {method}")
        result = dict(value)
        if entry.cacheable:  # CACHE-01; the handler's own hints win
            result.setdefault("ttlMs", entry.ttl_ms)
            if "cacheScope" not in result:
                scope = entry.cache_scope
                if scope is None:  # CACHE-13: what an authenticated caller gets is theirs
                    scope = "private" if request.principal is not None else self.config.list_cache_scope
                result["cacheScope"] = scope
        result["resultType"] = jsonrpc.RESULT_COMPLETE
        if self._result_meta is not None:
            result["_meta"] = {**result.get("_meta", {}), **self._result_meta}
        return result
