"""Resources, resource templates, prompts and completions: what a server serves beside its tools.

`Surfaces` keeps them for one `Dispatcher` and answers their methods, which the dispatcher serves
through its `add_method` path (so results get `resultType`, `serverInfo` and caching hints, and
`prompts/get` and `resources/read` may ask for client input, MRTR-02; legacy sessions get the
same answers shaped for their revision):

    resources/list, resources/templates/list   the definitions, paginated (opaque cursors; RES-01)
    resources/read                             a static resource by its exact URI, else the first
                                               template whose RFC 6570 pattern matches (uri_match.py;
                                               RES-03, RES-05); a URI over `max_uri_length`: -32602
    prompts/list, prompts/get                  required arguments checked, strings only (PROMPT-03)
    completion/complete                        per (prompt | template, argument) handler (PROMPT-06/07)

Definitions are checked when they are added (a bad one raises ValueError: a server does not start
with it): a resource needs a string `uri` and `name`, a template a `uriTemplate` that compiles and a
`name`, a prompt a `name` and `arguments` with distinct string names. The definitions are served as
data, exactly as given.

Handlers and what they return:

    read(uri, ctx)                     static resources
    read(uri, variables, ctx)          templates; variables percent-decoded (str, or list[str] when exploded);
                                       a `{var}` value with `/`, `\\`, NUL or `..` never arrives unless the
                                       template was added with `raw_values=True` (uri_match.py)
    get(arguments, ctx)                prompts; arguments: dict[str, str], required ones present
    complete(value, context, ctx)      completions; context: the other arguments already chosen

A reader returns `str` (text), `bytes` (a blob, base64 on the wire), a `ResourceContents`, a
contents dict (`uri` plus `text` or `blob`), or a list of these; the resource's `mimeType` is added
when the reader gives none. It raises `ResourceNotFound` for a URI it does not have: the client gets
`-32602` with `data.uri` (2026-07-28) or `-32002` (the legacy revisions), as it does for a URI
nothing serves, and as for `PathEscapeError` (safe_join refusing the variables); an empty `contents`
is never sent for that (RES-04, ERR-04). A prompt returns `str` (one user text message), a content
block, a message dict (`role`, `content`), a list of those, or a whole `GetPromptResult` dict. A
completion returns a list of strings (the first 100 are sent, `hasMore` set when there were more) or
a `completion` dict. `NotImplementedError` (a generated stub) answers `-32603` "not implemented",
except for completions, which then offer nothing.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from .... import _json
from ...._version import LEGACY_PROTOCOL_VERSIONS
from ....protocol import jsonrpc
from ..context import RequestContext
from ..handler_errors import RpcError
from ..limits import MAX_URI_LENGTH
from .safe_paths import PathEscapeError
from .uri_match import UriPattern, Variables, check_uri_length

__all__ = [
    "COMPLETION_LIMIT",
    "CompletionHandler",
    "CompletionReturn",
    "PromptHandler",
    "PromptReturn",
    "ResourceNotFound",
    "ResourceReader",
    "ResourceReturn",
    "Surfaces",
    "TemplateReader",
    "listing_digest",
    "page_of",
    "resource_not_found",
]

_LOG = logging.getLogger("mcpgen.server")

# What handlers return (the module docstring says how each is sent).
_Contents = str | bytes | BaseModel | Mapping[str, Any]
ResourceReturn = _Contents | Sequence[_Contents]
_Message = str | BaseModel | Mapping[str, Any]
PromptReturn = _Message | Sequence[_Message]
CompletionReturn = Sequence[str] | Mapping[str, Any]

ResourceReader = Callable[[str, RequestContext], Awaitable[Any]]
TemplateReader = Callable[[str, Variables, RequestContext], Awaitable[Any]]
PromptHandler = Callable[[dict[str, str], RequestContext], Awaitable[Any]]
CompletionHandler = Callable[[str, dict[str, str], RequestContext], Awaitable[Any]]
Kind = Literal["resources", "prompts", "completions"]

# At most this many values in one completion result (the spec's maximum).
COMPLETION_LIMIT = 100
_ROLES = frozenset({"user", "assistant"})


class ResourceNotFound(Exception):
    """Raise from a resource reader for a URI it does not have (see the module docstring)."""

    def __init__(self, uri: str) -> None:
        super().__init__(f"Resource not found: {uri}")
        self.uri = uri


# ---- checks of definitions (at start) -------------------------------------------------------------


def _string(definition: Mapping[str, Any], key: str, what: str) -> str:
    value = definition.get(key)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} needs a non-empty string {key!r}")
    return value


def _async(handler: Any, what: str) -> None:
    if not inspect.iscoroutinefunction(handler):
        raise TypeError(f"{what}: the handler must be an async function")


def _prompt_arguments(definition: Mapping[str, Any], name: str) -> tuple[list[str], frozenset[str]]:
    arguments = definition.get("arguments", [])
    if not isinstance(arguments, list):
        raise ValueError(f"prompt {name!r}: arguments must be an array")
    names: list[str] = []
    required: set[str] = set()
    for argument in arguments:
        if not isinstance(argument, dict):
            raise ValueError(f"prompt {name!r}: each argument must be an object")
        arg = _string(argument, "name", f"an argument of prompt {name!r}")
        if arg in names:
            raise ValueError(f"prompt {name!r} has two arguments named {arg!r}")
        if argument.get("required", False) not in (True, False):
            raise ValueError(f"prompt {name!r}: argument {arg!r}: required must be a boolean")
        names.append(arg)
        if argument.get("required") is True:
            required.add(arg)
    return names, frozenset(required)


@dataclass(slots=True)
class _Resource:
    definition: dict[str, Any]
    read: ResourceReader


@dataclass(slots=True)
class _Template:
    definition: dict[str, Any]
    pattern: UriPattern
    read: TemplateReader


@dataclass(slots=True)
class _Prompt:
    definition: dict[str, Any]
    arguments: list[str]
    required: frozenset[str]
    get: PromptHandler


# ---- results ---------------------------------------------------------------------------------------


def _contents(value: Any, uri: str, mime_type: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list | tuple) else [value]
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            entry: dict[str, Any] = {"uri": uri, "text": item}
        elif isinstance(item, bytes | bytearray):
            entry = {"uri": uri, "blob": base64.b64encode(bytes(item)).decode("ascii")}
        elif isinstance(item, BaseModel):
            entry = item.model_dump(by_alias=True, exclude_none=True, mode="json")
        elif isinstance(item, Mapping):
            entry = dict(item)
        else:
            raise TypeError(f"a resource reader returned {type(item).__name__}")
        if not isinstance(entry.get("uri"), str):
            entry["uri"] = uri
        if not isinstance(entry.get("text"), str) and not isinstance(entry.get("blob"), str):
            raise TypeError("resource contents need a string text or blob")
        if "mimeType" not in entry and isinstance(mime_type, str):
            entry["mimeType"] = mime_type
        out.append(entry)
    if not out:
        raise TypeError("a resource reader returned no contents (raise ResourceNotFound instead)")
    return out


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return {"role": "user", "content": {"type": "text", "text": item}}
    if isinstance(item, BaseModel):
        return {"role": "user", "content": item.model_dump(by_alias=True, exclude_none=True, mode="json")}
    if isinstance(item, Mapping):
        if "role" in item:
            message = dict(item)
            if message["role"] not in _ROLES:
                raise TypeError(f"a prompt message has role {message['role']!r}")
            content = message.get("content")
            if isinstance(content, BaseModel):
                message["content"] = content.model_dump(by_alias=True, exclude_none=True, mode="json")
            elif isinstance(content, str):
                message["content"] = {"type": "text", "text": content}
            elif not isinstance(content, Mapping):
                raise TypeError("a prompt message needs content")
            return message
        if "type" in item:  # a bare content block
            return {"role": "user", "content": dict(item)}
    raise TypeError(f"a prompt handler returned {type(item).__name__}")


def _prompt_result(value: Any, description: Any) -> dict[str, Any]:
    if isinstance(value, Mapping) and "messages" in value:
        result = dict(value)
        result["messages"] = [_message(m) for m in value["messages"]]
    else:
        items = value if isinstance(value, list | tuple) else [value]
        result = {"messages": [_message(m) for m in items]}
    if "description" not in result and isinstance(description, str):
        result["description"] = description
    return result


def _completion(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        completion = dict(value.get("completion", value))
        values = completion.get("values", [])
    else:
        completion, values = {}, value
    values = [v for v in values if isinstance(v, str)] if isinstance(values, Iterable) else []
    if len(values) > COMPLETION_LIMIT:
        completion["total"] = completion.get("total", len(values))
        completion["hasMore"] = True
        values = values[:COMPLETION_LIMIT]
    completion["values"] = values
    return {"completion": completion}


def _cursor(offset: int, digest: str) -> str:
    return base64.urlsafe_b64encode(f"{offset}.{digest}".encode()).decode().rstrip("=")


def listing_digest(items: list[dict[str, Any]]) -> str:
    """What a listing's cursors carry, so a cursor of another listing (or an older one) is refused."""
    return hashlib.sha256(_json.dumps(items)).hexdigest()[:12]


def page_of(
    key: str, items: list[dict[str, Any]], digest: str, params: Mapping[str, Any], page_size: int | None
) -> dict[str, Any]:
    """One page of `items` under `key`, from `params.cursor` (opaque; -32602 unless exactly a cursor
    this listing issued), with `nextCursor` when more follow; `page_size` None: one page."""
    offset = 0
    cursor = params.get("cursor")
    if cursor is not None:
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
            offset = int(raw.partition(".")[0])
        except (TypeError, ValueError):
            offset = -1
        # Exactly a cursor this listing issued: its offset and the digest of this listing.
        if not 0 < offset < len(items) or cursor != _cursor(offset, digest):
            raise RpcError(jsonrpc.INVALID_PARAMS, "Invalid cursor")
    size = page_size or max(len(items), 1)
    page: dict[str, Any] = {key: items[offset : offset + size]}
    if offset + size < len(items):
        page["nextCursor"] = _cursor(offset + size, digest)
    return page


def resource_not_found(uri: str, protocol_version: str) -> RpcError:
    # 2026-07-28 (SEP-2164): -32602 with data.uri; the legacy revisions: -32002.
    code = -32002 if protocol_version in LEGACY_PROTOCOL_VERSIONS else jsonrpc.INVALID_PARAMS
    return RpcError(code, "Resource not found", {"uri": uri})


class Surfaces:
    """The resources, templates, prompts and completions of one server (module docstring)."""

    __slots__ = (
        "_completions",
        "_known",
        "_listings",
        "_max_uri_length",
        "_page_size",
        "_prompts",
        "_resources",
        "_templates",
        "_unlisted",
        "installed",
    )

    def __init__(self, page_size: int | None, max_uri_length: int = MAX_URI_LENGTH) -> None:
        self.installed: set[str] = set()  # the kinds whose methods the dispatcher serves
        self._page_size = page_size
        self._max_uri_length = max_uri_length
        self._resources: dict[str, _Resource] = {}
        # Read by exact URI but not in resources/list (a skill's supporting files: skills/).
        self._unlisted: dict[str, _Resource] = {}
        self._templates: dict[str, _Template] = {}
        self._prompts: dict[str, _Prompt] = {}
        self._completions: dict[tuple[str, str, str], CompletionHandler] = {}
        self._listings: dict[str, tuple[list[dict[str, Any]], str]] = {}
        # Everything this process has served, by key: what a shared set (replicas.py) may name.
        self._known: dict[str, dict[str, Any]] = {"resources": {}, "resourceTemplates": {}, "prompts": {}}

    # ---- what is served ------------------------------------------------------------------------

    @property
    def resources(self) -> list[dict[str, Any]]:
        return [r.definition for r in self._resources.values()]

    @property
    def resource_templates(self) -> list[dict[str, Any]]:
        return [t.definition for t in self._templates.values()]

    @property
    def prompts(self) -> list[dict[str, Any]]:
        return [p.definition for p in self._prompts.values()]

    def add_resource(
        self, definition: Mapping[str, Any], read: ResourceReader, *, listed: bool = True
    ) -> None:
        """`listed` False: readable by its URI, left out of `resources/list` (and of the set replicas
        share: such resources are the same in every process, skills/ serves them)."""
        definition = dict(definition)
        uri = _string(definition, "uri", "a resource")
        _string(definition, "name", f"resource {uri!r}")
        if len(uri) > self._max_uri_length:  # no client could read it
            raise ValueError(f"resource URI {uri[:80]!r}... is over max_uri_length ({self._max_uri_length})")
        _async(read, f"resource {uri!r}")
        if not listed:
            self._unlisted[uri] = _Resource(definition, read)
            return
        self._resources[uri] = self._known["resources"][uri] = _Resource(definition, read)
        self._listings.pop("resources", None)

    def remove_resource(self, uri: str) -> None:
        del self._resources[uri]
        self._listings.pop("resources", None)

    def add_template(
        self, definition: Mapping[str, Any], read: TemplateReader, *, raw_values: bool = False
    ) -> None:
        """`raw_values`: `{var}` values reach `read` as decoded, even with `/` or `..` (uri_match.py)."""
        definition = dict(definition)
        template = _string(definition, "uriTemplate", "a resource template")
        _string(definition, "name", f"resource template {template!r}")
        _async(read, f"resource template {template!r}")
        served = _Template(definition, UriPattern(template, raw_values=raw_values), read)
        self._templates[template] = self._known["resourceTemplates"][template] = served
        self._listings.pop("resourceTemplates", None)

    def remove_template(self, uri_template: str) -> None:
        del self._templates[uri_template]
        self._listings.pop("resourceTemplates", None)

    def add_prompt(self, definition: Mapping[str, Any], get: PromptHandler) -> None:
        definition = dict(definition)
        name = _string(definition, "name", "a prompt")
        arguments, required = _prompt_arguments(definition, name)
        _async(get, f"prompt {name!r}")
        self._prompts[name] = self._known["prompts"][name] = _Prompt(definition, arguments, required, get)
        self._listings.pop("prompts", None)

    def remove_prompt(self, name: str) -> None:
        del self._prompts[name]
        self._listings.pop("prompts", None)

    def serves(self, uri: str) -> bool:
        """Whether `resources/read` of `uri` reaches a reader: a static resource or a matching template."""
        if uri in self._resources or uri in self._unlisted:
            return True
        return any(t.pattern.match(uri) is not None for t in self._templates.values())

    def variables(self, uri_template: str) -> tuple[str, ...]:
        """The variables of a served template (KeyError when it is not served)."""
        return self._templates[uri_template].pattern.variables

    def keys(self) -> dict[str, list[str]]:
        """What is served, by key and in listing order (the set replicas share)."""
        return {
            "resources": list(self._resources),
            "resourceTemplates": list(self._templates),
            "prompts": list(self._prompts),
        }

    def adopt(self, keys: Mapping[str, Sequence[str]]) -> list[str]:
        """Serve exactly `keys` (a kind left out stays as it is) from what this process has known;
        returns the keys it never had (not served)."""
        missing: list[str] = []
        for kind, current in (
            ("resources", self._resources),
            ("resourceTemplates", self._templates),
            ("prompts", self._prompts),
        ):
            wanted = keys.get(kind)
            if wanted is None:
                continue
            known = self._known[kind]
            missing += [key for key in wanted if key not in known]
            chosen = {key: known[key] for key in dict.fromkeys(wanted) if key in known}
            current.clear()
            current.update(chosen)
            self._listings.pop(kind, None)
        return missing

    def add_completion(
        self, ref: Literal["prompt", "resource"], key: str, argument: str, complete: CompletionHandler
    ) -> None:
        """Complete `argument` of the prompt named `key` (`ref` "prompt") or the variable `argument`
        of the template `key` (`ref` "resource"); both must be served already."""
        if ref == "prompt":
            prompt = self._prompts.get(key)
            if prompt is None or argument not in prompt.arguments:
                raise ValueError(f"completion for {argument!r}: prompt {key!r} has no such argument")
        elif ref == "resource":
            template = self._templates.get(key)
            if template is None or argument not in template.pattern.variables:
                raise ValueError(f"completion for {argument!r}: template {key!r} has no such variable")
        else:
            raise ValueError(f"completion ref must be 'prompt' or 'resource', not {ref!r}")
        _async(complete, f"completion of {argument!r}")
        self._completions[(ref, key, argument)] = complete

    # ---- the methods ---------------------------------------------------------------------------

    def _page(self, key: str, definitions: list[dict[str, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
        cached = self._listings.get(key)
        if cached is None:
            cached = self._listings[key] = (definitions, listing_digest(definitions))
        items, digest = cached
        return page_of(key, items, digest, params, self._page_size)

    async def list_resources(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        return self._page("resources", self.resources, params)

    async def list_templates(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        return self._page("resourceTemplates", self.resource_templates, params)

    async def list_prompts(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        return self._page("prompts", self.prompts, params)

    async def read(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(jsonrpc.INVALID_PARAMS, "params.uri must be a string")
        check_uri_length(uri, self._max_uri_length)
        try:
            resource = self._resources.get(uri) or self._unlisted.get(uri)
            if resource is not None:
                value = await resource.read(uri, ctx)
                mime_type = resource.definition.get("mimeType")
            else:
                for template in self._templates.values():
                    variables = template.pattern.match(uri)
                    if variables is not None:
                        value = await template.read(uri, variables, ctx)
                        mime_type = template.definition.get("mimeType")
                        break
                else:
                    raise ResourceNotFound(uri)
        except ResourceNotFound as exc:
            raise resource_not_found(exc.uri, ctx.protocol_version) from None
        except PathEscapeError:  # safe_join refused the variables: no such resource
            raise resource_not_found(uri, ctx.protocol_version) from None
        except NotImplementedError:
            raise RpcError(jsonrpc.INTERNAL_ERROR, f"Reading {uri!r} is not implemented") from None
        try:
            return {"contents": _contents(value, uri, mime_type)}
        except TypeError:
            _LOG.exception("the reader of %r returned what is not resource contents", uri)
            raise RpcError(jsonrpc.INTERNAL_ERROR, "Internal error in resources/read") from None

    async def get_prompt(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(jsonrpc.INVALID_PARAMS, "params.name must be a string")
        prompt = self._prompts.get(name)
        if prompt is None:
            raise RpcError(jsonrpc.INVALID_PARAMS, f"Unknown prompt: {name}", {"name": name})
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise RpcError(jsonrpc.INVALID_PARAMS, "params.arguments must be an object of strings")
        if missing := sorted(prompt.required - set(arguments)):
            raise RpcError(
                jsonrpc.INVALID_PARAMS,
                f"Prompt {name!r} needs the argument(s) {', '.join(missing)}",
                {"missing": missing},
            )
        if unknown := sorted(set(arguments) - set(prompt.arguments)):
            raise RpcError(
                jsonrpc.INVALID_PARAMS,
                f"Prompt {name!r} has no argument(s) {', '.join(unknown)[:200]}",
                {"unknown": unknown[:20]},
            )
        try:
            value = await prompt.get(dict(arguments), ctx)
        except NotImplementedError:
            raise RpcError(jsonrpc.INTERNAL_ERROR, f"Prompt {name!r} is not implemented") from None
        try:
            return _prompt_result(value, prompt.definition.get("description"))
        except TypeError:
            _LOG.exception("prompt %r returned what is not a prompt", name)
            raise RpcError(jsonrpc.INTERNAL_ERROR, "Internal error in prompts/get") from None

    async def complete(self, params: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        ref, argument = params.get("ref"), params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise RpcError(jsonrpc.INVALID_PARAMS, "params.ref and params.argument must be objects")
        arg_name, value = argument.get("name"), argument.get("value")
        if not isinstance(arg_name, str) or not isinstance(value, str):
            raise RpcError(jsonrpc.INVALID_PARAMS, "argument.name and argument.value must be strings")
        if ref.get("type") == "ref/prompt":
            key, kind = ref.get("name"), "prompt"
            prompt = self._prompts.get(key) if isinstance(key, str) else None
            if prompt is None:
                raise RpcError(jsonrpc.INVALID_PARAMS, f"Unknown prompt: {key}")
            known: Sequence[str] = prompt.arguments
        elif ref.get("type") == "ref/resource":
            key, kind = ref.get("uri"), "resource"
            template = self._templates.get(key) if isinstance(key, str) else None
            if template is None and isinstance(key, str):  # a URI rather than a template: its template
                check_uri_length(key, self._max_uri_length)
                template = next(
                    (t for t in self._templates.values() if t.pattern.match(key) is not None), None
                )
                if template is not None:
                    key = template.pattern.template
            if template is None:
                raise RpcError(jsonrpc.INVALID_PARAMS, f"Unknown resource template: {key}")
            known = template.pattern.variables
        else:
            raise RpcError(jsonrpc.INVALID_PARAMS, "ref.type must be ref/prompt or ref/resource")
        if arg_name not in known:
            raise RpcError(jsonrpc.INVALID_PARAMS, f"{key} has no argument {arg_name[:100]!r}")
        context: dict[str, str] = {}
        given = params.get("context")
        if isinstance(given, dict) and isinstance(given.get("arguments"), dict):
            context = {k: v for k, v in given["arguments"].items() if isinstance(v, str)}
        handler = self._completions.get((kind, key, arg_name))  # type: ignore[arg-type]
        if handler is None:
            return {"completion": {"values": [], "hasMore": False}}
        try:
            result = await handler(value, context, ctx)
        except NotImplementedError:
            return {"completion": {"values": [], "hasMore": False}}
        return _completion(result)

    def handlers(self, kind: Kind) -> dict[str, Callable[[dict[str, Any], RequestContext], Awaitable[Any]]]:
        """The methods serving `kind`, by method name."""
        if kind == "resources":
            return {
                "resources/list": self.list_resources,
                "resources/templates/list": self.list_templates,
                "resources/read": self.read,
            }
        if kind == "prompts":
            return {"prompts/list": self.list_prompts, "prompts/get": self.get_prompt}
        return {"completion/complete": self.complete}
