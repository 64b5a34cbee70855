"""Sans-I/O dispatch: one JSON-RPC message in, one `Outcome` (HTTP status + response) out.

`Dispatcher` is the transport-free part of `ToolServer` (tool_server.py adds the HTTP and
stdio entry points; http/app.py and stdio.py drive a `Dispatcher`). Everything per tool
(validators, header tables, list pages, the discover result) is built once when the server
is made (catalog.py); the per-message path is dict lookups, the precompiled validators,
the handler and orjson.

One module of some 630 lines, on purpose: `Dispatcher` is one class (`__slots__`) whose per-message
path reads top to bottom in the check order below, and its set-up, run-time tool changes and
input-required rounds share those slots. What stands alone is already elsewhere: the catalog,
header checks, result shaping, input requests, listen streams, replicas (their own modules).

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

import importlib
import inspect
import logging
import time
from collections.abc import Hashable, Mapping
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ValidationError

from ... import telemetry
from ..._version import LEGACY_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from ...pointers import first_error
from ...protocol import jsonrpc
from ...protocol.headers import PROTOCOL_VERSION_LC
from ...protocol.meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY
from ...protocol.xheader import MAX_SAFE_INTEGER, extract
from ...tools import ToolSpec, tool_table
from ..store import Store, StoreUnavailable
from . import catalog
from .bearer_auth import principal_id
from .catalog import MethodHandler, ServedMethod, ServedTool, ToolHandler
from .config import CacheScope, IncomingRequest, Outcome, ServerConfig, ToolBinding
from .context import RequestContext, RpcError, ToolContext, ToolExecutionError, status_for_code
from .header_checks import check_param_headers, check_standard_headers
from .health import Probes, ReadinessCheck
from .input_requests import MRTR_METHODS, InputRequired, input_required_result, resume_round
from .listen import LIST_CHANGED, SubscriptionHub, listen
from .ratelimit import RateLimiter
from .replicas import Fanout, bucket_key, resolve_store, store_unavailable
from .request_state import StateCodec, configured_keys
from .resource_subscriptions import SubscribeRules
from .results import complete, error_result, rate_limited_result, shape_result
from .surfaces import (
    CompletionBinding,
    CompletionHandler,
    PromptBinding,
    PromptHandler,
    ResourceReader,
    ResourceTemplateBinding,
    Surfaces,
    TemplateReader,
    completer,
    prompt_getter,
    template_reader,
)

__all__ = ["BUILTIN_METHODS", "CACHEABLE_METHODS", "REMOVED_METHODS", "Dispatcher"]

_LOG = logging.getLogger("mcpgen.server")

# Methods of earlier revisions that this one removed: answered like unknown methods
# (RULES.md conformance §4.11).
REMOVED_METHODS = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)
# Served by the dispatcher itself; `add_method` cannot take them over.
BUILTIN_METHODS = frozenset({"tools/call", "tools/list", "server/discover", "subscriptions/listen"})
# Complete results of these carry ttlMs and cacheScope (CACHE-01).
CACHEABLE_METHODS = frozenset(
    {"prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)

_DIRECT = IncomingRequest()
_NO_ARGS: dict[str, Any] = {}


def _err(id_: Any, code: int, message: str, data: Any = None, status: int | None = None) -> Outcome:
    return Outcome(
        status if status is not None else status_for_code(code), jsonrpc.error(id_, code, message, data)
    )


def _valid_id(value: Any) -> bool:
    cls = type(value)  # exact JSON types first (the common case), subclasses the long way
    return cls is int or cls is str or (isinstance(value, (str, int)) and not isinstance(value, bool))


class Dispatcher:
    """The served tools and methods, and `handle_message` over them.

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
        "_fanout",
        "_first_page",
        "_hub",
        "_initialize_hint",
        "_known_tools",
        "_limiter",
        "_methods",
        "_pages",
        "_probes",
        "_progress_interval",
        "_result_meta",
        "_shared_limit",
        "_single_use_tools",
        "_state_codec",
        "_store",
        "_subscribe_rules",
        "_subscription_kinds",
        "_supported",
        "_supported_list",
        "_surfaces",
        "_tools",
        "config",
    )

    _tool_definitions_: ClassVar[list[dict[str, Any]]] = []
    _tool_bindings_: ClassVar[tuple[ToolBinding, ...]] = ()
    # The module the bindings' model names are looked up in (a generated base names its models.py).
    _tool_models_: ClassVar[str | None] = None
    # Identity and policy a generated base (or handlers.py) may preset; see `default_config`.
    _server_config_: ClassVar[ServerConfig | None] = None
    # Tools whose requestState is accepted once (MRTR-11); handlers.py may set it, `add_tool` too.
    _single_use_state_: ClassVar[frozenset[str]] = frozenset()
    # Resources, resource templates and prompts a generated base declares (surfaces.json) and the
    # methods serving them (surfaces.py); empty: the server serves none of them.
    _surface_definitions_: ClassVar[Mapping[str, list[dict[str, Any]]]] = {}
    _static_resource_method_: ClassVar[str | None] = None
    _resource_template_bindings_: ClassVar[tuple[ResourceTemplateBinding, ...]] = ()
    _prompt_bindings_: ClassVar[tuple[PromptBinding, ...]] = ()
    _completion_bindings_: ClassVar[tuple[CompletionBinding, ...]] = ()
    # Declared templates whose `{var}` values arrive as decoded, `/` and `..` included (uri_match.py);
    # handlers.py may set it.
    _raw_template_values_: ClassVar[frozenset[str]] = frozenset()

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
        self._result_meta: dict[str, Any] | None = (
            {SERVER_INFO_KEY: info} if cfg.include_server_info else None
        )
        self._definitions = list(type(self)._tool_definitions_)
        models = type(self)._tool_models_
        self._tools = catalog.bind_tools(
            self,
            self._definitions,
            type(self)._tool_bindings_,
            importlib.import_module(models) if models is not None else None,
        )
        # Every tool this process can serve (a shared tool set names tools by name: fanout.py).
        self._known_tools = {d["name"]: (d, self._tools[d["name"]]) for d in self._definitions}
        self._pages, self._first_page = catalog.build_pages(self._definitions, cfg, self._complete)
        self._supported = frozenset(SUPPORTED_PROTOCOL_VERSIONS)
        self._supported_list = list(SUPPORTED_PROTOCOL_VERSIONS)
        modern = ", ".join(SUPPORTED_PROTOCOL_VERSIONS)
        self._initialize_hint = (
            f"this server speaks only MCP {modern}, which has no initialize"
            if cfg.modern_only
            else f"MCP {modern} requests carry _meta and need no initialize; for "
            f"{', '.join(LEGACY_PROTOCOL_VERSIONS)} send initialize without _meta"
        )
        self._methods: dict[str, ServedMethod] = {}
        self._capabilities: dict[str, dict[str, Any]] = {"tools": {"listChanged": cfg.list_changed}}
        self._hub = SubscriptionHub(cfg.max_listen_streams)
        self._subscribe_rules = SubscribeRules(
            max_uri_length=cfg.max_uri_length,
            max_count=cfg.sessions.max_resource_subscriptions,
            max_bytes=cfg.sessions.max_resource_subscription_bytes,
            served=self._serves_resource,
            may_subscribe=self.may_subscribe,
        )
        self._probes = Probes(cfg.health_path, cfg.ready_path, cfg.readiness_checks, cfg.ready_timeout_s)
        configured_keys(cfg.state_secrets)  # a secret that cannot work stops the server now, not at first use
        self._store = resolve_store(cfg)
        if self._store.shared:
            self._probes.add("store", self._store.ping)  # /readyz: unready while the store is unreachable
        # Per-process buckets stay synchronous (the hot path awaits nothing); a shared store's are
        # atomic there.
        self._shared_limit = cfg.rate_limit if cfg.rate_limit is not None and self._store.shared else None
        self._limiter = (
            RateLimiter(cfg.rate_limit) if cfg.rate_limit is not None and not self._store.shared else None
        )
        self._fanout = Fanout(self._store, self._hub, self._adopt_tools, self._adopt_surfaces)
        self._single_use_tools = set(type(self)._single_use_state_)
        if unknown := self._single_use_tools - set(self._tools):
            raise ValueError(
                f"_single_use_state_ names tools that are not served: {', '.join(sorted(unknown))}"
            )
        self._state_codec: StateCodec | None = None  # made on first use (it may warn about its key)
        self._progress_interval = cfg.progress_interval_ms / 1000
        self._surfaces: Surfaces | None = None
        self._rebuild_discover()
        self._bind_surfaces()

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
        kinds = {
            f"{name}ListChanged"
            for name in ("tools", "prompts", "resources")
            if caps.get(name, {}).get("listChanged") is True
        }
        if caps.get("resources", {}).get("subscribe") is True:
            kinds.add("resourceSubscriptions")
        self._subscription_kinds = frozenset(kinds)

    def _complete(self, result: dict[str, Any]) -> dict[str, Any]:
        """Stamp `resultType` (BASE-08) and `serverInfo` (BASE-37) on a result."""
        return complete(result, self._result_meta)

    @property
    def capabilities(self) -> Mapping[str, Mapping[str, Any]]:
        """The server capabilities `server/discover` announces (legacy sessions add `logging`)."""
        return self._capabilities

    @property
    def shared_store(self) -> Store:
        """Where state shared by the replicas of this server lives (`ServerConfig.store`);
        `await server.shared_store.ping()` is a readiness check. (Named so that tools called
        `store` or `start` stay free: the generator reserves every name a ToolServer has.)"""
        return self._store

    @property
    def hub(self) -> SubscriptionHub:
        """The open `subscriptions/listen` streams; `notify_list_changed` publishes here."""
        return self._hub

    @property
    def tools(self) -> Mapping[str, ToolSpec]:
        """The served tools by wire name, in listing order."""
        return {name: tool.spec for name, tool in self._tools.items()}

    # ---- run-time changes ---------------------------------------------------------------

    def add_tool(
        self,
        definition: Mapping[str, Any],
        handler: ToolHandler,
        *,
        input_model: type[BaseModel] | None = None,
        output_model: type[BaseModel] | None = None,
        output_is_root: bool = False,
        notify: bool = True,
        single_use_state: bool = False,
    ) -> None:
        """Serve one more tool (appended to the listing) and tell listeners (TOOLS-05).

        `handler(args, ctx)` gets `input_model` instances, or the arguments dict (checked
        against `inputSchema`) when no model is given; it returns what generated handlers
        return. Replacing an existing name keeps its position. `single_use_state`: every
        requestState the tool issues is accepted once (MRTR-11).
        """
        definition = dict(definition)
        spec = tool_table([definition])[str(definition.get("name"))]
        if not inspect.iscoroutinefunction(handler):
            raise TypeError(f"tool {spec.name!r}: the handler must be an async function")
        tool = catalog.make_tool(spec, handler, input_model, output_model, output_is_root)
        if single_use_state:
            self._single_use_tools.add(spec.name)
        else:
            self._single_use_tools.discard(spec.name)
        definitions = catalog.definitions_with(self._definitions, definition)
        tools = {**self._tools, spec.name: tool}
        self._known_tools[spec.name] = (definition, tool)
        self._swap_tools(definitions, {d["name"]: tools[d["name"]] for d in definitions}, notify)

    def remove_tool(self, name: str, *, notify: bool = True) -> None:
        """Stop serving a tool (calls already running finish) and tell listeners (TOOLS-05)."""
        if name not in self._tools:
            raise KeyError(name)
        definitions = [d for d in self._definitions if d.get("name") != name]
        self._swap_tools(definitions, {k: v for k, v in self._tools.items() if k != name}, notify)

    def _swap_tools(
        self,
        definitions: list[dict[str, Any]],
        tools: dict[str, ServedTool],
        notify: bool,
        share: bool = True,
    ) -> None:
        pages, first = catalog.build_pages(definitions, self.config, self._complete)
        # Swapped together between two awaits: no request sees a half-updated tool set.
        self._definitions, self._tools, self._pages, self._first_page = definitions, tools, pages, first
        if share:
            self._fanout.share_tools([d["name"] for d in definitions], notify)
        if notify and "toolsListChanged" in self._subscription_kinds:
            self._hub.publish(LIST_CHANGED["toolsListChanged"])

    def _adopt_tools(self, names: list[str], notify: bool) -> None:
        """Serve the tool set another replica changed to (fanout.py), with this process's handlers."""
        known = self._known_tools
        if missing := [name for name in names if name not in known]:
            _LOG.warning(
                "the shared tool set names tools this replica cannot serve: %s", ", ".join(missing[:20])
            )
        served = [name for name in dict.fromkeys(names) if name in known]
        self._swap_tools(
            [known[name][0] for name in served],
            {name: known[name][1] for name in served},
            notify,
            share=False,
        )

    async def open_shared_state(self) -> None:
        """Join the replicas' change fan-out when the store is shared (`run_http`, `run_stdio` and
        the ASGI lifespan call it; the first listen stream does otherwise). StoreUnavailable when
        the store cannot be reached."""
        await self._fanout.start()

    async def close_shared_state(self) -> None:
        """Leave the fan-out and release the store's connections (server shutdown)."""
        await self._fanout.close()
        await self._store.close()

    def add_method(
        self,
        method: str,
        handler: MethodHandler,
        *,
        ttl_ms: int | None = None,
        cache_scope: CacheScope | None = None,
    ) -> None:
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
        self._methods[method] = ServedMethod(
            handler, cacheable, ttl_ms if ttl_ms is not None else self.config.list_ttl_ms, cache_scope
        )

    def declare_capability(self, name: str, settings: Mapping[str, Any] | None = None) -> None:
        """Add (or update) a server capability in `server/discover`,
        e.g. `("prompts", {"listChanged": True})`."""
        self._capabilities[name] = {**self._capabilities.get(name, {}), **dict(settings or {})}
        self._rebuild_discover()

    # ---- resources, resource templates, prompts, completions (surfaces.py) --------------------

    def _surface(self, kind: Literal["resources", "prompts", "completions"]) -> Surfaces:
        """The surfaces, with `kind`'s methods served and its capability declared on first use."""
        surfaces = self._surfaces
        if surfaces is None:
            surfaces = self._surfaces = Surfaces(self.config.page_size, self.config.max_uri_length)
        if kind not in surfaces.installed:
            surfaces.installed.add(kind)
            for method, handler in surfaces.handlers(kind).items():
                self.add_method(method, handler)
            if kind == "completions":
                self.declare_capability("completions", {})
            else:
                settings: dict[str, Any] = {"listChanged": self.config.list_changed}
                if kind == "resources":
                    settings["subscribe"] = True  # legacy resources/subscribe; listen resourceSubscriptions
                self.declare_capability(kind, settings)
        return surfaces

    def _bind_surfaces(self) -> None:
        """Serve what a generated base declares: its static resources through
        `_static_resource_method_`, each template and prompt through its binding's method."""
        cls = type(self)
        declared = cls._surface_definitions_
        if not declared and not cls._prompt_bindings_ and not cls._resource_template_bindings_:
            return

        def method(name: str, what: str) -> Any:
            bound = getattr(self, name, None)
            if bound is None or not inspect.iscoroutinefunction(bound):
                raise TypeError(f"{what}: {cls.__name__}.{name} must be an async method")
            return bound

        resources = declared.get("resources", [])
        if resources:
            if cls._static_resource_method_ is None:
                raise TypeError("static resources are declared but _static_resource_method_ is not set")
            read = method(cls._static_resource_method_, "static resources")
            for definition in resources:
                self._surface("resources").add_resource(definition, read)
        templates = {t.uri_template: t for t in cls._resource_template_bindings_}
        if unknown := sorted(set(cls._raw_template_values_) - set(templates)):
            raise ValueError(f"_raw_template_values_ names templates that are not declared: {unknown}")
        for definition in declared.get("resourceTemplates", []):
            binding = templates.pop(str(definition.get("uriTemplate")), None)
            if binding is None:
                raise ValueError(f"no ResourceTemplateBinding for {definition.get('uriTemplate')!r}")
            reader = template_reader(method(binding.method, binding.uri_template), binding.params)
            raw = binding.uri_template in cls._raw_template_values_
            self._surface("resources").add_template(definition, reader, raw_values=raw)
        prompts = {p.name: p for p in cls._prompt_bindings_}
        for definition in declared.get("prompts", []):
            bound = prompts.pop(str(definition.get("name")), None)
            if bound is None:
                raise ValueError(f"no PromptBinding for prompt {definition.get('name')!r}")
            getter = prompt_getter(method(bound.method, f"prompt {bound.name!r}"), bound.params)
            self._surface("prompts").add_prompt(definition, getter)
        if templates or prompts:
            undeclared = sorted([*templates, *prompts])
            raise ValueError(f"bindings for undeclared templates or prompts: {undeclared}")
        for completion in cls._completion_bindings_:
            self.add_completion(
                completion.ref,
                completion.key,
                completion.argument,
                completer(method(completion.method, f"completion of {completion.argument!r}")),
            )

    def add_resource(
        self, definition: Mapping[str, Any], read: ResourceReader, *, notify: bool = True
    ) -> None:
        """Serve a static resource (`uri`, `name`, ...) read by `read(uri, ctx)` (surfaces.py);
        listeners get `notifications/resources/list_changed`. Declares `resources` on first use."""
        self._surface("resources").add_resource(definition, read)
        self._surfaces_changed("resources", notify)

    def add_resource_template(
        self,
        definition: Mapping[str, Any],
        read: TemplateReader,
        *,
        notify: bool = True,
        raw_values: bool = False,
    ) -> None:
        """Serve a resource template (`uriTemplate`, RFC 6570, and `name`) read by
        `read(uri, variables, ctx)`: `resources/read` of a URI no static resource has tries the
        templates in the order they were added. A `{var}` value holding `/`, `\\`, NUL or `..` once
        decoded does not match unless `raw_values` (uri_match.py)."""
        self._surface("resources").add_template(definition, read, raw_values=raw_values)
        self._surfaces_changed("resources", notify)

    def remove_resource(self, uri: str, *, notify: bool = True) -> None:
        """Stop serving a static resource (KeyError when it is not served)."""
        self._surface("resources").remove_resource(uri)
        self._surfaces_changed("resources", notify)

    def remove_resource_template(self, uri_template: str, *, notify: bool = True) -> None:
        self._surface("resources").remove_template(uri_template)
        self._surfaces_changed("resources", notify)

    def add_prompt(self, definition: Mapping[str, Any], get: PromptHandler, *, notify: bool = True) -> None:
        """Serve a prompt (`name`, `arguments`) answered by `get(arguments, ctx)` (surfaces.py);
        listeners get `notifications/prompts/list_changed`. Declares `prompts` on first use."""
        self._surface("prompts").add_prompt(definition, get)
        self._surfaces_changed("prompts", notify)

    def remove_prompt(self, name: str, *, notify: bool = True) -> None:
        self._surface("prompts").remove_prompt(name)
        self._surfaces_changed("prompts", notify)

    def add_completion(
        self, ref: Literal["prompt", "resource"], key: str, argument: str, complete: CompletionHandler
    ) -> None:
        """Answer `completion/complete` for one argument of a prompt (`ref="prompt"`, `key` its name)
        or one variable of a resource template (`ref="resource"`, `key` its uriTemplate) with
        `complete(value, context, ctx)`. Declares `completions` on first use."""
        surfaces = self._surfaces
        if surfaces is None:
            raise ValueError(f"completion for {argument!r}: {key!r} is not served")
        surfaces.add_completion(ref, key, argument, complete)
        self._surface("completions")

    def _surfaces_changed(self, kind: Literal["resources", "prompts"], notify: bool) -> None:
        """Share the new set with the other replicas (replicas.py) and tell this one's listeners."""
        surfaces = self._surfaces
        assert surfaces is not None
        self._fanout.share_surfaces(surfaces.keys(), kind if notify else None)
        flag = f"{kind}ListChanged"
        if notify and flag in self._subscription_kinds:
            self._hub.publish(LIST_CHANGED[flag])

    def _adopt_surfaces(self, keys: dict[str, list[str]], notify: str | None) -> None:
        """Serve the resources, templates and prompts another replica changed to, with this
        process's handlers (those it never had are logged and not served)."""
        surfaces = self._surfaces
        if surfaces is None:
            return
        if missing := surfaces.adopt(keys):
            _LOG.warning(
                "the shared resources and prompts name some this replica cannot serve: %s",
                ", ".join(missing[:20]),
            )
        flag = f"{notify}ListChanged"
        if notify is not None and flag in self._subscription_kinds:
            self._hub.publish(LIST_CHANGED[flag])

    @property
    def surfaces(self) -> Surfaces | None:
        """The resources, templates and prompts served (None until one is added)."""
        return self._surfaces

    def _serves_resource(self, uri: str) -> bool:
        surfaces = self._surfaces
        return surfaces is not None and "resources" in surfaces.installed and surfaces.serves(uri)

    async def may_subscribe(self, uri: str, principal: Any) -> bool:
        """Whether `principal` (what authentication established, as `ctx.principal`; None when
        anonymous) may have `notifications/resources/updated` for `uri`, a URI this server serves:
        asked for each `resources/subscribe` and each URI of a `subscriptions/listen` filter. Default:
        yes, as for reads — whoever may call the server may read every resource it serves. A server
        whose readers refuse some principals overrides this with the same rule; a refusal answers
        like an unknown resource (listen: the URI is left out of the acknowledgment)."""
        return True

    @property
    def subscribe_rules(self) -> SubscribeRules:
        """Which resource URIs a client may subscribe to, and how many (resource_subscriptions.py)."""
        return self._subscribe_rules

    def notify_list_changed(self, kind: Literal["tools", "prompts", "resources"] = "tools") -> int:
        """Send `notifications/<kind>/list_changed` to the listen streams that asked for it
        (SUB-01, TOOLS-05); returns how many. Nothing is sent unless `<kind>.listChanged` is declared."""
        flag = f"{kind}ListChanged"
        if flag not in self._subscription_kinds:
            _LOG.debug("%s not declared: no notification sent", flag)
            return 0
        self._fanout.announce("list", kind)
        return self._hub.publish(LIST_CHANGED[flag])

    def notify_resource_updated(self, uri: str) -> int:
        """Send `notifications/resources/updated` to the listen streams subscribed to `uri`."""
        if "resourceSubscriptions" not in self._subscription_kinds:
            return 0
        self._fanout.announce("resource", uri)
        return self._hub.publish_resource_updated(uri)

    @property
    def probes(self) -> Probes:
        """The liveness and readiness probes the HTTP transport serves (health.py)."""
        return self._probes

    def add_readiness_check(self, name: str, check: ReadinessCheck) -> None:
        """Make `GET /readyz` (`ServerConfig.ready_path`) also await `check()`: the replica is
        unready while it raises, returns False or exceeds `ready_timeout_s` (a shared store's ping)."""
        self._probes.add(name, check)

    def close_subscriptions(self) -> None:
        """End every listen stream gracefully: each gets its final response (SUB-07). Servers call
        this on shutdown."""
        self._hub.close_all()

    # ---- one message --------------------------------------------------------------------

    async def handle_message(
        self, message: Any, request: IncomingRequest | None = None, *, _in_span: bool = False
    ) -> Outcome:
        """Validate and answer one parsed JSON-RPC message (see the module docstring for the order).

        With telemetry active (telemetry.py) a request is answered inside a SERVER span: `_traced`
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
            params = _NO_ARGS
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
        try:
            if method == "tools/call":
                result = await self._call_tool(id_, params, meta, version, capabilities, request)
            elif method == "tools/list":
                result = self._list_tools(params)
            elif method == "server/discover":
                result = self._discover
            elif method == "subscriptions/listen":
                if self._store.shared and not self._fanout.active:
                    await self._fanout.start()  # changes made on other replicas reach this stream
                principal = request.principal
                return await listen(
                    self._hub,
                    self._subscription_kinds,
                    id_,
                    params,
                    request,
                    keepalive_s=self.config.keepalive_s,
                    meta=self._result_meta,
                    admit=lambda uris: self._subscribe_rules.admit(uris, principal),
                    # Streams per principal; an anonymous client's per connection (its stream sink).
                    owner=("principal", principal_id(self.config.auth, principal))
                    if principal is not None
                    else ("connection", request.notify),
                )
            else:
                entry = self._methods.get(method)
                if entry is None:
                    return self._fail(id_, method, jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")
                result = await self._call_method(
                    entry, id_, method, params, meta, version, capabilities, request
                )
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
        """`handle_message` inside a SERVER span and a duration measurement (telemetry.py)."""
        meta = params.get("_meta")
        version = meta.get(PROTOCOL_VERSION_KEY) if type(meta) is dict else None
        span = telemetry.ServerSpan(
            otel,
            method,
            id_,
            params,
            transport=request.transport,
            protocol_version=version if type(version) is str else None,
            headers=request.headers,
            redact=self._redacted_paths(method, params),
        )
        try:
            outcome = await self.handle_message(message, request, _in_span=True)
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
                return rate_limited_result(name, wait, self._result_meta)
        elif self._shared_limit is not None:
            limit = self._shared_limit
            wait = await self._store.take_token(
                bucket_key(self.config.auth, request),
                rate=limit.rate,
                burst=limit.burst,
                ttl_s=limit.burst / limit.rate + 1.0,
            )
            if wait:
                return rate_limited_result(name, wait, self._result_meta)
        arguments = params.get("arguments")
        if arguments is None:
            arguments = _NO_ARGS
        elif type(arguments) is not dict:
            raise RpcError(jsonrpc.INVALID_PARAMS, "params.arguments must be an object")
        if (
            request.headers is not None and tool.header_params and request.channel is None
        ):  # legacy: no Mcp-Param-*
            problem = check_param_headers(tool.header_params, arguments, request.headers)
            if problem is not None:
                raise RpcError(jsonrpc.HEADER_MISMATCH, problem)

        issue = tool.validate_input(arguments)  # SEC-01
        if issue is not None:
            return error_result(f"Invalid arguments for tool {name!r} {issue.describe()}", self._result_meta)
        for path in tool.integer_paths:  # XHDR-07: header-mirrored integers must survive the trip
            value = extract(arguments, path)
            if isinstance(value, int) and abs(value) > MAX_SAFE_INTEGER:
                pointer = "/" + "/".join(path)
                return error_result(
                    f"Invalid arguments for tool {name!r} at {pointer}: integer outside ±(2^53-1)",
                    self._result_meta,
                )
        args: Any = arguments
        if tool.models is not None:  # a generated package's models: imported on the first call
            tool.resolve()
        if tool.input_model is not None:
            try:
                parse = tool.parse_input
                if parse is None:
                    # Generated models defer building their validator (fast imports): the first
                    # call builds it; later calls skip model_validate's Python wrapper. Lax: the
                    # models are strict for Python callers, but these are JSON values the schema
                    # has already passed (arrays become tuples).
                    args = tool.input_model.model_validate(arguments, strict=False)
                    tool.parse_input = tool.input_model.__pydantic_validator__.validate_python
                else:
                    args = parse(arguments, strict=False)
            except ValidationError as exc:
                pointer, why = first_error(exc, arguments)
                return error_result(
                    f"Invalid arguments for tool {name!r} at {pointer}: {why}", self._result_meta
                )

        ctx = ToolContext._for_request(
            request,
            request_id=id_,
            method="tools/call",
            meta=meta,
            protocol_version=version,
            client_capabilities=capabilities,
            progress_interval=self._progress_interval,
        )
        ctx.tool_name = name
        if "inputResponses" in params or "requestState" in params:  # an MRTR retry: the slow path
            await self._resume_round(ctx, "tools/call", params, request)
        try:
            value = await tool.handler(args, ctx)
        except InputRequired as ask:
            ended = self._end_round(
                ask,
                "tools/call",
                params,
                request,
                f"tool {name!r}",
                single_use=name in self._single_use_tools,
            )
            if ended is None:
                return error_result(
                    f"Tool {name!r} failed with an internal error (requestState)", self._result_meta
                )
            return ended
        except ToolExecutionError as exc:
            return error_result(str(exc) or f"Tool {name!r} failed", self._result_meta)
        except NotImplementedError:
            return error_result(f"Tool {name!r} is not implemented", self._result_meta)
        except RpcError:
            raise
        except Exception as exc:
            # Details stay in the server log; the model gets a short, safe message (SEC-04).
            _LOG.exception("tool %r raised", name)
            return error_result(
                f"Tool {name!r} failed with an internal error ({type(exc).__name__})", self._result_meta
            )
        finally:
            ctx.close()
        return shape_result(tool, value, self._result_meta)

    async def _call_method(
        self,
        entry: ServedMethod,
        id_: jsonrpc.RequestId,
        method: str,
        params: dict[str, Any],
        meta: dict[str, Any],
        version: str,
        capabilities: dict[str, Any],
        request: IncomingRequest,
    ) -> dict[str, Any]:
        ctx = RequestContext._for_request(
            request,
            request_id=id_,
            method=method,
            meta=meta,
            protocol_version=version,
            client_capabilities=capabilities,
            progress_interval=self._progress_interval,
        )
        if method in MRTR_METHODS and ("inputResponses" in params or "requestState" in params):
            await self._resume_round(ctx, method, params, request)
        try:
            value = await entry.handler(params, ctx)
        except InputRequired as ask:
            ended = self._end_round(ask, method, params, request, method)
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

    # ---- input-required rounds (input_requests.py) ----------------------------------------

    def _codec(self) -> StateCodec:
        codec = self._state_codec
        if codec is None:
            cfg = self.config
            codec = self._state_codec = StateCodec.from_config(
                cfg.state_secrets, ttl_s=cfg.state_ttl_s, max_bytes=cfg.max_state_bytes
            )
        return codec

    async def _resume_round(
        self, ctx: RequestContext, method: str, params: Mapping[str, Any], request: IncomingRequest
    ) -> None:
        single_use = resume_round(
            ctx,
            method,
            params,
            codec=self._codec,
            principal_id=principal_id(self.config.auth, request.principal),
        )
        if single_use is not None:  # MRTR-11: the first redemption anywhere wins
            nonce, expires_ms = single_use
            ttl_s = max(1.0, expires_ms / 1000 - time.time() + 60.0)  # outlives the state (clock skew)
            if not await self._store.claim("used:" + nonce, ttl_s):
                _LOG.info("rejected requestState for %s: already redeemed", method)
                raise RpcError(
                    jsonrpc.INVALID_PARAMS,
                    "Invalid requestState: it was already used and is accepted only once; "
                    "retry the request without it",
                )

    def _end_round(
        self,
        ask: InputRequired,
        method: str,
        params: Mapping[str, Any],
        request: IncomingRequest,
        what: str,
        *,
        single_use: bool = False,
    ) -> dict[str, Any] | None:
        """The InputRequiredResult ending this round; None (logged) when the handler's state
        cannot be sealed (not JSON, or too large: a handler bug)."""
        try:
            return input_required_result(
                ask,
                method,
                params,
                codec=self._codec(),
                principal_id=principal_id(self.config.auth, request.principal),
                meta=self._result_meta,
                single_use=single_use,
            )
        except (TypeError, ValueError):
            _LOG.exception("%s: cannot build its requestState", what)
            return None

    # ---- rate limiting ------------------------------------------------------------------

    def _caller_key(self, request: IncomingRequest) -> Hashable:
        principal = request.principal
        if principal is not None:
            return ("principal", principal_id(self.config.auth, principal))
        return ("peer", request.peer)
