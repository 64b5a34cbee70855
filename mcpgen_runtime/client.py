"""Tool clients: `ClientCore` (no I/O) and the `Client` / `AsyncClient` drivers generated clients inherit.

Every operation is a *flow*: a generator in `ClientCore` that yields an `Outgoing` request,
is sent back the transport's reply `(message, http_status)`, and returns the operation's
value. `Client` pumps flows with blocking transport calls, `AsyncClient` with awaited ones,
so ids, `_meta`, headers, retries (VER-02, XHDR-20), pagination and result parsing exist
once and the twins differ only in I/O.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from types import MappingProxyType, TracebackType
from typing import Any, ClassVar, Final, Self, TypeVar, cast

from pydantic import BaseModel, ValidationError

from ._version import PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, __version__
from .content import ToolResult
from .errors import (
    HeaderMismatchError,
    InputRequiredError,
    PaginationError,
    ProtocolError,
    ToolArgumentsError,
    ToolError,
    ToolOutputError,
    UnsupportedProtocolVersionError,
)
from .protocol import headers as mcp_headers
from .protocol import jsonrpc, xheader
from .protocol.meta import request_meta
from .tools import ToolSpec, tool_table
from .transport.base import AsyncTransport, OnNotification, Reply, SyncTransport, sends_headers
from .transport.http import AsyncHttpTransport, HttpTransport
from .transport.stdio import AsyncStdioTransport, StdioTransport

__all__ = ["AsyncClient", "Client", "ClientCore", "InvalidToolWarning", "Outgoing", "ToolsPage"]

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
_NO_HEADERS: Final[Mapping[str, str]] = MappingProxyType({})
_HEADER_CACHE_LIMIT = 1024  # (method, name) pairs; tool names come from the caller


class InvalidToolWarning(UserWarning):
    """A listed tool was dropped because its definition breaks a rule (e.g. XHDR-02..08)."""


@dataclass(frozen=True, slots=True)
class ToolsPage:
    """One `tools/list` page. `next_cursor` is opaque; `""` is a valid cursor (PAGE-06/07)."""

    tools: list[dict[str, Any]]
    next_cursor: str | None
    ttl_ms: int  # missing or negative -> 0 (CACHE-08/09)
    cache_scope: str | None


@dataclass(slots=True)
class Outgoing:
    """A request a flow wants sent."""

    message: dict[str, Any]
    headers: Mapping[str, str]
    timeout: float | None


Flow = Generator[Outgoing, Reply, T]


class ClientCore:
    """Everything a client does except moving bytes."""

    def __init__(
        self,
        *,
        client_info: Mapping[str, str] | None = None,
        tools: Iterable[Mapping[str, Any]] | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        send_headers: bool = True,
        capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        self.timeout = timeout
        self.send_headers = send_headers
        self.client_info: dict[str, str] = (
            dict(client_info) if client_info is not None else {"name": "mcpgen", "version": __version__}
        )
        self.capabilities: dict[str, Any] = dict(capabilities or {})
        self.tools: dict[str, ToolSpec] = tool_table(tools) if tools is not None else {}
        self._extra_headers = dict(headers or {})
        self._ids = itertools.count(1)  # never reused (BASE-05)
        self._required: dict[type[BaseModel], frozenset[str]] = {}
        self.use_protocol_version(PROTOCOL_VERSION)

    def use_protocol_version(self, version: str) -> None:
        """Speak `version` from now on: `_meta` and `MCP-Protocol-Version` always agree (HDR-02)."""
        self.protocol_version = version
        self._meta = request_meta(capabilities=self.capabilities, client_info=self.client_info,
                                  protocol_version=version)
        self._base_headers = {**self._extra_headers, mcp_headers.PROTOCOL_VERSION: version}
        self._header_cache: dict[tuple[str, str | None], dict[str, str]] = {}

    # -- building requests -------------------------------------------------------------

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

    def request_flow(
        self,
        method: str,
        params: Mapping[str, Any],
        *,
        name: str | None = None,
        param_headers: Mapping[str, str] | None = None,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Flow[dict[str, Any]]:
        """One request → its result, retried once at another version on -32022 (VER-02)."""
        wait = self.timeout if timeout is None else timeout
        renegotiated = False
        while True:
            # Caller `_meta` entries (progressToken, …) never override the protocol keys (HDR-02).
            request_meta_ = self._meta if not meta else {**meta, **self._meta}
            headers = self._headers(method, name)
            if param_headers:
                headers = {**headers, **param_headers}
            request_id = next(self._ids)
            message = jsonrpc.request(request_id, method, {**params, "_meta": request_meta_})
            reply, status = yield Outgoing(message, headers, wait)
            try:
                return jsonrpc.unwrap(reply, expected_id=request_id, http_status=status)
            except UnsupportedProtocolVersionError as exc:
                if renegotiated or not self._renegotiate(exc):
                    raise
                renegotiated = True  # retried with a new id (next loop turn)

    def _renegotiate(self, exc: UnsupportedProtocolVersionError) -> bool:
        supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
        if isinstance(supported, list):
            for version in SUPPORTED_PROTOCOL_VERSIONS:
                if version in supported:
                    self.use_protocol_version(version)
                    return True
        return False

    # -- discovery and listing -----------------------------------------------------------

    def discover_flow(self) -> Flow[dict[str, Any]]:
        return (yield from self.request_flow("server/discover", {}))

    def list_page_flow(self, cursor: str | None = None) -> Flow[tuple[ToolsPage, list[ToolSpec]]]:
        result = yield from self.request_flow("tools/list", {} if cursor is None else {"cursor": cursor})
        tools = result.get("tools")
        if not isinstance(tools, list):
            raise ProtocolError("tools/list result has no `tools` array")
        next_cursor = result.get("nextCursor")
        if next_cursor is not None and not isinstance(next_cursor, str):
            raise ProtocolError(f"tools/list nextCursor is not a string: {next_cursor!r:.100}")
        ttl = result.get("ttlMs")
        scope = result.get("cacheScope")
        usable = _usable_tools(tools)
        page = ToolsPage(
            tools=[definition for definition, _ in usable],
            next_cursor=next_cursor,
            ttl_ms=ttl if type(ttl) is int and ttl > 0 else 0,
            cache_scope=scope if isinstance(scope, str) else None,
        )
        return page, [spec for _, spec in usable]

    def list_all_flow(self, max_pages: int = 1000) -> Flow[list[dict[str, Any]]]:
        """Every page; replaces the tool table with what the server lists now."""
        definitions: list[dict[str, Any]] = []
        table: dict[str, ToolSpec] = {}
        seen: set[str] = set()
        cursor: str | None = None
        for _ in range(max_pages):
            page, specs = yield from self.list_page_flow(cursor)
            for definition, spec in zip(page.tools, specs, strict=True):
                if spec.name in table:
                    warnings.warn(f"tools/list: dropping a second tool named {spec.name!r} (TOOLS-15)",
                                  InvalidToolWarning, stacklevel=2)
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
        self.tools = table
        return definitions

    # -- calling tools -------------------------------------------------------------------

    def call_flow(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        meta: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Flow[ToolResult]:
        args: dict[str, Any] = {} if arguments is None else (
            arguments if type(arguments) is dict else dict(arguments)
        )
        params = {"name": name, "arguments": args}
        refreshed = False
        # One turn per attempt: header refresh now, multi-round-trip input later.
        while True:
            spec = self.tools.get(name)
            param_headers = None
            if self.send_headers and spec is not None and spec.header_params:
                param_headers = {
                    header: mcp_headers.encode_value(text)  # XHDR-13..16
                    for header, text in xheader.request_headers(spec.header_params, args)
                }
            try:
                result = yield from self.request_flow("tools/call", params, name=name, param_headers=param_headers,
                                                      meta=meta, timeout=timeout)
            except HeaderMismatchError:
                if refreshed or not self.send_headers:
                    raise
                # XHDR-20: the tool's inputSchema (its x-mcp-header set) may have changed.
                refreshed = True
                yield from self.list_all_flow()
                continue
            if result.get("resultType") == jsonrpc.RESULT_INPUT_REQUIRED:
                raise _input_required(name, result)
            return _tool_result(name, result)

    def prepare_arguments(self, name: str, arguments: Mapping[str, Any], input_model: type[BaseModel]) -> dict[str, Any]:
        """Generated-method arguments → the wire `arguments` object, validated locally."""
        required = self._required.get(input_model)
        if required is None:
            required = self._required[input_model] = frozenset(
                key
                for field_name, field in input_model.model_fields.items()
                if field.is_required()
                for key in (field_name, field.alias or field_name)
            )
        # An omitted optional parameter arrives as None; it must not be sent as null.
        present = {key: value for key, value in arguments.items() if value is not None or key in required}
        try:
            model = input_model.model_validate(present)
        except ValidationError as exc:
            pointer, message = _first_error(exc)
            raise ToolArgumentsError(name, message, pointer=pointer) from exc
        return model.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def typed_call_flow(self, name: str, arguments: Mapping[str, Any],
                        input_model: type[BaseModel]) -> Flow[ToolResult]:
        payload = self.prepare_arguments(name, arguments, input_model)
        result = yield from self.call_flow(name, payload)
        if result.is_error:
            raise ToolError(name, result)
        return result

    @staticmethod
    def structured(name: str, result: ToolResult, output_model: type[M]) -> M:
        """Parse `structuredContent` with the generated output model (a RootModel stays wrapped)."""
        if "structured_content" not in result.model_fields_set:
            raise ToolOutputError(name, "the result has no structuredContent")
        try:
            return output_model.model_validate(result.structured_content)
        except ValidationError as exc:
            pointer, message = _first_error(exc)
            raise ToolOutputError(name, message, pointer=pointer) from exc


def _usable_tools(tools: list[Any]) -> list[tuple[dict[str, Any], ToolSpec]]:
    """Listed tools the client can use; the rest are dropped with a warning (XHDR-10/11)."""
    usable: list[tuple[dict[str, Any], ToolSpec]] = []
    for definition in tools:
        name = definition.get("name") if isinstance(definition, dict) else None
        schema = definition.get("inputSchema") if isinstance(definition, dict) else None
        if not isinstance(definition, dict) or not isinstance(name, str) or not isinstance(schema, dict):
            warnings.warn(f"tools/list: dropping malformed tool definition {definition!r:.120} "
                          "(needs a string `name` and an object `inputSchema`)", InvalidToolWarning, stacklevel=3)
            continue
        _, violations = xheader.analyze(schema)
        if violations:
            reasons = "; ".join(f"{v.rule} at {v.pointer}: {v.message}" for v in violations)
            warnings.warn(f"tools/list: dropping tool {name!r}: {reasons}", InvalidToolWarning, stacklevel=3)
            continue
        usable.append((definition, ToolSpec.from_definition(definition)))
    return usable


def _tool_result(name: str, result: dict[str, Any]) -> ToolResult:
    try:
        return ToolResult.model_validate(result)
    except ValidationError as exc:
        raise ProtocolError(f"tools/call {name!r}: malformed result: {exc.errors()[0]['msg']}") from exc


def _input_required(name: str, result: dict[str, Any]) -> InputRequiredError:
    requests = result.get("inputRequests")
    state = result.get("requestState")
    requests = requests if isinstance(requests, dict) else {}
    return InputRequiredError(
        f"tool {name!r} asks for client input ({', '.join(requests) or 'no input requests'}); "
        "answering input requests is not supported yet",
        input_requests=requests,
        request_state=state if isinstance(state, str) else None,
    )


def _first_error(exc: ValidationError) -> tuple[str, str]:
    errors = exc.errors()
    first = errors[0]
    pointer = "/" + "/".join(str(part) for part in first["loc"])
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return pointer, first["msg"] + more


class Client:
    """Blocking MCP tool client over Streamable HTTP (`url`) or stdio (`Client.stdio`)."""

    # Tool definitions used when `tools` is not passed; generated subclasses set their tools.json here.
    _tool_definitions_: ClassVar[Sequence[Mapping[str, Any]] | None] = None

    def __init__(
        self,
        url: str | None = None,
        *,
        transport: SyncTransport | None = None,
        headers: Mapping[str, str] | None = None,
        client_info: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        tools: Iterable[Mapping[str, Any]] | None = None,
        on_notification: OnNotification | None = None,
    ) -> None:
        if (url is None) == (transport is None):
            raise ValueError("pass exactly one of `url` or `transport`")
        if tools is None:
            tools = self._tool_definitions_  # generated clients embed the definitions they were built from
        core = ClientCore(client_info=client_info, tools=tools, headers=headers, timeout=timeout,
                          send_headers=True if transport is None else sends_headers(transport))
        self._core = core
        self._transport: SyncTransport = transport if transport is not None else HttpTransport(
            cast(str, url), timeout=timeout)
        self.on_notification = on_notification  # notifications that precede a response (progress, log)

    @classmethod
    def stdio(cls, command: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | PathLike[str] | None = None, **kwargs: Any) -> Self:
        """Start `command` as a stdio server; `env` adds to the current environment."""
        transport = StdioTransport(command, env=env, cwd=cwd)
        try:
            return cls(transport=transport, **kwargs)
        except BaseException:
            transport.close()
            raise

    def _run(self, flow: Flow[T]) -> T:
        transport = self._transport
        on_notification = self.on_notification
        try:
            outgoing = next(flow)
            while True:
                reply = transport.request(outgoing.message, outgoing.headers, timeout=outgoing.timeout,
                                          on_notification=on_notification)
                outgoing = flow.send(reply)
        except StopIteration as done:
            return cast(T, done.value)

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return self._core.tools

    @property
    def protocol_version(self) -> str:
        return self._core.protocol_version

    @property
    def transport(self) -> SyncTransport:
        return self._transport

    def discover(self) -> dict[str, Any]:
        return self._run(self._core.discover_flow())

    def list_tools(self, cursor: str | None = None) -> ToolsPage:
        """One page (invalid tools already dropped); the tool table is left as is."""
        return self._run(self._core.list_page_flow(cursor))[0]

    def list_all_tools(self, *, max_pages: int = 1000) -> list[dict[str, Any]]:
        return self._run(self._core.list_all_flow(max_pages))

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                  meta: Mapping[str, Any] | None = None, timeout: float | None = None) -> ToolResult:
        """Raw call: returns the result even when `isError` is true."""
        return self._run(self._core.call_flow(name, arguments, meta=meta, timeout=timeout))

    def _call(self, name: str, arguments: dict[str, Any], input_model: type[BaseModel]) -> ToolResult:
        return self._run(self._core.typed_call_flow(name, arguments, input_model))

    def _call_structured(self, name: str, arguments: dict[str, Any], input_model: type[BaseModel],
                         output_model: type[M]) -> M:
        result = self._run(self._core.typed_call_flow(name, arguments, input_model))
        return self._core.structured(name, result, output_model)

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class AsyncClient:
    """asyncio MCP tool client over Streamable HTTP (`url`) or stdio (`AsyncClient.stdio`)."""

    _tool_definitions_: ClassVar[Sequence[Mapping[str, Any]] | None] = None

    def __init__(
        self,
        url: str | None = None,
        *,
        transport: AsyncTransport | None = None,
        headers: Mapping[str, str] | None = None,
        client_info: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        tools: Iterable[Mapping[str, Any]] | None = None,
        on_notification: OnNotification | None = None,
    ) -> None:
        if (url is None) == (transport is None):
            raise ValueError("pass exactly one of `url` or `transport`")
        if tools is None:
            tools = self._tool_definitions_  # generated clients embed the definitions they were built from
        core = ClientCore(client_info=client_info, tools=tools, headers=headers, timeout=timeout,
                          send_headers=True if transport is None else sends_headers(transport))
        self._core = core
        self._transport: AsyncTransport = transport if transport is not None else AsyncHttpTransport(
            cast(str, url), timeout=timeout)
        self.on_notification = on_notification

    @classmethod
    def stdio(cls, command: Sequence[str], *, env: Mapping[str, str] | None = None,
              cwd: str | PathLike[str] | None = None, **kwargs: Any) -> Self:
        """Prepare `command` as a stdio server; it starts on `async with` or the first request."""
        return cls(transport=AsyncStdioTransport(command, env=env, cwd=cwd), **kwargs)

    async def _run(self, flow: Flow[T]) -> T:
        transport = self._transport
        on_notification = self.on_notification
        try:
            outgoing = next(flow)
            while True:
                reply = await transport.request(outgoing.message, outgoing.headers, timeout=outgoing.timeout,
                                                on_notification=on_notification)
                outgoing = flow.send(reply)
        except StopIteration as done:
            return cast(T, done.value)

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        return self._core.tools

    @property
    def protocol_version(self) -> str:
        return self._core.protocol_version

    @property
    def transport(self) -> AsyncTransport:
        return self._transport

    async def discover(self) -> dict[str, Any]:
        return await self._run(self._core.discover_flow())

    async def list_tools(self, cursor: str | None = None) -> ToolsPage:
        """One page (invalid tools already dropped); the tool table is left as is."""
        return (await self._run(self._core.list_page_flow(cursor)))[0]

    async def list_all_tools(self, *, max_pages: int = 1000) -> list[dict[str, Any]]:
        return await self._run(self._core.list_all_flow(max_pages))

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *,
                        meta: Mapping[str, Any] | None = None, timeout: float | None = None) -> ToolResult:
        """Raw call: returns the result even when `isError` is true."""
        return await self._run(self._core.call_flow(name, arguments, meta=meta, timeout=timeout))

    async def _call(self, name: str, arguments: dict[str, Any], input_model: type[BaseModel]) -> ToolResult:
        return await self._run(self._core.typed_call_flow(name, arguments, input_model))

    async def _call_structured(self, name: str, arguments: dict[str, Any], input_model: type[BaseModel],
                               output_model: type[M]) -> M:
        result = await self._run(self._core.typed_call_flow(name, arguments, input_model))
        return self._core.structured(name, result, output_model)

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def __aenter__(self) -> Self:
        if isinstance(self._transport, AsyncStdioTransport):
            await self._transport.start()  # surface a bad command here, not at the first call
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()
