"""`ClientCore`: everything a client does except moving bytes and running user callbacks.

Every operation is a *flow*: a generator that yields steps and returns the operation's value.
An `Outgoing` step is a request to send (the driver sends back the transport's reply
`(message, http_status)`, or throws the transport's error into the flow); an `InputNeeded`
step asks the driver to run the user's MRTR callbacks and send back their answers. The
drivers (`AsyncClient`, and `Client` generated from it) only pump flows, so ids, `_meta`,
headers, retries (VER-02, XHDR-20, HTTP-26), multi-round-trip input (MRTR-15..20), caching
(CACHE-03..17), progress (PROG-01/02), pagination and result parsing exist once.

Per call, a client does no work for features the call does not use: no progress token
without a progress callback, no cache on `tools/call`, no MRTR machinery until a result says
`input_required`, no token provider call without one.

Its members: `legacy` (legacy_flows.py: the era and the legacy lifecycle) and `checks`
(tool_checks.py: a tool's declared schemas and models at the edges of a call).
"""

from __future__ import annotations

import itertools
import secrets
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeVar

from pydantic import BaseModel

from .. import _json
from .._version import LEGACY_PROTOCOL_VERSIONS, PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, __version__
from ..cache import ResponseCache, StaleCacheWarning
from ..content import ToolResult
from ..errors import (
    HeaderMismatchError,
    McpRuntimeError,
    PaginationError,
    ProtocolError,
    RemoteError,
    ResponseLostError,
    ToolError,
    TransportError,
    UnsupportedProtocolVersionError,
)
from ..protocol import headers as mcp_headers
from ..protocol import jsonrpc, tasks, xheader
from ..protocol.input_messages import InputResult, ProgressCallback
from ..protocol.jsonrpc import Message
from ..protocol.legacy.detect import (
    DISCOVER,
    Era,
    EraChoice,
    check_era,
)
from ..protocol.legacy.handshake import VERSION_HEADER_SINCE, Handshake, discover_view
from ..protocol.meta import PROGRESS_TOKEN_KEY, request_meta
from ..protocol.subscriptions import SubscriptionFilter
from ..protocol.tasks import TaskState
from ..tools import PackageTools, ToolSpec, ToolTable, tool_table
from ..transport.limits import Deadline, Timeout
from .drift import DriftCheck
from .input_responses import (
    DEFAULT_MAX_INPUT_ROUNDS,
    STATE_ONLY_DELAY,
    InputNeeded,
    input_round_flow,
    resume_params,
)
from .legacy_flows import LEGACY, MODERN, REISSUED_METHODS, LegacyFlows
from .options import check_max_time
from .retry_policy import SAFE_TO_REPEAT, repeatable_tool, retry_wait
from .steps import Flow, Notify, Outgoing, Step
from .task_flows import TaskFlows
from .tool_checks import InvalidToolWarning, ToolChecks, tool_result, usable_tools

if TYPE_CHECKING:
    pass

__all__ = [
    "ClientCore",
    "Flow",
    "Notify",
    "Outgoing",
    "Step",
    "ToolsPage",
]

OnNotification = Callable[[Message], None]
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
TOOLS_LIST_CHANGED: Final = "notifications/tools/list_changed"
# notification -> the cached methods it makes stale (CACHE-14)
_STALE_AFTER: Final[Mapping[str, tuple[str, ...]]] = {
    TOOLS_LIST_CHANGED: ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
    "notifications/resources/updated": ("resources/read",),
}
_NO_HEADERS: Final[Mapping[str, str]] = MappingProxyType({})
_HEADER_CACHE_LIMIT = 1024  # (method, name) pairs; tool names come from the caller
_TASK_AWARE: Final = frozenset({"tools/call", *tasks.TASK_METHODS})


@dataclass(frozen=True, slots=True)
class ToolsPage:
    """One `tools/list` page. `next_cursor` is opaque; `""` is a valid cursor (PAGE-06/07)."""

    tools: list[dict[str, Any]]
    next_cursor: str | None
    ttl_ms: int  # missing or negative -> 0 (CACHE-08/09)
    cache_scope: str | None
    cached: bool = False  # served from the response cache, not fetched
    listed: tuple[Any, ...] = ()  # the page's `tools` as the server sent them, invalid ones included


class ClientCore:
    """Everything a client does except moving bytes and running user callbacks."""

    def __init__(
        self,
        *,
        client_info: Mapping[str, str] | None = None,
        tools: Iterable[Mapping[str, Any]] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_time: float | None = None,
        send_headers: bool = True,
        capabilities: Mapping[str, Any] | None = None,
        input_callbacks: Mapping[str, Callable[[Any], Any]] | None = None,
        max_input_rounds: int = DEFAULT_MAX_INPUT_ROUNDS,
        retries: int = 0,
        on_progress: ProgressCallback | None = None,
        on_notification: OnNotification | None = None,
        cache: ResponseCache | None = None,
        partition: str | None = None,
        era: EraChoice = "modern",  # the drivers pass "auto" unless told otherwise
        legacy_version: str | None = None,
    ) -> None:
        if max_input_rounds < 0 or retries < 0:
            raise ValueError("max_input_rounds and retries must be >= 0")
        self.timeout = timeout
        self.max_time = check_max_time(max_time)
        self.send_headers = send_headers
        self.client_info: dict[str, str] = (
            dict(client_info) if client_info is not None else {"name": "mcpgen", "version": __version__}
        )
        self.capabilities: dict[str, Any] = dict(capabilities or {})
        self.input_callbacks: dict[str, Callable[[Any], Any]] = dict(input_callbacks or {})
        self.max_input_rounds = max_input_rounds
        self.retries = retries  # further attempts after a retryable error (errors.py), each a new request
        self.on_progress = on_progress
        self.on_notification = on_notification
        self.cache = cache
        # The authorization context of `private` cache entries (CACHE-13); None: unknown (the
        # driver passes one per listing when a token provider is in use).
        self.default_partition = partition
        # A generated package's own definitions are parsed per tool on first use; others at once.
        self.tools: Mapping[str, ToolSpec] = (
            ToolTable(tools)
            if isinstance(tools, PackageTools)
            else tool_table(tools)
            if tools is not None
            else {}
        )
        self._extra_headers = dict(headers or {})
        self._ids = itertools.count(1)  # never reused (BASE-05)
        # what the checks trust: the table given here (a ToolTable is read-only already)
        self.checks = ToolChecks(
            self.tools if isinstance(self.tools, ToolTable) else MappingProxyType(dict(self.tools))
        )
        self._progress: dict[str | int, ProgressCallback] = {}
        self._progress_prefix = secrets.token_hex(4) + "-"
        self._progress_ids = itertools.count(1)
        self.notify: OnNotification = self._dispatch  # one object: transports dedupe callbacks by identity
        # The era (protocol/legacy/detect.py): "modern" from the start when forced, else decided by the
        # first exchange: stdio probes with server/discover, HTTP reads the first reply (VER-07..10).
        self.era_choice = check_era(era)
        self.era: Era | None = MODERN if era == MODERN else LEGACY if era == LEGACY else None
        if legacy_version is not None and legacy_version not in LEGACY_PROTOCOL_VERSIONS:
            raise ValueError(
                f"legacy_version must be one of {', '.join(LEGACY_PROTOCOL_VERSIONS)}, not {legacy_version!r}"
            )
        self.legacy_version = legacy_version or LEGACY_PROTOCOL_VERSIONS[0]
        self.handshake: Handshake | None = None  # what `initialize` settled (legacy era)
        self._probed: dict[str, Any] | None = None  # a stdio probe's DiscoverResult, for discover()
        self.use_protocol_version(PROTOCOL_VERSION)
        self.legacy = LegacyFlows(self)  # the era decision and the legacy lifecycle
        self.tasks = TaskFlows(self)  # tasks/get, update, cancel and the wait on a task
        self.drift = DriftCheck(self, tools)  # pinned tools against the server's (drift.py)

    def use_protocol_version(self, version: str) -> None:
        """Speak `version` from now on: `_meta` and `MCP-Protocol-Version` always agree (HDR-02).
        A legacy revision has no protocol `_meta`, and the header only from 2025-06-18 on."""
        self.protocol_version = version
        self._header_cache: dict[tuple[str, str | None], dict[str, str]] = {}
        if version in LEGACY_PROTOCOL_VERSIONS:
            self._meta = self._task_meta = {}
            self._base_headers = dict(self._extra_headers)
            if version >= VERSION_HEADER_SINCE:
                self._base_headers[mcp_headers.PROTOCOL_VERSION] = version
            return
        self._meta = request_meta(
            capabilities=self.capabilities, client_info=self.client_info, protocol_version=version
        )
        # tools/call and tasks/* list the tasks extension: a server may answer those with a task
        self._task_meta = request_meta(
            capabilities=tasks.with_tasks_extension(self.capabilities),
            client_info=self.client_info,
            protocol_version=version,
        )
        self._base_headers = {**self._extra_headers, mcp_headers.PROTOCOL_VERSION: version}

    # -- building requests -------------------------------------------------------------

    def meta_for(self, method: str) -> Mapping[str, Any]:
        """The protocol `_meta` of a `method` request: with the tasks extension where a task may
        come back or is addressed (tools/call, tasks/*)."""
        return self._task_meta if method in _TASK_AWARE else self._meta

    def _headers(self, method: str, name: str | None) -> Mapping[str, str]:
        """Static + `Mcp-Method` + `Mcp-Name` headers, built once per (method, name) (HDR-01/07/08/09)."""
        if not self.send_headers:
            return _NO_HEADERS
        key = (method, name)
        headers = self._header_cache.get(key)
        if headers is None:
            headers = {**self._base_headers, mcp_headers.METHOD: method}
            if name is not None:
                headers[mcp_headers.NAME] = mcp_headers.encode_value(name)
            if len(self._header_cache) < _HEADER_CACHE_LIMIT:
                self._header_cache[key] = headers
        return headers

    # Repeated in legacy_flows.py `FlowOwner` on purpose: that Protocol is how LegacyFlows sees
    # this class without importing core.py (which imports it).
    def request_flow(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        name: str | None = None,
        param_headers: Mapping[str, str] | None = None,
        meta: Mapping[str, Any] | None = None,
        timeout: Timeout = None,
        repeatable: bool | None = None,
    ) -> Flow[dict[str, Any]]:
        """One request → its result. Retried with a new id once at another version on -32022
        (VER-02), once when a read's reply stream broke before its response (HTTP-26), and up to
        `retries` times after a retryable error as retry_policy.py says (a replica that died or is
        draining: behind a load balancer the new request reaches another one); `repeatable`: the
        request may run twice (None: as its method says).
        Until the era is known, and in the legacy era, `LegacyFlows.request_flow` sends it instead."""
        if self.era != MODERN:
            return (
                yield from self.legacy.request_flow(
                    method,
                    params,
                    name=name,
                    param_headers=param_headers,
                    meta=meta,
                    timeout=timeout,
                    repeatable=repeatable,
                )
            )
        wait = self.timeout if timeout is None else timeout
        safe = method in SAFE_TO_REPEAT if repeatable is None else repeatable
        renegotiated = reissued = False
        retried = 0
        while True:
            # Caller `_meta` entries (progressToken, …) never override the protocol keys (HDR-02).
            protocol_meta = self._task_meta if method in _TASK_AWARE else self._meta
            request_meta_ = protocol_meta if not meta else {**meta, **protocol_meta}
            headers = self._headers(method, name)
            if param_headers:
                headers = {**headers, **param_headers}
            request_id = next(self._ids)
            message = jsonrpc.request(request_id, method, {**params, "_meta": request_meta_})
            if isinstance(wait, Deadline):
                wait.extend()  # each request of a call starts its silence afresh (CANCEL-06)
            try:
                reply, status = yield Outgoing(message, headers, wait)
            except McpRuntimeError as exc:
                if isinstance(exc, ResponseLostError) and not reissued and method in REISSUED_METHODS:
                    reissued = True  # HTTP-26: a read is sent again once, retries or not
                    continue
                yield from self.retry_pause(exc, retried, safe, wait)
                retried += 1
                continue
            try:
                result = jsonrpc.unwrap(reply, expected_id=request_id, http_status=status)
            except UnsupportedProtocolVersionError as exc:
                if renegotiated or not self._renegotiate(exc):
                    raise
                renegotiated = True  # retried with a new id (next loop turn)
            except RemoteError as exc:  # a JSON-RPC error with 429/502/503/504 (a store that is down, say)
                yield from self.retry_pause(exc, retried, safe, wait)
                retried += 1
            else:
                if result.get("resultType") == tasks.CREATE_TASK_RESULT and method != "tools/call":
                    raise ProtocolError(
                        f"{method}: the server answered with a task, which only tools/call may"
                    )
                return result

    def retry_pause(
        self, exc: McpRuntimeError, retried: int, repeatable: bool, timeout: Timeout
    ) -> Flow[None]:
        """Wait before sending a failed request again (retry_policy.py), or raise `exc`: it is not
        to be retried, or `retries` are spent. Called in an `except` block: a bare raise is `exc`."""
        pause = (
            None
            if retried >= self.retries
            else retry_wait(exc, retried, repeatable=repeatable, timeout=timeout)
        )
        if pause is None:
            raise exc
        if pause > 0:
            yield InputNeeded([], pause)

    def _renegotiate(self, exc: UnsupportedProtocolVersionError) -> bool:
        supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
        if isinstance(supported, list):
            for version in SUPPORTED_PROTOCOL_VERSIONS:
                if version in supported:
                    self.use_protocol_version(version)
                    return True
        return False

    # -- cacheable reads ----------------------------------------------------------------

    def cached_flow(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        partition: str | None,
        refresh: bool = False,
        name: str | None = None,
        timeout: float | None = None,
    ) -> Flow[tuple[dict[str, Any], bool]]:
        """A cacheable request: a fresh cached result (CACHE-07), else fetched and stored; a
        failed refetch falls back to a stale entry with a `StaleCacheWarning`. Returns
        (result, served_from_cache); the result is the caller's own copy."""
        cache = self.cache
        if cache is None:
            return (yield from self.request_flow(method, params, name=name, timeout=timeout)), False
        entry = cache.lookup(method, params, self.protocol_version, partition)
        if entry is not None and not refresh and cache.is_fresh(entry):
            return _copy(entry.value), True
        try:
            result = yield from self.request_flow(method, params, name=name, timeout=timeout)
        except TransportError as exc:
            if entry is None:
                raise
            age = max(cache.clock() - entry.stored_at, 0.0)
            warnings.warn(
                f"{method}: refetch failed ({exc}); serving the cached result received {age:.0f}s ago",
                StaleCacheWarning,
                stacklevel=4,
            )
            return _copy(entry.value), True
        cache.save(method, params, self.protocol_version, partition, _copy(result))
        return result, False

    def discover_flow(self, *, partition: str | None = None, refresh: bool = False) -> Flow[dict[str, Any]]:
        """`server/discover`; in the legacy era, what `initialize` settled in the same shape."""
        if self.era != MODERN:
            yield from self.legacy.era_flow()
            if self.handshake is not None:
                return discover_view(self.handshake)
            probed, self._probed = self._probed, None
            if probed is not None and not refresh:
                return probed
        result, _ = yield from self.cached_flow(DISCOVER, {}, partition=partition, refresh=refresh)
        return result

    def list_page_flow(
        self, cursor: str | None = None, *, partition: str | None = None, refresh: bool = False
    ) -> Flow[tuple[ToolsPage, list[ToolSpec]]]:
        params = {} if cursor is None else {"cursor": cursor}
        result, cached = yield from self.cached_flow(
            "tools/list", params, partition=partition, refresh=refresh
        )
        tools = result.get("tools")
        if not isinstance(tools, list):
            raise ProtocolError("tools/list result has no `tools` array")
        next_cursor = result.get("nextCursor")
        if next_cursor is not None and not isinstance(next_cursor, str):
            raise ProtocolError(f"tools/list nextCursor is not a string: {next_cursor!r:.100}")
        ttl = result.get("ttlMs")
        scope = result.get("cacheScope")
        usable = usable_tools(tools)
        page = ToolsPage(
            tools=[definition for definition, _ in usable],
            next_cursor=next_cursor,
            ttl_ms=ttl if type(ttl) is int and ttl > 0 else 0,
            cache_scope=scope if isinstance(scope, str) else None,
            cached=cached,
            listed=tuple(tools),
        )
        return page, [spec for _, spec in usable]

    def list_all_flow(
        self, max_pages: int = 1000, *, partition: str | None = None, refresh: bool = False
    ) -> Flow[list[dict[str, Any]]]:
        """Every page (each from the cache while fresh: CACHE-15); replaces the tool table with
        what the server lists now. A cursor from a cached page that the server rejects drops
        every cached page and starts over from the first one, once (CACHE-17)."""
        restarted = False
        while True:
            definitions: list[dict[str, Any]] = []
            table: dict[str, ToolSpec] = {}
            seen: set[str] = set()
            cursor: str | None = None
            from_cache = False
            try:
                for _ in range(max_pages):
                    page, specs = yield from self.list_page_flow(cursor, partition=partition, refresh=refresh)
                    from_cache |= page.cached
                    for definition, spec in zip(page.tools, specs, strict=True):
                        if spec.name in table:
                            warnings.warn(
                                f"tools/list: dropping a second tool named {spec.name!r} (TOOLS-15)",
                                InvalidToolWarning,
                                stacklevel=2,
                            )
                            continue
                        table[spec.name] = spec
                        definitions.append(definition)
                    cursor = page.next_cursor
                    if cursor is None:  # only a missing cursor ends the listing, never "" (PAGE-04/07)
                        break
                    if cursor in seen:
                        raise PaginationError(f"tools/list returned cursor {cursor!r} twice")
                    seen.add(cursor)
                else:
                    raise PaginationError(f"tools/list did not end within {max_pages} pages")
            except RemoteError:
                if cursor is None or not from_cache or restarted or self.cache is None:
                    raise
                self.cache.invalidate("tools/list")
                restarted = refresh = True
                continue
            self.tools = table
            return definitions

    # -- calling tools -------------------------------------------------------------------

    # The driver's public `call_tool` repeats these keywords on purpose: it fills the client's
    # defaults in, and both stay typed keyword for keyword (no `**options` pass-through).
    def call_flow(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        input_responses: Mapping[str, InputResult | Mapping[str, Any]] | None = None,
        request_state: str | None = None,
        max_time: float | None = None,
        retry_unsafe: bool = False,
    ) -> Flow[ToolResult]:
        """`tools/call`, with its input rounds. With `max_time` (here or the client's), `timeout` is
        the silence allowed, restarted by each progress notification of the call, and `max_time`
        bounds the whole call (CANCEL-06); the call asks for progress then even without a callback.
        A call the server answers with a task waits on it to the end (task_flows.py)."""
        progress = self.on_progress if on_progress is None else on_progress
        wait = self._call_wait(timeout, max_time)
        outcome = yield from self.start_flow(
            name,
            arguments,
            meta=meta,
            timeout=wait,
            on_progress=progress,
            input_responses=input_responses,
            request_state=request_state,
            retry_unsafe=retry_unsafe,
        )
        if isinstance(outcome, TaskState):
            return (yield from self.tasks.call_flow(name, outcome, progress, timeout=wait))
        return outcome

    def _call_wait(self, timeout: float | None, max_time: float | None) -> Timeout:
        """A call's timeout: seconds per request, or with `max_time` (here or the client's) a
        `Deadline` that progress keeps alive (CANCEL-06)."""
        limit = self.max_time if max_time is None else check_max_time(max_time)
        if limit is None:
            return timeout
        return Deadline(self.timeout if timeout is None else timeout, limit)

    def start_flow(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: Timeout = None,
        on_progress: ProgressCallback | None = None,
        input_responses: Mapping[str, InputResult | Mapping[str, Any]] | None = None,
        request_state: str | None = None,
        start: bool = False,
        retry_unsafe: bool = False,
    ) -> Flow[ToolResult | TaskState]:
        """`tools/call` with its input rounds: the tool's result, or the task the server made of it.
        `start`: the caller wants a task where a legacy server's tool makes it optional.
        `retry_unsafe`: the call may be sent again after a failure that leaves open whether it ran,
        whatever the tool's annotations say (retry_policy.py)."""
        yield from self.drift.before_call_flow()
        args: dict[str, Any] = (
            {} if arguments is None else (arguments if type(arguments) is dict else dict(arguments))
        )
        base = {"name": name, "arguments": args}
        params = resume_params(base, input_responses, request_state)
        progress = on_progress
        wait = timeout
        if isinstance(wait, Deadline):
            progress = _keeping_alive(wait, progress)
        token = None
        if progress is not None:
            meta, token = self._track_progress(progress, meta)
        try:
            if start and self.era is None:  # whether a legacy tool takes the `task` parameter: ask first
                yield from self.discover_flow(partition=self.default_partition)
            legacy_task = (
                (yield from self.tasks.legacy_task_flow(name, start=start)) if self.era == LEGACY else None
            )
            era_before = self.era  # None: this call finds out (a legacy tool may then require a task)
            refreshed = False
            rounds = 0
            state_only_delay = STATE_ONLY_DELAY
            # One turn per request: a header refresh (XHDR-20) or a multi-round-trip retry (MRTR).
            while True:
                spec = self.tools.get(name)
                param_headers = None
                if self.send_headers and spec is not None and spec.header_params and self.era != LEGACY:
                    param_headers = {
                        header: mcp_headers.encode_value(text)  # XHDR-13..16
                        for header, text in xheader.request_headers(spec.header_params, args)
                    }
                try:
                    result = yield from self.request_flow(
                        "tools/call",
                        params if legacy_task is None else {**params, "task": legacy_task},
                        name=name,
                        param_headers=param_headers,
                        meta=meta,
                        timeout=wait,
                        repeatable=retry_unsafe or repeatable_tool(spec),
                    )
                except HeaderMismatchError:
                    if refreshed or not self.send_headers:
                        raise
                    # XHDR-20: the tool's inputSchema (its x-mcp-header set) may have changed.
                    refreshed = True
                    yield from self.list_all_flow(partition=self.default_partition, refresh=True)
                    continue
                except RemoteError as exc:
                    if (
                        exc.code != jsonrpc.METHOD_NOT_FOUND
                        or era_before is not None
                        or legacy_task is not None
                    ):
                        raise
                    era_before = self.era  # once
                    legacy_task = yield from self.tasks.legacy_task_flow(name, start=False)
                    if legacy_task is None:
                        raise
                    continue  # the first call found a legacy server whose tool requires a task: refused
                if era_before is None and self.era == LEGACY and legacy_task is None:
                    era_before = self.era  # once
                    legacy_task = yield from self.tasks.legacy_task_flow(name, start=False)
                    if legacy_task is not None:
                        continue  # as above; the SDK 1.x refuses with an isError result, not -32601
                if legacy_task is not None and isinstance(result.get("task"), Mapping):
                    return tasks.parse_task(result, legacy=True)
                result_type = result.get("resultType")
                if result_type == tasks.CREATE_TASK_RESULT:
                    return tasks.parse_task(result)
                if result_type != jsonrpc.RESULT_INPUT_REQUIRED:
                    return tool_result(name, result)
                rounds += 1
                params, state_only_delay = yield from input_round_flow(
                    self, result, base, method="tools/call", name=name, rounds=rounds, delay=state_only_delay
                )
        finally:
            if token is not None:
                self._progress.pop(token, None)

    def _track_progress(
        self, callback: ProgressCallback, meta: Mapping[str, Any] | None
    ) -> tuple[Mapping[str, Any], str | int]:
        """A progress token unique among this client's requests (PROG-01/02), or the caller's."""
        token = meta.get(PROGRESS_TOKEN_KEY) if meta else None
        if not isinstance(token, str | int) or isinstance(token, bool):
            token = f"{self._progress_prefix}{next(self._progress_ids)}"
            meta = {**(meta or {}), PROGRESS_TOKEN_KEY: token}
        assert meta is not None
        self._progress[token] = callback
        return meta, token

    def typed_call_flow(
        self,
        name: str,
        arguments: Mapping[str, Any] | BaseModel,
        input_model: type[BaseModel],
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        max_time: float | None = None,
        retry_unsafe: bool = False,
    ) -> Flow[ToolResult]:
        payload = self.checks.prepare_arguments(name, arguments, input_model)
        result = yield from self.call_flow(
            name,
            payload,
            timeout=timeout,
            on_progress=on_progress,
            max_time=max_time,
            retry_unsafe=retry_unsafe,
        )
        if result.is_error:
            raise ToolError(name, result)
        return result

    # -- notifications and subscriptions -------------------------------------------------

    def observe(self, message: Message) -> None:
        """What every notification does to the client itself: a list change makes the cached
        pages of that list stale at once, a resource update every cached `resources/read`
        (CACHE-14)."""
        method = message.get("method")
        if method == TOOLS_LIST_CHANGED:
            self.drift.list_changed()
        stale = _STALE_AFTER.get(str(method))
        if stale and self.cache is not None:
            for method in stale:
                self.cache.invalidate(method)

    def _dispatch(self, message: Message) -> None:
        """Notifications that arrive with a reply: progress to its call's callback, then the
        client's own bookkeeping, then the user's `on_notification`."""
        method = message.get("method")
        if method == "notifications/progress":
            params = message.get("params")
            if self._progress and isinstance(params, dict):
                token = params.get(PROGRESS_TOKEN_KEY)
                callback = self._progress.get(token) if isinstance(token, str | int) else None
                progress = params.get("progress")
                if callback is not None and isinstance(progress, int | float):
                    total = params.get("total")
                    text = params.get("message")
                    callback(
                        progress,
                        total if isinstance(total, int | float) else None,
                        text if isinstance(text, str) else None,
                    )
        elif method in _STALE_AFTER:
            self.observe(message)
        if self.on_notification is not None:
            self.on_notification(message)

    def listen_request(self, requested: SubscriptionFilter) -> Outgoing:
        request_id = next(self._ids)
        meta = self._task_meta if requested.task_ids else self._meta  # task ids need the extension declared
        message = jsonrpc.request(
            request_id, "subscriptions/listen", {"notifications": requested.wire(), "_meta": meta}
        )
        return Outgoing(message, self._headers("subscriptions/listen", None), None)


def _keeping_alive(deadline: Deadline, callback: ProgressCallback | None) -> ProgressCallback:
    """The call's progress callback, which first pushes the call's deadline back."""

    def progressed(progress: float, total: float | None, message: str | None) -> None:
        deadline.extend()
        if callback is not None:
            callback(progress, total, message)

    return progressed


def _copy(value: dict[str, Any]) -> dict[str, Any]:
    """A private deep copy of a JSON object (cache entries never alias what callers hold)."""
    copied: dict[str, Any] = _json.loads(_json.dumps(value))
    return copied
