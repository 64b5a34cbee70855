"""The server's catalog, built once: one `ServedTool` per tool (its handler, compiled validators
and header table) and the prebuilt `tools/list` pages; `ServedMethod` for methods added with
`ToolServer.add_method`.

Everything here runs when the server is built or its tool set changes, never per message.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from ... import _json
from ...protocol.xheader import HeaderParam
from ...schema import SchemaCompileError, Validate, compile_schema
from ...tools import ToolSpec, tool_table
from .config import CacheScope, ServerConfig, ToolBinding
from .context import RequestContext, ToolContext

__all__ = [
    "MethodHandler",
    "ServedMethod",
    "ServedTool",
    "ToolHandler",
    "bind_tools",
    "build_pages",
    "definitions_with",
    "make_tool",
]

# A tool implementation: (validated arguments — the input model, or the dict for tools added
# without one — and the context) -> the handler's return value.
ToolHandler = Callable[[Any, ToolContext], Awaitable[Any]]
# An extra method: (params as sent, context) -> the result object (resultType/_meta are added).
MethodHandler = Callable[[dict[str, Any], RequestContext], Awaitable[dict[str, Any]]]


@dataclass(slots=True)
class ServedTool:
    spec: ToolSpec
    handler: ToolHandler
    input_model: type[BaseModel] | None  # None: the handler gets the arguments dict
    output_model: type[BaseModel] | None
    output_is_root: bool
    validate_input: Validate
    validate_output: Validate | None
    header_params: tuple[tuple[HeaderParam, str], ...]  # (param, lower-case header name)
    integer_paths: tuple[tuple[str, ...], ...] = field(default=())  # header params of type integer
    parse_input: Callable[..., Any] | None = None  # input_model's validate_python, once pydantic has built it
    # Models named in a module (a generated package's models.py), looked up by `resolve` on the
    # tool's first call; None once looked up, or when the models were given as classes.
    models: ModuleType | None = None
    model_names: tuple[str | None, str | None] = (None, None)
    # `execution.taskSupport` of the definition: "optional" or "required" (a task when the client
    # declared the extension), None (inline unless the handler asks: `ctx.run_as_task`).
    task_support: str | None = None

    def resolve(self) -> None:
        """Look up the models given by name: their module is imported (and the classes created)
        on the tool's first call, not when the server starts."""
        models, (input_name, output_name) = self.models, self.model_names
        if models is not None:
            if input_name is not None:
                self.input_model = getattr(models, input_name)
            if output_name is not None:
                self.output_model = getattr(models, output_name)
            self.models = None


@dataclass(frozen=True, slots=True)
class ServedMethod:
    handler: MethodHandler
    cacheable: bool
    ttl_ms: int
    cache_scope: CacheScope | None  # None: the config's list scope, "private" for authenticated callers


def make_tool(
    spec: ToolSpec,
    handler: ToolHandler,
    input_model: type[BaseModel] | None,
    output_model: type[BaseModel] | None,
    output_is_root: bool,
    *,
    output_named: bool = False,
) -> ServedTool:
    name = spec.name
    if (output_model is not None or output_named) and spec.output_schema is None:
        raise ValueError(f"tool {name!r}: binding has an output_model but the tool has no outputSchema")
    try:
        validate_input = compile_schema(spec.input_schema)
        validate_output = compile_schema(spec.output_schema) if spec.output_schema is not None else None
    except SchemaCompileError as exc:
        raise ValueError(f"tool {name!r}: {exc}") from exc
    execution = spec.definition.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    if support not in (None, "forbidden", "optional", "required"):
        raise ValueError(f"tool {name!r}: execution.taskSupport must be forbidden, optional or required")
    return ServedTool(
        spec=spec,
        handler=handler,
        input_model=input_model,
        output_model=output_model,
        output_is_root=output_is_root,
        validate_input=validate_input,
        validate_output=validate_output,
        header_params=tuple((p, p.header.lower()) for p in spec.header_params),
        integer_paths=tuple(p.path for p in spec.header_params if p.type == "integer"),
        task_support=support if support in ("optional", "required") else None,
    )


def bind_tools(
    server: object,
    definitions: list[dict[str, Any]],
    bindings: tuple[ToolBinding, ...],
    models: ModuleType | None = None,
) -> dict[str, ServedTool]:
    """Every listed tool with the async method of `server` its binding names; a listed tool
    without a binding, a binding without a tool, or a method that is not async is an error.
    Models a binding names (`str`) are looked up in `models` on the tool's first call."""
    specs = tool_table(definitions)
    by_name: dict[str, ToolBinding] = {}
    for binding in bindings:
        if binding.name in by_name:
            raise ValueError(f"two bindings for tool {binding.name!r}")
        by_name[binding.name] = binding
    if unbound := [name for name in specs if name not in by_name]:
        raise ValueError(f"no ToolBinding for listed tools: {', '.join(unbound)}")
    if unlisted := [name for name in by_name if name not in specs]:
        raise ValueError(f"ToolBindings for tools that are not listed: {', '.join(unlisted)}")
    tools: dict[str, ServedTool] = {}
    for name, spec in specs.items():
        binding = by_name[name]
        handler = getattr(server, binding.method, None)
        if handler is None or not inspect.iscoroutinefunction(handler):
            raise TypeError(
                f"tool {name!r}: {type(server).__name__}.{binding.method} must be an async method"
            )
        input_model, output_model = binding.input_model, binding.output_model
        named = isinstance(input_model, str) or isinstance(output_model, str)
        if named and models is None:
            raise TypeError(f"tool {name!r}: a binding naming its models needs the server's _tool_models_")
        tool = make_tool(
            spec,
            handler,
            None if isinstance(input_model, str) else input_model,
            None if isinstance(output_model, str) else output_model,
            binding.output_is_root,
            output_named=isinstance(output_model, str),
        )
        if named:
            tool.models = models
            tool.model_names = (
                input_model if isinstance(input_model, str) else None,
                output_model if isinstance(output_model, str) else None,
            )
        tools[name] = tool
    return tools


def _cursor(offset: int, digest: str) -> str:
    return base64.urlsafe_b64encode(f"{offset}.{digest}".encode()).decode().rstrip("=")


Page = dict[str, Any]


def build_pages(
    definitions: list[dict[str, Any]], config: ServerConfig, complete: Callable[[Page], Page]
) -> tuple[dict[str, Page], Page]:
    """Every tools/list page, prebuilt, as (pages by cursor, first page); `complete` stamps each.

    Cursors are opaque and stable for one tool set (PAGE-02): urlsafe Base64 of
    `<offset>.<digest>`; the digest of the definitions makes cursors from another tool set
    invalid rather than silently misaligned (CACHE-17).
    """
    digest = hashlib.sha256(_json.dumps(definitions)).hexdigest()[:12]
    size = config.page_size or max(len(definitions), 1)
    pages: dict[str, Page] = {}
    first: Page | None = None
    for offset in range(0, max(len(definitions), 1), size):
        page: Page = {"tools": [_listed(d) for d in definitions[offset : offset + size]]}
        if offset + size < len(definitions):
            page["nextCursor"] = _cursor(offset + size, digest)
        # CACHE-01/CACHE-18: every page carries the hints, with one scope for the whole list.
        page["ttlMs"] = config.list_ttl_ms
        page["cacheScope"] = config.list_cache_scope
        page = complete(page)
        if offset == 0:
            first = page
        else:
            pages[_cursor(offset, digest)] = page
    assert first is not None
    return pages, first


def _listed(definition: dict[str, Any]) -> dict[str, Any]:
    """A definition as the 2026-07-28 tools/list shows it: its Tool has no `execution` (task
    support is decided per call; only 2025-11-25 sessions see it)."""
    if "execution" not in definition:
        return definition
    return {key: value for key, value in definition.items() if key != "execution"}


def definitions_with(definitions: list[dict[str, Any]], definition: dict[str, Any]) -> list[dict[str, Any]]:
    """The listing with `definition` in place of the tool of the same name, else at the end."""
    name = definition.get("name")
    if any(d.get("name") == name for d in definitions):
        return [definition if d.get("name") == name else d for d in definitions]
    return [*definitions, definition]
