"""Sans-I/O server core: one JSON-RPC message in, one `Outcome` (HTTP status + response) out.

Everything per tool (validators, header tables, list pages, the discover result) is built
once in `ToolServer.__init__`; the per-message path is dict lookups, the precompiled
validators, the handler and orjson.

Check order (docs/RULES.md conformance §4, steps 3-14). Header checks run only when the transport
hands over headers (HTTP); stdio has no header layer.

     envelope (-32600) -> notification (202) -> MCP-Protocol-Version present (-32020)
  -> _meta protocolVersion/clientCapabilities (-32602, BASE-31) -> header == _meta version (-32020)
  -> version supported (-32022, VER-01) -> Mcp-Method (-32020) -> Mcp-Name (-32020)
  -> method known (-32601, 404) -> tools/call: tool known (-32602, TOOLS-22)
  -> rate limit (isError, SEC-03) -> Mcp-Param-* (-32020, XHDR-22..25) -> arguments (isError, SEC-01)
  -> inputResponses / requestState (-32602, MRTR-07..10, MRTR-21; only when present) -> handler

Beyond tools: `subscriptions/listen` streams list-changed notifications (SUB-*), and
`add_method` serves further methods (prompts, resources, ...) with caching hints stamped on
their complete results (CACHE-01) and multi round-trip input on prompts/get and
resources/read (MRTR-02).
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import logging
import math
import re
from collections.abc import Awaitable, Callable, Hashable, Mapping, MutableMapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar, Literal, NamedTuple

from pydantic import BaseModel, ValidationError

from .. import _json
from .._version import SUPPORTED_PROTOCOL_VERSIONS
from ..content import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolResult,
    UnknownContent,
)
from ..protocol import jsonrpc
from ..protocol.headers import (
    FIELD_VALUE,
    METHOD_LC,
    NAME_FIELD_BY_METHOD,
    NAME_LC,
    PROTOCOL_VERSION_LC,
    HeaderValueError,
    decode_value,
    param_value_text,
)
from ..protocol.meta import (
    CLIENT_CAPABILITIES_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    SUBSCRIPTION_ID_KEY,
)
from ..protocol.xheader import MAX_SAFE_INTEGER, HeaderParam, extract
from ..schema import SchemaCompileError, Validate, compile_schema
from ..tools import ToolSpec, tool_table
from .auth import BearerAuth
from .context import (
    Notify,
    OpenStream,
    RequestContext,
    RpcError,
    ToolContext,
    ToolExecutionError,
    status_for_code,
)
from .mrtr import MRTR_METHODS, InputRequired, check_input_responses
from .ratelimit import RateLimit, RateLimiter
from .state import StateCodec, StateError, principal_digest, request_digest
from .subscriptions import LIST_CHANGED, SubscriptionHub, honoured_filter

__all__ = [
    "CACHEABLE_METHODS",
    "LOCAL_HOSTS",
    "LOCAL_ORIGINS",
    "REMOVED_METHODS",
    "ASGIApp",
    "IncomingRequest",
    "MethodHandler",
    "Outcome",
    "ServerConfig",
    "ToolBinding",
    "ToolHandler",
    "ToolServer",
]

_LOG = logging.getLogger("mcpgen.server")

# Methods of earlier revisions that this one removed: answered like unknown methods (RULES.md conformance §4.11).
REMOVED_METHODS = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
# Served by ToolServer itself; `add_method` cannot take them over.
BUILTIN_METHODS = frozenset({"tools/call", "tools/list", "server/discover", "subscriptions/listen"})
# Complete results of these carry ttlMs and cacheScope (CACHE-01).
CACHEABLE_METHODS = frozenset({"prompts/list", "resources/list", "resources/templates/list", "resources/read"})

LOCAL_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")
LOCAL_ORIGINS: tuple[str, ...] = tuple(f"{scheme}://{host}" for scheme in ("http", "https") for host in LOCAL_HOSTS)

CacheScope = Literal["public", "private"]
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
# A tool implementation: (validated arguments — the input model, or the dict for tools added
# without one — and the context) -> the handler's return value.
ToolHandler = Callable[[Any, ToolContext], Awaitable[Any]]
# An extra method: (params as sent, context) -> the result object (resultType/_meta are added).
MethodHandler = Callable[[dict[str, Any], RequestContext], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ToolBinding:
    """Connects a listed tool to the Python method that implements it."""

    name: str  # wire name
    method: str  # Python method on the server object
    input_model: type[BaseModel]
    output_model: type[BaseModel] | None  # None: the tool has no outputSchema
    output_is_root: bool = False  # output_model is a RootModel; handlers return the root value


@dataclass(frozen=True)
class ServerConfig:
    """Server identity and policy. Defaults suit a server on localhost.

    Caching hints (CACHE-01, CACHE-05): `tools/list` and `server/discover` default to
    60 s and `"public"` because both come from the definitions compiled into the package
    and are the same for every caller. A server that filters tools per principal must
    use `"private"` (CACHE-13, CACHE-19). Methods added with `add_method` that are
    cacheable (prompts/list, resources/*) default to `list_ttl_ms` and `list_cache_scope`,
    and to `"private"` when the request was authenticated.

    Security (see auth.py, ratelimit.py, state.py): `auth` verifies bearer tokens on HTTP
    (HTTP-05); `rate_limit` bounds tool calls per caller (SEC-03); `state_secrets` (else the
    environment variable `MCPGEN_STATE_SECRET`) sign `requestState`, the first one signing
    and any of them verifying (rotation), valid for `state_ttl_s` (MRTR-05..10).
    """

    name: str = "mcpgen-server"
    version: str = "0.0.0"
    title: str | None = None
    instructions: str | None = None
    page_size: int | None = 100  # tools per tools/list page; None: everything on one page
    list_ttl_ms: int = 60_000
    list_cache_scope: CacheScope = "public"
    discover_ttl_ms: int = 60_000
    discover_cache_scope: CacheScope = "public"
    # subscriptions/listen announces tool-set changes made with add_tool/remove_tool (TOOLS-05).
    list_changed: bool = True
    include_server_info: bool = True  # BASE-37
    # DNS-rebinding guard (HTTP-02/03): exact origins, port-agnostic unless the entry has a port;
    # None accepts any Origin.
    allowed_origins: tuple[str, ...] | None = LOCAL_ORIGINS
    # Host header names (port-agnostic unless given); None accepts any Host. `run_http` on a
    # non-loopback address turns the default off, since remote clients use other names.
    allowed_hosts: tuple[str, ...] | None = LOCAL_HOSTS
    max_body_bytes: int = 4 * 1024 * 1024
    auth: BearerAuth | None = None
    rate_limit: RateLimit | None = None
    state_secrets: tuple[str | bytes, ...] | None = None
    state_ttl_s: float = 600.0
    max_state_bytes: int = 64 * 1024
    # PROG-07: progress updates closer together than this are dropped (never the final one).
    progress_interval_ms: int = 10
    # HTTP-19: comment lines on idle subscriptions/listen streams, so intermediaries keep them open.
    keepalive_s: float = 15.0

    def __post_init__(self) -> None:
        if self.page_size is not None and self.page_size < 1:
            raise ValueError("page_size must be >= 1 or None")
        for ttl in (self.list_ttl_ms, self.discover_ttl_ms):
            if not isinstance(ttl, int) or ttl < 0:
                raise ValueError("ttl values must be integers >= 0 (CACHE-05)")
        for scope in (self.list_cache_scope, self.discover_cache_scope):
            if scope not in ("public", "private"):
                raise ValueError(f"cache scope must be 'public' or 'private', not {scope!r}")
        if self.max_body_bytes < 1:
            raise ValueError("max_body_bytes must be positive")
        if self.state_ttl_s <= 0 or self.max_state_bytes < 256:
            raise ValueError("state_ttl_s must be positive and max_state_bytes at least 256")
        if self.progress_interval_ms < 0 or self.keepalive_s <= 0:
            raise ValueError("progress_interval_ms must be >= 0 and keepalive_s positive")
        if self.state_secrets is not None:
            StateCodec(self.state_secrets)  # fails early on short secrets


@dataclass(slots=True)
class IncomingRequest:
    """How a message arrived. `headers` (lower-case names) switch on the HTTP header checks."""

    transport: str = "direct"  # "http" | "stdio" | "direct"
    headers: Mapping[str, str] | None = None
    notify: Notify | None = None  # delivers notifications on this request's stream
    principal: Any = None  # whatever an authentication layer established
    open_stream: OpenStream | None = None  # HTTP: commit to an SSE reply now
    keepalive: Callable[[], Awaitable[None]] | None = None  # long-lived streams: a transport-level no-op
    peer: str | None = None  # remote address: the rate-limit key of anonymous callers


class Outcome(NamedTuple):
    """The answer to one message: HTTP status (also meaningful off HTTP as a hint) and the
    JSON-RPC response, or None for notifications (BASE-16). Treat `response` as read-only:
    it may share precomputed parts."""

    status: int
    response: dict[str, Any] | None


# Where a rate-limited result says how long to wait, in milliseconds.
RETRY_AFTER_KEY = "dev.mcpgen/retryAfterMs"

_DIRECT = IncomingRequest()
_NO_ARGS: dict[str, Any] = {}
_CONTENT_TYPES = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource, UnknownContent)
_CONTENT_KINDS = frozenset({"text", "image", "audio", "resource_link", "resource"})
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")


@dataclass(slots=True)
class _Tool:
    spec: ToolSpec
    handler: ToolHandler
    input_model: type[BaseModel] | None  # None: the handler gets the arguments dict
    output_model: type[BaseModel] | None
    output_is_root: bool
    validate_input: Validate
    validate_output: Validate | None
    header_params: tuple[tuple[HeaderParam, str], ...]  # (param, lower-case header name)
    integer_paths: tuple[tuple[str, ...], ...] = field(default=())  # header params of type integer
    parse_input: Callable[[Any], Any] | None = None  # input_model's validator, once pydantic has built it


@dataclass(frozen=True, slots=True)
class _Method:
    handler: MethodHandler
    cacheable: bool
    ttl_ms: int
    cache_scope: CacheScope | None  # None: the config's list scope, "private" for authenticated callers


def _err(id_: Any, code: int, message: str, data: Any = None, status: int | None = None) -> Outcome:
    return Outcome(status if status is not None else status_for_code(code), jsonrpc.error(id_, code, message, data))


def _valid_id(value: Any) -> bool:
    cls = type(value)  # exact JSON types first (the common case), subclasses the long way
    return cls is int or cls is str or (isinstance(value, (str, int)) and not isinstance(value, bool))


def _cursor(offset: int, digest: str) -> str:
    return base64.urlsafe_b64encode(f"{offset}.{digest}".encode()).decode().rstrip("=")


def _make_tool(spec: ToolSpec, handler: ToolHandler, input_model: type[BaseModel] | None,
               output_model: type[BaseModel] | None, output_is_root: bool) -> _Tool:
    name = spec.name
    if output_model is not None and spec.output_schema is None:
        raise ValueError(f"tool {name!r}: binding has an output_model but the tool has no outputSchema")
    try:
        validate_input = compile_schema(spec.input_schema)
        validate_output = compile_schema(spec.output_schema) if spec.output_schema is not None else None
    except SchemaCompileError as exc:
        raise ValueError(f"tool {name!r}: {exc}") from exc
    return _Tool(
        spec=spec,
        handler=handler,
        input_model=input_model,
        output_model=output_model,
        output_is_root=output_is_root,
        validate_input=validate_input,
        validate_output=validate_output,
        header_params=tuple((p, p.header.lower()) for p in spec.header_params),
        integer_paths=tuple(p.path for p in spec.header_params if p.type == "integer"),
    )


class ToolServer:
    """Base of generated servers: subclasses set the two class attributes and implement the
    handlers as `async def method(self, args, ctx)`.

    At run time a server can also change its tool set (`add_tool`, `remove_tool`: listeners
    get `notifications/tools/list_changed`), serve further methods (`add_method`) and
    capabilities (`declare_capability`), and announce changes (`notify_list_changed`,
    `notify_resource_updated`). Call these from the event loop thread.
    """

    # Slots make every instance attribute visible to dir(ToolServer), which the generator
    # reserves so a tool method can never shadow one (a tool named "config", say).
    __slots__ = (
        "_capabilities",
        "_definitions",
        "_discover",
        "_first_page",
        "_hub",
        "_limiter",
        "_methods",
        "_pages",
        "_progress_interval",
        "_result_meta",
        "_state_codec",
        "_subscription_kinds",
        "_supported",
        "_supported_list",
        "_tools",
        "config",
    )

    _tool_definitions_: ClassVar[list[dict[str, Any]]] = []
    _tool_bindings_: ClassVar[tuple[ToolBinding, ...]] = ()
    # Identity and policy a generated base (or handlers.py) may preset; see `default_config`.
    _server_config_: ClassVar[ServerConfig | None] = None

    @classmethod
    def default_config(cls) -> ServerConfig:
        """`_server_config_`, else a ServerConfig named after the package that defines the class."""
        if cls._server_config_ is not None:
            return cls._server_config_
        package = cls.__module__.partition(".")[0]
        return ServerConfig(name=cls.__name__ if package == "__main__" else package)

    def __init__(self, config: ServerConfig | None = None) -> None:
        self.config = config if config is not None else self.default_config()
        cfg = self.config
        info: dict[str, Any] = {"name": cfg.name, "version": cfg.version}
        if cfg.title is not None:
            info["title"] = cfg.title
        self._result_meta: dict[str, Any] | None = {SERVER_INFO_KEY: info} if cfg.include_server_info else None
        self._definitions = list(type(self)._tool_definitions_)
        self._tools = self._build_tools(self._definitions)
        self._pages, self._first_page = self._build_pages(self._definitions)
        self._supported = frozenset(SUPPORTED_PROTOCOL_VERSIONS)
        self._supported_list = list(SUPPORTED_PROTOCOL_VERSIONS)
        self._methods: dict[str, _Method] = {}
        self._capabilities: dict[str, dict[str, Any]] = {"tools": {"listChanged": cfg.list_changed}}
        self._hub = SubscriptionHub()
        self._limiter = RateLimiter(cfg.rate_limit) if cfg.rate_limit is not None else None
        self._state_codec: StateCodec | None = None  # made on first use (it may warn about its key)
        self._progress_interval = cfg.progress_interval_ms / 1000
        self._rebuild_discover()

    # ---- construction -------------------------------------------------------------------

    def _build_tools(self, definitions: list[dict[str, Any]]) -> dict[str, _Tool]:
        specs = tool_table(definitions)
        bindings: dict[str, ToolBinding] = {}
        for binding in type(self)._tool_bindings_:
            if binding.name in bindings:
                raise ValueError(f"two bindings for tool {binding.name!r}")
            bindings[binding.name] = binding
        if unbound := [name for name in specs if name not in bindings]:
            raise ValueError(f"no ToolBinding for listed tools: {', '.join(unbound)}")
        if unlisted := [name for name in bindings if name not in specs]:
            raise ValueError(f"ToolBindings for tools that are not listed: {', '.join(unlisted)}")
        tools: dict[str, _Tool] = {}
        for name, spec in specs.items():
            binding = bindings[name]
            handler = getattr(self, binding.method, None)
            if handler is None or not inspect.iscoroutinefunction(handler):
                raise TypeError(f"tool {name!r}: {type(self).__name__}.{binding.method} must be an async method")
            tools[name] = _make_tool(spec, handler, binding.input_model, binding.output_model, binding.output_is_root)
        return tools

    def _build_pages(self, definitions: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
        """Every tools/list page, prebuilt; cursors are opaque and stable for one tool set (PAGE-02).

        A cursor is urlsafe Base64 of `<offset>.<digest>`; the digest of the definitions makes
        cursors from another tool set invalid rather than silently misaligned (CACHE-17).
        """
        cfg = self.config
        digest = hashlib.sha256(_json.dumps(definitions)).hexdigest()[:12]
        size = cfg.page_size or max(len(definitions), 1)
        pages: dict[str, dict[str, Any]] = {}
        first: dict[str, Any] | None = None
        for offset in range(0, max(len(definitions), 1), size):
            page: dict[str, Any] = {"tools": definitions[offset : offset + size]}
            if offset + size < len(definitions):
                page["nextCursor"] = _cursor(offset + size, digest)
            # CACHE-01/CACHE-18: every page carries the hints, with one scope for the whole list.
            page["ttlMs"] = cfg.list_ttl_ms
            page["cacheScope"] = cfg.list_cache_scope
            page = self._complete(page)
            if offset == 0:
                first = page
            else:
                pages[_cursor(offset, digest)] = page
        assert first is not None
        return pages, first

    def _rebuild_discover(self) -> None:
        cfg = self.config
        discover: dict[str, Any] = {
            "supportedVersions": list(SUPPORTED_PROTOCOL_VERSIONS),
            "capabilities": {name: dict(settings) for name, settings in self._capabilities.items()},
        }
        if cfg.instructions is not None:
            discover["instructions"] = cfg.instructions
        self._discover = self._complete(
            {**discover, "ttlMs": cfg.discover_ttl_ms, "cacheScope": cfg.discover_cache_scope}
        )
        # SUB-03: a listen stream honours exactly the notifications the capabilities announce.
        caps = self._capabilities
        kinds = {f"{name}ListChanged" for name in ("tools", "prompts", "resources")
                 if caps.get(name, {}).get("listChanged") is True}
        if caps.get("resources", {}).get("subscribe") is True:
            kinds.add("resourceSubscriptions")
        self._subscription_kinds = frozenset(kinds)

    def _complete(self, result: dict[str, Any]) -> dict[str, Any]:
        """Stamp `resultType` (BASE-08) and `serverInfo` (BASE-37) on a result."""
        result["resultType"] = jsonrpc.RESULT_COMPLETE
        if self._result_meta is not None:
            result["_meta"] = self._result_meta
        return result

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        """The served tools by wire name, in listing order."""
        return {name: tool.spec for name, tool in self._tools.items()}

    # ---- run-time changes ---------------------------------------------------------------

    def add_tool(self, definition: Mapping[str, Any], handler: ToolHandler, *,
                 input_model: type[BaseModel] | None = None, output_model: type[BaseModel] | None = None,
                 output_is_root: bool = False, notify: bool = True) -> None:
        """Serve one more tool (appended to the listing) and tell listeners (TOOLS-05).

        `handler(args, ctx)` gets `input_model` instances, or the arguments dict (checked
        against `inputSchema`) when no model is given; it returns what generated handlers
        return. Replacing an existing name keeps its position.
        """
        definition = dict(definition)
        spec = tool_table([definition])[str(definition.get("name"))]
        if not inspect.iscoroutinefunction(handler):
            raise TypeError(f"tool {spec.name!r}: the handler must be an async function")
        tool = _make_tool(spec, handler, input_model, output_model, output_is_root)
        definitions = [d for d in self._definitions if d.get("name") != spec.name] \
            if spec.name in self._tools else list(self._definitions)
        if spec.name in self._tools:
            index = next(i for i, d in enumerate(self._definitions) if d.get("name") == spec.name)
            definitions.insert(index, definition)
        else:
            definitions.append(definition)
        tools = dict(self._tools)
        tools[spec.name] = tool
        self._swap_tools(definitions, {d["name"]: tools[d["name"]] for d in definitions}, notify)

    def remove_tool(self, name: str, *, notify: bool = True) -> None:
        """Stop serving a tool (calls already running finish) and tell listeners (TOOLS-05)."""
        if name not in self._tools:
            raise KeyError(name)
        definitions = [d for d in self._definitions if d.get("name") != name]
        self._swap_tools(definitions, {k: v for k, v in self._tools.items() if k != name}, notify)

    def _swap_tools(self, definitions: list[dict[str, Any]], tools: dict[str, _Tool], notify: bool) -> None:
        pages, first = self._build_pages(definitions)
        # Swapped together between two awaits: no request sees a half-updated tool set.
        self._definitions, self._tools, self._pages, self._first_page = definitions, tools, pages, first
        if notify:
            self.notify_list_changed("tools")

    def add_method(self, method: str, handler: MethodHandler, *, ttl_ms: int | None = None,
                   cache_scope: CacheScope | None = None) -> None:
        """Serve `method` with `handler(params, ctx) -> result dict` (resultType and serverInfo are added).

        prompts/list, resources/list, resources/templates/list and resources/read results get
        `ttlMs`/`cacheScope` unless the handler set them (CACHE-01); so does any method given
        `ttl_ms`. Handlers of prompts/get and resources/read may ask for client input through
        `ctx` (MRTR-02). Declare the matching capability with `declare_capability` (HDR-05).
        """
        if method in BUILTIN_METHODS or method in REMOVED_METHODS or method.startswith("notifications/"):
            raise ValueError(f"{method!r} cannot be served with add_method")
        if not inspect.iscoroutinefunction(handler):
            raise TypeError(f"{method}: the handler must be an async function")
        if ttl_ms is not None and (not isinstance(ttl_ms, int) or ttl_ms < 0):
            raise ValueError("ttl_ms must be an integer >= 0 (CACHE-05)")
        if cache_scope not in (None, "public", "private"):
            raise ValueError(f"cache scope must be 'public' or 'private', not {cache_scope!r}")
        cacheable = method in CACHEABLE_METHODS or ttl_ms is not None
        self._methods[method] = _Method(
            handler, cacheable, ttl_ms if ttl_ms is not None else self.config.list_ttl_ms, cache_scope
        )

    def declare_capability(self, name: str, settings: Mapping[str, Any] | None = None) -> None:
        """Add (or update) a server capability in `server/discover`, e.g. `("prompts", {"listChanged": True})`."""
        self._capabilities[name] = {**self._capabilities.get(name, {}), **dict(settings or {})}
        self._rebuild_discover()

    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"] = "tools") -> int:
        """Send `notifications/<kind>/list_changed` to the listen streams that asked for it
        (SUB-01, TOOLS-05); returns how many. Nothing is sent unless `<kind>.listChanged` is declared."""
        flag = f"{kind}ListChanged"
        if flag not in self._subscription_kinds:
            _LOG.debug("%s not declared: no notification sent", flag)
            return 0
        return self._hub.publish(LIST_CHANGED[flag])

    def notify_resource_updated(self, uri: str) -> int:
        """Send `notifications/resources/updated` to the listen streams subscribed to `uri`."""
        if "resourceSubscriptions" not in self._subscription_kinds:
            return 0
        return self._hub.publish_resource_updated(uri)

    def close_subscriptions(self) -> None:
        """End every listen stream gracefully: each gets its final response (SUB-07). Servers call
        this on shutdown."""
        self._hub.close_all()

    # ---- one message --------------------------------------------------------------------

    async def handle_message(self, message: Any, request: IncomingRequest | None = None) -> Outcome:
        """Validate and answer one parsed JSON-RPC message (see the module docstring for the order).

        `subscriptions/listen` returns only when the subscription ends (client cancellation
        raises CancelledError here; `close_subscriptions` makes it return its final response).
        """
        if request is None:
            request = _DIRECT
        if type(message) is not dict:
            if isinstance(message, list):
                return _err(None, jsonrpc.INVALID_REQUEST, "Batches are not supported: send one JSON-RPC message per request")
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
                return _err(id_, jsonrpc.INVALID_REQUEST, "Clients must not send JSON-RPC responses to the server")
            return _err(id_, jsonrpc.INVALID_REQUEST, "The message has no method")
        params = message.get("params")
        if not has_id:
            return self._notification(method, params)
        if params is None:
            params = _NO_ARGS
        elif type(params) is not dict:
            return self._fail(id_, method, jsonrpc.INVALID_PARAMS, "params must be an object")

        headers = request.headers
        header_version: str | None = None
        if headers is not None:
            header_version = headers.get(PROTOCOL_VERSION_LC)
            if header_version is None:
                return self._fail(id_, method, jsonrpc.HEADER_MISMATCH, "Missing MCP-Protocol-Version header")
        meta = params.get("_meta")
        if type(meta) is not dict:
            return self._fail(
                id_, method, jsonrpc.INVALID_PARAMS,
                f"params._meta must be an object carrying {PROTOCOL_VERSION_KEY} and {CLIENT_CAPABILITIES_KEY}",
            )
        version = meta.get(PROTOCOL_VERSION_KEY)
        if type(version) is not str:
            return self._fail(id_, method, jsonrpc.INVALID_PARAMS, f"params._meta lacks {PROTOCOL_VERSION_KEY}")
        capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
        if type(capabilities) is not dict:
            return self._fail(id_, method, jsonrpc.INVALID_PARAMS, f"params._meta lacks {CLIENT_CAPABILITIES_KEY}")
        if header_version is not None and header_version != version and header_version.strip(" \t") != version:
            return self._fail(
                id_, method, jsonrpc.HEADER_MISMATCH,
                "MCP-Protocol-Version header does not match params._meta protocolVersion",
            )
        if version not in self._supported:
            return self._fail(
                id_, method, jsonrpc.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                {"supported": self._supported_list, "requested": version},
            )
        if headers is not None:
            mismatch = self._check_standard_headers(headers, method, params)
            if mismatch is not None:
                return self._fail(id_, method, jsonrpc.HEADER_MISMATCH, mismatch)

        assert id_ is not None  # has_id and _valid_id
        try:
            if method == "tools/call":
                result = await self._call_tool(id_, params, meta, version, capabilities, request)
            elif method == "tools/list":
                result = self._list_tools(params)
            elif method == "server/discover":
                result = self._discover
            elif method == "subscriptions/listen":
                return await self._listen(id_, params, request)
            else:
                entry = self._methods.get(method)
                if entry is None:
                    return self._fail(id_, method, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")
                result = await self._call_method(entry, id_, method, params, meta, version, capabilities, request)
        except RpcError as exc:
            return self._fail(id_, method, exc.code, exc.message, exc.data, exc.http_status)
        return Outcome(200, {"jsonrpc": "2.0", "id": id_, "result": result})

    def _fail(
        self, id_: Any, method: str, code: int, message: str, data: Any = None, status: int | None = None
    ) -> Outcome:
        # VER-08: any error to a (legacy) initialize names the versions this server speaks.
        if method == "initialize" and data is None:
            data = {"supported": self._supported_list}
        return _err(id_, code, message, data, status)

    def _notification(self, method: str, params: Any) -> Outcome:
        # Nothing to do for notifications here: stdio cancellation is handled by the stdio loop,
        # and over HTTP a disconnect is the cancellation (HTTP-21). Never answered (BASE-16).
        _LOG.debug("notification %s ignored", method)
        return Outcome(202, None)

    @staticmethod
    def _check_standard_headers(headers: Mapping[str, str], method: str, params: Mapping[str, Any]) -> str | None:
        """Mcp-Method and Mcp-Name against the body (HDR-07..12); the problem, or None."""
        header_method = headers.get(METHOD_LC)
        if header_method is None:
            return "Missing Mcp-Method header"
        if header_method != method and header_method.strip(" \t") != method:
            return "Mcp-Method header does not match the request method"
        name_field = NAME_FIELD_BY_METHOD.get(method)
        if name_field is None:
            return None
        raw = headers.get(NAME_LC)
        if raw is None:
            return "Missing Mcp-Name header"
        expected = params.get(name_field)
        # The common case: a plain name exactly as in the body (HTTP servers strip surrounding
        # whitespace, and a sentinel starts with "=?"): nothing to decode.
        if raw == expected and not raw.startswith("=?"):
            return None
        try:
            name = decode_value(raw)
        except HeaderValueError:
            return "Mcp-Name header has a malformed =?base64?...?= value"
        if name != expected:
            return f"Mcp-Name header does not match params.{name_field}"
        return None

    # ---- methods ------------------------------------------------------------------------

    def _list_tools(self, params: Mapping[str, Any]) -> dict[str, Any]:
        cursor = params.get("cursor")
        if cursor is None:
            return self._first_page
        page = self._pages.get(cursor) if type(cursor) is str else None
        if page is None:
            raise RpcError(jsonrpc.INVALID_PARAMS, "Invalid cursor")  # PAGE-08
        return page

    async def _call_tool(
        self,
        id_: jsonrpc.RequestId,
        params: dict[str, Any],
        meta: dict[str, Any],
        version: str,
        capabilities: dict[str, Any],
        request: IncomingRequest,
    ) -> dict[str, Any]:
        name = params.get("name")
        if type(name) is not str:
            raise RpcError(jsonrpc.INVALID_PARAMS, "params.name must be a string")
        tool = self._tools.get(name)
        if tool is None:
            raise RpcError(jsonrpc.INVALID_PARAMS, f"Unknown tool: {name}")  # TOOLS-22
        if self._limiter is not None:
            wait = self._limiter.take(self._caller_key(request))
            if wait:
                return self._rate_limited(name, wait)
        arguments = params.get("arguments")
        if arguments is None:
            arguments = _NO_ARGS
        elif type(arguments) is not dict:
            raise RpcError(jsonrpc.INVALID_PARAMS, "params.arguments must be an object")
        if request.headers is not None and tool.header_params:
            problem = _check_param_headers(tool, arguments, request.headers)
            if problem is not None:
                raise RpcError(jsonrpc.HEADER_MISMATCH, problem)

        issue = tool.validate_input(arguments)  # SEC-01
        if issue is not None:
            return self._error_result(f"Invalid arguments for tool {name!r} {issue.describe()}")
        for path in tool.integer_paths:  # XHDR-07: header-mirrored integers must survive the trip
            value = extract(arguments, path)
            if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
                pointer = "/" + "/".join(path)
                return self._error_result(
                    f"Invalid arguments for tool {name!r} at {pointer}: integer outside ±(2^53-1)"
                )
        args: Any = arguments
        if tool.input_model is not None:
            try:
                parse = tool.parse_input
                if parse is None:
                    # Generated models defer building their validator (fast imports): the first
                    # call builds it; later calls skip model_validate's Python wrapper.
                    args = tool.input_model.model_validate(arguments)
                    tool.parse_input = tool.input_model.__pydantic_validator__.validate_python
                else:
                    args = parse(arguments)
            except ValidationError as exc:
                first = exc.errors()[0]
                pointer = "".join(f"/{part}" for part in first["loc"])
                return self._error_result(f"Invalid arguments for tool {name!r} at {pointer or '/'}: {first['msg']}")

        ctx = ToolContext._for_request(
            id_, "tools/call", meta, version, capabilities, request.transport, request.headers, request.principal,
            request.notify, None, None, request.open_stream, self._progress_interval,
        )
        ctx.tool_name = name
        if "inputResponses" in params or "requestState" in params:  # an MRTR retry: the slow path
            self._resume_round(ctx, "tools/call", params, request)
        try:
            value = await tool.handler(args, ctx)
        except InputRequired as ask:
            try:
                return self._input_required(ask, "tools/call", params, request)
            except (TypeError, ValueError):  # ctx.state not JSON, or too large: a handler bug
                _LOG.exception("tool %r: cannot build its requestState", name)
                return self._error_result(f"Tool {name!r} failed with an internal error (requestState)")
        except ToolExecutionError as exc:
            return self._error_result(str(exc) or f"Tool {name!r} failed")
        except NotImplementedError:
            return self._error_result(f"Tool {name!r} is not implemented")
        except RpcError:
            raise
        except Exception as exc:
            # Details stay in the server log; the model gets a short, safe message (SEC-04).
            _LOG.exception("tool %r raised", name)
            return self._error_result(f"Tool {name!r} failed with an internal error ({type(exc).__name__})")
        finally:
            ctx.close()
        return self._shape_result(tool, value)

    async def _call_method(
        self,
        entry: _Method,
        id_: jsonrpc.RequestId,
        method: str,
        params: dict[str, Any],
        meta: dict[str, Any],
        version: str,
        capabilities: dict[str, Any],
        request: IncomingRequest,
    ) -> dict[str, Any]:
        ctx = RequestContext._for_request(
            id_, method, meta, version, capabilities, request.transport, request.headers, request.principal,
            request.notify, None, None, request.open_stream, self._progress_interval,
        )
        if method in MRTR_METHODS and ("inputResponses" in params or "requestState" in params):
            self._resume_round(ctx, method, params, request)
        try:
            value = await entry.handler(params, ctx)
        except InputRequired as ask:
            try:
                return self._input_required(ask, method, params, request)
            except (TypeError, ValueError) as exc:
                _LOG.exception("%s: cannot build its requestState", method)
                raise RpcError(jsonrpc.INTERNAL_ERROR, f"Internal error in {method} (requestState)") from exc
        except RpcError:
            raise
        except Exception as exc:
            _LOG.exception("handler of %s raised", method)
            raise RpcError(jsonrpc.INTERNAL_ERROR, f"Internal error in {method} ({type(exc).__name__})") from exc
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

    async def _listen(self, id_: jsonrpc.RequestId, params: dict[str, Any], request: IncomingRequest) -> Outcome:
        """One `subscriptions/listen` stream: acknowledgment first (SUB-02), then the notifications
        the client opted into and the server honours (SUB-01/03), each tagged with the
        subscription id (SUB-05); a final response when the server ends it (SUB-07)."""
        notify = request.notify
        if notify is None:
            raise RpcError(jsonrpc.INVALID_REQUEST, "subscriptions/listen needs a transport that can stream")
        requested = params.get("notifications")
        if type(requested) is not dict:
            raise RpcError(jsonrpc.INVALID_PARAMS, "params.notifications must be an object (SubscriptionFilter)")
        try:
            honoured = honoured_filter(requested, self._subscription_kinds)
        except ValueError as exc:
            raise RpcError(jsonrpc.INVALID_PARAMS, str(exc)) from exc
        subscription = self._hub.open(id_, honoured)
        keepalive = request.keepalive
        interval = self.config.keepalive_s if keepalive is not None else None
        try:
            await notify(subscription.tagged("notifications/subscriptions/acknowledged", {"notifications": honoured}))
            while True:
                batch = await subscription.next_batch(interval)
                if batch is None:
                    break
                if not batch:
                    assert keepalive is not None
                    await keepalive()
                for notification in batch:
                    await notify(notification)
        finally:
            self._hub.discard(subscription)
        result: dict[str, Any] = {"resultType": jsonrpc.RESULT_COMPLETE,
                                  "_meta": {**(self._result_meta or {}), SUBSCRIPTION_ID_KEY: id_}}
        return Outcome(200, {"jsonrpc": "2.0", "id": id_, "result": result})

    # ---- multi round-trip requests ------------------------------------------------------

    def _codec(self) -> StateCodec:
        codec = self._state_codec
        if codec is None:
            cfg = self.config
            codec = self._state_codec = StateCodec.from_config(
                cfg.state_secrets, ttl_s=cfg.state_ttl_s, max_bytes=cfg.max_state_bytes
            )
        return codec

    def _principal_id(self, principal: Any) -> str | None:
        if principal is None:
            return None
        auth = self.config.auth
        return auth.principal_id(principal) if auth is not None else str(principal)

    def _resume_round(self, ctx: RequestContext, method: str, params: Mapping[str, Any],
                      request: IncomingRequest) -> None:
        """Check `inputResponses` (MRTR-21) and verify `requestState` (MRTR-05..10) of a retry."""
        if "inputResponses" in params:
            ctx.input_responses = check_input_responses(params["inputResponses"])
        token = params.get("requestState")
        if token is None:
            return
        if type(token) is not str:
            raise RpcError(jsonrpc.INVALID_PARAMS, "params.requestState must be a string")
        try:
            body = self._codec().open(
                token,
                principal=principal_digest(self._principal_id(request.principal)),
                request=request_digest(method, params),
            )
        except StateError as exc:
            _LOG.info("rejected requestState for %s: %s", method, exc)
            raise RpcError(jsonrpc.INVALID_PARAMS, f"Invalid requestState: {exc}") from exc
        carried, asked, state = body.get("c"), body.get("a"), body.get("s")
        ctx.request_state = token
        ctx._resume(
            carried if isinstance(carried, dict) else {},
            [k for k in asked if isinstance(k, str)] if isinstance(asked, list) else [],
            state if isinstance(state, dict) else {},
        )

    def _input_required(self, ask: InputRequired, method: str, params: Mapping[str, Any],
                        request: IncomingRequest) -> dict[str, Any]:
        """An InputRequiredResult (MRTR-01/04/12): never cacheable, so no hints (CACHE-02)."""
        token = self._codec().seal(
            principal=principal_digest(self._principal_id(request.principal)),
            request=request_digest(method, params),
            asked=list(ask.requests),
            carried=ask.carried,
            state=ask.state,
        )
        result: dict[str, Any] = {
            "resultType": jsonrpc.RESULT_INPUT_REQUIRED,
            "inputRequests": ask.requests,
            "requestState": token,
        }
        if self._result_meta is not None:
            result["_meta"] = self._result_meta
        return result

    # ---- rate limiting ------------------------------------------------------------------

    def _caller_key(self, request: IncomingRequest) -> Hashable:
        principal = request.principal
        if principal is not None:
            return ("principal", self._principal_id(principal))
        return ("peer", request.peer)

    def _rate_limited(self, name: str, wait: float) -> dict[str, Any]:
        """SEC-03. A tool result with `isError: true`, not a JSON-RPC error: the call was refused
        before the tool ran, but it is the model that must slow down and can, given the delay
        (TOOLS-22); no JSON-RPC code means "rate limited" and inventing one in the reserved
        range is forbidden (ERR-03, ERR-06); and it reads the same over HTTP and stdio."""
        retry_ms = max(1, math.ceil(wait * 1000))
        result = self._error_result(
            f"Rate limit exceeded for tool {name!r}: too many calls; retry in {retry_ms / 1000:.3g} s"
        )
        result["_meta"] = {**result.get("_meta", {}), RETRY_AFTER_KEY: retry_ms}
        return result

    # ---- results ------------------------------------------------------------------------

    def _error_result(self, text: str) -> dict[str, Any]:
        result: dict[str, Any] = {
            "content": [{"type": "text", "text": text}],
            "isError": True,
            "resultType": jsonrpc.RESULT_COMPLETE,
        }
        if self._result_meta is not None:
            result["_meta"] = self._result_meta
        return result

    def _structured_result(self, structured: Any) -> dict[str, Any]:
        # TOOLS-18: the same JSON as text, for clients that only read content.
        result: dict[str, Any] = {
            "content": [{"type": "text", "text": _json.dumps(structured).decode()}],
            "structuredContent": structured,
            "isError": False,
            "resultType": jsonrpc.RESULT_COMPLETE,
        }
        if self._result_meta is not None:
            result["_meta"] = self._result_meta
        return result

    def _shape_result(self, tool: _Tool, value: Any) -> dict[str, Any]:
        """Turn a handler's return value into a CallToolResult."""
        name = tool.spec.name
        if isinstance(value, ToolResult):
            return self._passthrough(tool, value)
        try:
            if tool.validate_output is not None:
                if tool.output_is_root:
                    value = self._as_output(tool, value)
                structured = _dump(value, exclude_none=False)
                issue = tool.validate_output(structured)
                if issue is not None and isinstance(value, BaseModel):
                    # Generated models default optional fields to None, which a non-nullable
                    # property rejects; retry without the Nones before calling it invalid.
                    retry = _dump(value, exclude_none=True)
                    if tool.validate_output(retry) is None:
                        structured, issue = retry, None
                if issue is not None:
                    return self._invalid_output(name, issue.describe())
                return self._structured_result(structured)
            content = _as_content(value)
            if content is None:  # plain JSON data from a tool without outputSchema
                structured = value.model_dump(mode="json", by_alias=True) if isinstance(value, BaseModel) else value
                return self._structured_result(structured)
        except (ValidationError, TypeError, ValueError) as exc:  # model rejected the value, or not JSON
            return self._invalid_output(name, str(exc).splitlines()[0])
        result: dict[str, Any] = {"content": content, "isError": False, "resultType": jsonrpc.RESULT_COMPLETE}
        if self._result_meta is not None:
            result["_meta"] = self._result_meta
        return result

    def _invalid_output(self, name: str, why: str) -> dict[str, Any]:
        # TOOLS-19: never send structuredContent that breaks outputSchema; it is a server bug.
        _LOG.error("tool %r returned output that does not match its outputSchema: %s", name, why)
        return self._error_result(f"Tool {name!r} produced invalid output")

    @staticmethod
    def _as_output(tool: _Tool, value: Any) -> Any:
        """A root value becomes its RootModel, so it serializes like any output model."""
        model = tool.output_model
        if model is not None and not isinstance(value, model):
            return model.model_validate(value)
        return value

    def _passthrough(self, tool: _Tool, value: ToolResult) -> dict[str, Any]:
        result = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        result.setdefault("content", [])
        if tool.validate_output is not None and not result.get("isError"):
            if "structuredContent" not in result:
                return self._invalid_output(tool.spec.name, "no structuredContent")
            issue = tool.validate_output(result["structuredContent"])
            if issue is not None:
                return self._invalid_output(tool.spec.name, issue.describe())
        result["resultType"] = jsonrpc.RESULT_COMPLETE
        if self._result_meta is not None:
            result["_meta"] = {**result.get("_meta", {}), **self._result_meta}
        return result

    # ---- transports ---------------------------------------------------------------------

    def asgi_app(self) -> ASGIApp:
        """A raw ASGI app serving the MCP endpoint on any path it is mounted at."""
        from .http import McpAsgiApp

        return McpAsgiApp(self)

    def run_http(self, host: str = "127.0.0.1", port: int = 8000) -> None:
        """Serve Streamable HTTP with uvicorn until interrupted (HTTP-04: localhost by default)."""
        from .http import run_http

        run_http(self, host, port)

    def run_stdio(self) -> None:
        """Serve stdin/stdout until stdin closes (STDIO-11)."""
        from .stdio import run_stdio

        run_stdio(self)


def _dump(value: Any, *, exclude_none: bool) -> Any:
    """JSON data for structuredContent; plain values pass through (orjson rejects non-JSON later)."""
    if isinstance(value, BaseModel):
        # model_dump without its Python wrapper (an instance's serializer is always built).
        return value.__pydantic_serializer__.to_python(
            value, mode="json", by_alias=True, exclude_unset=True, exclude_none=exclude_none, warnings=False
        )
    return value


def _as_content(value: Any) -> list[dict[str, Any]] | None:
    """Content blocks for a handler value, or None when the value is data (structured content)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, _CONTENT_TYPES):
        return [value.model_dump(mode="json", by_alias=True, exclude_none=True)]
    if isinstance(value, dict):
        return [value] if value.get("type") in _CONTENT_KINDS else None
    if isinstance(value, (list, tuple)) and value:
        blocks: list[dict[str, Any]] = []
        for item in value:
            if isinstance(item, _CONTENT_TYPES):
                blocks.append(item.model_dump(mode="json", by_alias=True, exclude_none=True))
            elif isinstance(item, str):
                blocks.append({"type": "text", "text": item})
            elif isinstance(item, dict) and item.get("type") in _CONTENT_KINDS:
                blocks.append(item)
            else:
                return None
        return blocks
    return None


def _check_param_headers(tool: _Tool, arguments: Mapping[str, Any], headers: Mapping[str, str]) -> str | None:
    """Mcp-Param-* against the arguments (XHDR-22..25); the problem, or None."""
    for param, header_lc in tool.header_params:
        value = extract(arguments, param.path)
        raw = headers.get(header_lc)
        if value is None:
            # XHDR-24: not expected; a header claiming a value the body lacks is a mismatch.
            if raw is not None:
                return f"{param.header} header is present but the argument is absent or null"
            continue
        expected = param_value_text(value)
        if expected is None:
            continue  # not a header-mirrorable value; input validation reports it
        if raw is None:
            return f"Missing {param.header} header for argument {'/'.join(param.path)!r}"
        if not FIELD_VALUE.match(raw):  # XHDR-22 "invalid characters"
            return f"{param.header} header contains invalid characters"  # XHDR-22
        try:
            text = decode_value(raw)
        except HeaderValueError:
            return f"{param.header} header has a malformed =?base64?...?= value"  # XHDR-22
        if param.type == "integer" and isinstance(value, (int, float)) and not isinstance(value, bool):
            # XHDR-25: numeric comparison, so 42.0 equals 42.
            if not _JSON_NUMBER.match(text):
                return f"{param.header} header is not a number"
            try:
                equal = Decimal(text) == Decimal(value)
            except InvalidOperation:  # pragma: no cover - the regex admits only valid numbers
                equal = False
            if not equal:
                return f"{param.header} header does not match argument {'/'.join(param.path)!r}"
        elif text != expected:
            return f"{param.header} header does not match argument {'/'.join(param.path)!r}"
    return None

