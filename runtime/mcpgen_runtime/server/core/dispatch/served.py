"""What a server serves: its set-up, the tool set, methods, capabilities and surfaces, and
their run-time changes. `Dispatcher` (router.py) answers messages over it.

Everything per tool (validators, header tables, list pages, the discover result) is built once
when the server is made (catalog.py), so the per-message path is dict lookups. The modules of
this package share `ServedSet`'s slots: router.py, tool_call.py and rounds.py read them.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from ...._version import LEGACY_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS
from ....protocol.meta import SERVER_INFO_KEY
from ....protocol.tasks import EXTENSION as TASKS_EXTENSION
from ....protocol.tasks import TASK_METHODS
from ....tools import ToolSpec, tool_table
from ...store import Store
from .. import catalog
from ..catalog import MethodHandler, ServedMethod, ServedTool, ToolHandler
from ..config import CacheScope, ServerConfig, ToolBinding
from ..health import Probes, ReadinessCheck
from ..listen import LIST_CHANGED, TASK_IDS, SubscriptionHub
from ..ratelimit import RateLimiter
from ..replicas import Fanout, resolve_store
from ..request_state import StateCodec, configured_keys
from ..resources.bindings import (
    CompletionBinding,
    PromptBinding,
    ResourceTemplateBinding,
    completer,
    prompt_getter,
    template_reader,
)
from ..resources.resource_subscriptions import SubscribeRules
from ..resources.surfaces import (
    CompletionHandler,
    PromptHandler,
    ResourceReader,
    Surfaces,
    TemplateReader,
)
from ..results import complete
from ..skills.folder import Skill, load_skills
from ..skills.serving import EXTENSION as SKILLS_EXTENSION
from ..skills.serving import SkillMethods
from ..tasks.watch import TaskWatch
from ..tasks.worker import TaskEngine

# Same shape as results.py's head (duplicates): an import list, __all__ and the logger; nothing to share.
__all__ = ["BUILTIN_METHODS", "CACHEABLE_METHODS", "REMOVED_METHODS", "ServedSet"]

_LOG = logging.getLogger("mcpgen.server")

# Methods of earlier revisions that this one removed: answered like unknown methods
# (RULES.md conformance §4.11).
REMOVED_METHODS = frozenset(
    {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
)
# Served by the dispatcher itself; `add_method` cannot take them over.
BUILTIN_METHODS = frozenset(
    {"tools/call", "tools/list", "server/discover", "subscriptions/listen", *TASK_METHODS}
)
# Complete results of these carry ttlMs and cacheScope (CACHE-01).
CACHEABLE_METHODS = frozenset(
    {"prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)


class ServedSet:
    """The served tools and methods (`Dispatcher` answers messages over them: router.py).

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
        "_skills",
        "_state_codec",
        "_store",
        "_subscribe_rules",
        "_subscription_kinds",
        "_supported",
        "_supported_list",
        "_surfaces",
        "_task_watch",
        "_tasks",
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
    # A folder of skills to serve (SEP-2640), relative to the directory of the module that sets it
    # (handlers.py: the package); `ServerConfig.skills` (`--skills DIR`) overrides it.
    _skills_: ClassVar[str | None] = None

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
            max_count=cfg.legacy_sessions.max_resource_subscriptions,
            max_bytes=cfg.legacy_sessions.max_resource_subscription_bytes,
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
        self._tasks = TaskEngine(self._store, cfg.tasks)
        self._task_watch = TaskWatch(
            self._store,
            self._tasks.ledger,
            self._hub,
            refresh_s=cfg.tasks.lease_s,
            max_ids=cfg.tasks.max_listen_tasks,
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
        self._skills: SkillMethods | None = None
        self._rebuild_discover()
        self._bind_surfaces()
        folder = self._skills_folder()
        if folder is not None:
            self.serve_skills(folder)

    def _rebuild_discover(self) -> None:
        cfg = self.config
        discover: dict[str, Any] = {
            "supportedVersions": list(SUPPORTED_PROTOCOL_VERSIONS),
            "capabilities": {name: dict(settings) for name, settings in self._capabilities.items()},
        }
        # Tasks are an extension: nothing else task-related is a capability (any tool may run as one).
        capabilities = discover["capabilities"]
        capabilities["extensions"] = {**capabilities.get("extensions", {}), TASKS_EXTENSION: {}}
        if self._skills is not None:  # 2026-07-28 only: legacy capabilities have no `extensions`
            capabilities["extensions"][SKILLS_EXTENSION] = {"directoryRead": True}
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
        kinds.add(TASK_IDS)  # the tasks extension, always announced: notifications/tasks
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

    async def finish_tasks(self, timeout: float) -> bool:
        """Shutdown: wait up to `timeout` seconds for this process's tasks to end; True when none
        runs any more (`close_shared_state` fails those still running)."""
        return await self._tasks.finish(timeout)

    async def close_shared_state(self) -> None:
        """Leave the fan-out and release the store's connections (server shutdown)."""
        await self._tasks.close()
        await self._task_watch.close()
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

    # ---- skills (skills/) ---------------------------------------------------------------------

    def _skills_folder(self) -> Path | None:
        if self.config.skills is not None:
            return Path(self.config.skills)
        declared = type(self)._skills_
        if declared is None:
            return None
        owner = next(k for k in type(self).__mro__ if "_skills_" in vars(k))
        module_file = getattr(sys.modules.get(owner.__module__), "__file__", None)
        return (Path(module_file).parent if module_file else Path.cwd()) / declared

    def serve_skills(self, folder: str | os.PathLike[str]) -> None:
        """Serve the skills in `folder` (the `io.modelcontextprotocol/skills` extension, 2026-07-28):
        `skills/list`, `skills/get`, `resources/directory/read`, each file through `resources/read`
        (each SKILL.md in `resources/list`). The folder is read and checked now (skills/folder.py):
        `SkillError` (a ValueError) names the path and the rule when it cannot be served. Once per
        server; `ServerConfig.skills` or the class's `_skills_` call it when the server is made."""
        if self._skills is not None:
            raise ValueError(f"skills are served already, from {self._skills.folder.root}")
        cfg = self.config
        skills = SkillMethods(
            load_skills(folder, max_uri_length=cfg.max_uri_length), cfg.page_size, cfg.max_uri_length
        )
        resources = self._surface("resources")
        listed = {skill.uri: skill.resource() for skill in skills.folder.skills.values()}
        for uri, file in skills.folder.files.items():
            resources.add_resource(listed.get(uri) or file.resource(), skills.read, listed=uri in listed)
        for method, handler in skills.handlers().items():
            # The entries are the same for every caller until the server restarts: cacheable as lists are.
            self.add_method(
                method, handler, ttl_ms=None if method.startswith("resources/") else cfg.list_ttl_ms
            )
        self._skills = skills
        self._rebuild_discover()

    @property
    def served_skills(self) -> Mapping[str, Skill]:
        """The skills served, by the URI of their SKILL.md (empty when none are)."""
        return self._skills.folder.skills if self._skills is not None else {}

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
