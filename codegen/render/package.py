"""RENDER: PackageIR -> {relative path: Python source} of a client or server package, already in
black's layout.

`render_client` and `render_server` build every statement from `pysource` markers: type annotations
come from `typenodes`, statements are laid out by `layout` (black's rules, black itself for the rare
statement it cannot place), so no formatter runs over whole files; the templates (`templates`) only
place blocks and fixed text. models.py is `models_module`'s; tools.json is data, written by `toolsjson`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import InternalGeneratorError
from ..model import naming
from ..model.ir import (
    ANY,
    NONE,
    DictOf,
    JsonScalar,
    ModelRef,
    PackageIR,
    ParamIR,
    ToolIR,
    TypeExpr,
    Union,
    union,
)
from ..model.surfaces import SurfacesIR
from .jobs import Render
from .models_module import render_models
from .python import black_format, layout, pysource, spelling
from .python.imports import Imports, type_names
from .python.pysource import Node, PyCode
from .python.typenodes import TypeNames, type_node
from .server_surfaces import render_server_surfaces
from .surfaces import render_resources_class, render_surface_methods
from .templates import file_header, render_template

__all__ = ["SERVER_USER_FILES", "TASK_CLASSES", "render_cli_main", "render_client", "render_server"]

# the files of a server package that are the user's once written (never overwritten)
SERVER_USER_FILES = frozenset({"handlers.py"})

_CLASS = " " * 4
_DEFAULT_CHARS = 120  # of a schema default shown in a method's docstring
_METHOD = " " * 8


# -------------------------------------------------------------------------------------------- views


@dataclass(frozen=True)
class MethodView:
    """One client method, laid out for the blocking and the asyncio class, and its task twins: its
    method of `client.start` and of `client.resume` (_tasks.py: `Start`/`AsyncStart`, `Resume`/
    `AsyncResume`)."""

    sync: PyCode
    async_: PyCode
    start_sync: PyCode
    start_async: PyCode
    resume_sync: PyCode
    resume_async: PyCode


@dataclass(frozen=True)
class HandlerView:
    method: PyCode  # `async def tool(self, args, ctx) -> ...:` with docstring and body


def _tool_text(tool: ToolIR) -> str:
    text = spelling.clean_text(tool.description or "") or spelling.clean_text(tool.title or "")
    return text or f"Call the {tool.wire_name!r} tool."


def _args_section(params: Iterable[ParamIR]) -> str:
    entries = []
    for param in params:
        text = spelling.clean_text(param.description or "")
        if param.has_default:  # documented, never sent for the caller: omitted stays omitted
            default = f"Defaults to {_default_text(param.default)} when omitted."
            if text and not text.endswith((".", "!", "?")):
                text += "."  # "Duration in seconds. Defaults to 10 …", not "seconds Defaults to"
            text = f"{text}{chr(10) if chr(10) in text else ' '}{default}" if text else default
        if not text:
            continue
        first, *rest = text.split("\n")
        entries.append(
            f"    {param.name}: {first}" + "".join(f"\n        {line}" if line else "\n" for line in rest)
        )
    return "\n\nArgs:\n" + "\n".join(entries) if entries else ""


def _task_section(tool: ToolIR) -> str:
    """What `execution.taskSupport` means for a caller of a task-capable tool (nothing otherwise)."""
    if tool.task_support is None:
        return ""
    how = (
        "the server runs every call as a task"
        if tool.task_support == "required"
        else "the server may run a call as a task"
    )
    return (
        f'\n\nTask-capable (`execution.taskSupport` "{tool.task_support}"): {how}.\n'
        f"This method waits for its result; `start.{tool.method_name}(...)` returns a handle at once."
    )


def _default_text(value: JsonScalar) -> str:
    """A schema default as JSON text for a docstring: characters that do not print escaped, long
    strings shortened."""
    text = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
        for c in json.dumps(value, ensure_ascii=False)
    )
    return text if len(text) <= _DEFAULT_CHARS else text[: _DEFAULT_CHARS - 1] + "…"


def _client_method(
    tool: ToolIR,
    names: TypeNames,
    modules: tuple[Imports, Imports],
    optional: dict[tuple[TypeExpr, str], Node],
) -> MethodView:
    """`modules`: the imports of client.py and of _tasks.py (the task twins share the method's
    annotations); `optional`: the `_optional_annotation` of each parameter type so far (both modules
    import what they name already)."""
    imports, tasks = modules

    def both(module: str, name: str) -> str:
        tasks.add(module, name)
        return imports.add(module, name)

    params: list[Node] = [pysource.code("self")]
    keyword_only: list[Node] = []
    arguments: Node
    if tool.input_root is not None:
        # A RootModel input: the whole arguments object is one parameter. A map at the root keeps
        # its type; a union at the root takes any of its object options as a model, or a dict.
        params.append(
            pysource.annotated_name(
                "arguments", type_node(_root_argument_type(tool.input_root), names, plain=True)
            )
        )
        arguments = pysource.ident("arguments")
    else:
        # One required parameter stays positional; with two or more, every parameter is
        # keyword-only, so arguments of one type cannot land in each other's places unnoticed.
        positional = sum(param.required for param in tool.params) == 1
        items: list[Node] = []
        for param in tool.params:
            annotation = type_node(param.type, names, plain=True)
            if param.required:
                node = pysource.annotated_name(param.name, annotation)
                (params if positional else keyword_only).append(node)
            else:  # UNSET: left out of the call (None is JSON null, where the type allows it)
                key = (param.type, both("mcpgen_runtime.types", "Unset"))
                cached = optional.get(key)
                if cached is None:
                    cached = optional[key] = _optional_annotation(param.type, names, key[1])
                annotation = cached
                unset = pysource.ident(both("mcpgen_runtime.types", "UNSET"))
                keyword_only.append(pysource.annotated_name(param.name, annotation, unset))
            items.append(
                pysource.seq(
                    pysource.literal(param.wire_name), pysource.code(": "), pysource.ident(param.name)
                )
            )
        arguments = pysource.brk("{", items, "}") if items else pysource.code("{}")
    if keyword_only:
        params += [pysource.code("*"), *keyword_only]
    input_model = names.qualify(tool.input_class)
    output: list[Node] = []  # the output model, and how a handle's result becomes the method's value
    if tool.output_class is None:
        returns: Node = pysource.ident(both("mcpgen_runtime.content", "ToolResult"))
        call_name, extra = "_call", [input_model]
    else:
        output_model = names.qualify(tool.output_class)
        returns = (
            type_node(tool.output_root, names, plain=True) if tool.output_root is not None else output_model
        )
        call_name, extra = "_call_structured", [input_model, output_model]
        output.append(output_model)
        if tool.output_is_root:
            output.append(_finish_root(tasks))
    doc = pysource.docstring(
        _tool_text(tool) + _task_section(tool) + _args_section(tool.params), indent=_METHOD
    )
    name = pysource.ident(tool.method_name)

    sync_header, async_header = layout.def_headers(name, params, returns, indent=_CLASS)
    target = "_result = " if tool.output_is_root else "return "
    sync_call, async_call = layout.call_statements(  # one argument list, laid out once
        [pysource.code(f"{target}self.{call_name}"), pysource.code(f"{target}await self.{call_name}")],
        pysource.brk("(", [pysource.literal(tool.wire_name), arguments, *extra], ")"),
        indent=_METHOD,
    )
    doc_line = pysource.indent_first(doc, _METHOD)
    tail = [_return_root(black_format.style())] if tool.output_is_root else []
    return MethodView(
        pysource.join([sync_header, doc_line, sync_call, *tail], "\n"),
        pysource.join([async_header, doc_line, async_call, *tail], "\n"),
        *_task_methods(tool, params, returns, [arguments, input_model, *output], output, tasks),
    )


def _task_methods(
    tool: ToolIR,
    params: list[Node],
    returns: Node,
    start_args: list[Node],
    output: list[Node],
    imports: Imports,
) -> tuple[PyCode, PyCode, PyCode, PyCode]:
    """The tool's methods of `Start`, `AsyncStart`, `Resume`, `AsyncResume`: the plain method's
    parameters (`task_id` to resume), its return type in a handle; `start_args`: what `_call` gets
    after the wire name; `output`: the output model and `finish`, if any."""
    name, wire = pysource.ident(tool.method_name), pysource.literal(tool.wire_name)
    sync_handle, async_handle = (
        pysource.seq(
            pysource.ident(imports.add("mcpgen_runtime.client", handle)),
            pysource.brk("[", [returns], "]", magic=False),
        )
        for handle in ("TaskHandle", "AsyncTaskHandle")
    )
    start_sync, start_async = layout.call_statements(
        [pysource.code("return self._start"), pysource.code("return await self._start")],
        pysource.brk("(", [wire, *start_args], ")"),
        indent=_METHOD,
    )
    (resume,) = layout.call_statements(
        [pysource.code("return self._resume")],
        pysource.brk("(", [wire, _TASK_ID, *output], ")"),
        indent=_METHOD,
    )
    resume_params: list[Node] = [pysource.code("self"), _TASK_ID_PARAM]

    def method(params: list[Node], handle: Node, is_async: bool, body: PyCode) -> PyCode:
        return pysource.join(
            [layout.def_header(name, params, handle, indent=_CLASS, is_async=is_async), body], "\n"
        )

    return (
        method(params, sync_handle, False, start_sync),
        method(params, async_handle, True, start_async),
        method(resume_params, sync_handle, False, resume),
        method(resume_params, async_handle, False, resume),
    )


def _namespace_inits(imports: Imports) -> dict[str, PyCode]:
    """The `__init__` header of each task namespace class (templates/client/_tasks.py.jinja), laid
    out for the style: `def __init__(self, start: Callable[..., TaskHandle[Any]]) -> None:`."""

    def callable_of(result: Node) -> Node:
        callable_ = pysource.ident(imports.add("collections.abc", "Callable"))
        return pysource.seq(callable_, pysource.brk("[", [pysource.code("..."), result], "]"))

    def handle(name: str) -> Node:
        any_ = pysource.ident(imports.add("typing", "Any"))
        return pysource.seq(
            pysource.ident(imports.add("mcpgen_runtime.client", name)),
            pysource.brk("[", [any_], "]", magic=False),
        )

    awaitable = pysource.ident(imports.add("collections.abc", "Awaitable"))
    kinds = {
        "init_start_sync": ("start", handle("TaskHandle")),
        "init_start_async": (
            "start",
            pysource.seq(awaitable, pysource.brk("[", [handle("AsyncTaskHandle")], "]", magic=False)),
        ),
        "init_resume_sync": ("resume", handle("TaskHandle")),
        "init_resume_async": ("resume", handle("AsyncTaskHandle")),
    }
    return {
        key: layout.def_header(
            pysource.ident("__init__"),
            [pysource.code("self"), pysource.annotated_name(param, callable_of(result))],
            pysource.code("None"),
            indent=_CLASS,
            is_async=False,
        )
        for key, (param, result) in kinds.items()
    }


_TASK_ID = pysource.ident("task_id")
_TASK_ID_PARAM = pysource.annotated_name("task_id", pysource.code("str"))


def _finish_root(imports: Imports) -> Node:
    """`finish=_attrgetter("root")`: a handle's result is the RootModel's value, as the plain method's."""
    getter = imports.add("operator", "attrgetter", "_attrgetter")
    return pysource.keyword_arg("finish", pysource.call(pysource.ident(getter), [pysource.literal("root")]))


@functools.lru_cache(maxsize=16)  # the last line of every method whose output is a RootModel
def _return_root(_style: black_format.Style) -> PyCode:
    return layout.statement(pysource.code("return _result.root"), indent=_METHOD)


def _optional_annotation(type_: TypeExpr, names: TypeNames, unset: str) -> Node:
    """`T | Unset`, or `T | Unset | None` when the value may be null (None stays last, as ruff wants)."""
    members = list(type_.members) if isinstance(type_, Union) else [type_]
    nullable = NONE in members
    rest = [member for member in members if member != NONE]
    parts: list[Node] = [type_node(union(rest), names, plain=True)] if rest else []
    parts.append(pysource.ident(unset))
    if nullable:
        parts.append(pysource.code("None"))
    return pysource.union_of(parts)


def _root_argument_type(root: TypeExpr) -> TypeExpr:
    if isinstance(root, DictOf):
        return root
    options = (
        [member for member in root.members if isinstance(member, ModelRef)] if isinstance(root, Union) else []
    )
    return union([*options, DictOf(ANY)])


def _handler(tool: ToolIR, names: TypeNames, tool_return: str) -> HandlerView:
    if tool.output_class is None:
        returns: Node = pysource.ident(tool_return)
    elif tool.output_root is not None:
        returns = type_node(tool.output_root, names, plain=True)
    else:
        returns = names.qualify(tool.output_class)
    params: list[Node] = [
        pysource.code("self"),
        pysource.annotated_name("args", names.qualify(tool.input_class)),
        _CONTEXT_PARAM,
    ]
    header = layout.def_header(
        pysource.ident(tool.method_name), params, returns, indent=_CLASS, is_async=True
    )
    doc = pysource.docstring(_tool_text(tool), indent=_METHOD)
    body = _not_implemented(black_format.style())
    return HandlerView(pysource.join([header, pysource.indent_first(doc, _METHOD), body], "\n"))


_CONTEXT_PARAM = pysource.annotated_name("ctx", pysource.ident("ToolContext"))


@functools.lru_cache(maxsize=16)  # the body of every handler
def _not_implemented(_style: black_format.Style) -> PyCode:
    return layout.statement(pysource.code("raise NotImplementedError"), indent=_METHOD)


def _bindings(ir: PackageIR) -> PyCode:
    """`_tool_bindings_ = (...)`: models by name, looked up in `_tool_models_` (models.py) on a
    tool's first call, so serving a tool set imports no model until it is used."""
    entries: list[Node] = []
    for tool in ir.tools:
        output: Node = pysource.literal(tool.output_class)
        entries.append(
            pysource.call(
                pysource.ident("ToolBinding"),
                [
                    pysource.keyword_arg("name", pysource.literal(tool.wire_name)),
                    pysource.keyword_arg("method", pysource.literal(tool.method_name)),
                    pysource.keyword_arg("input_model", pysource.literal(tool.input_class)),
                    pysource.keyword_arg("output_model", output),
                    pysource.keyword_arg("output_is_root", pysource.literal(tool.output_is_root)),
                ],
            )
        )
    value = pysource.brk("(", entries, ")", one_tuple=True) if entries else pysource.code("()")
    return layout.statement(pysource.seq(pysource.code("_tool_bindings_ = "), value), indent=_CLASS)


def _check_method_names(ir: PackageIR, module_names: set[str]) -> None:
    for method in [*(tool.method_name for tool in ir.tools), *ir.surfaces.method_names]:
        if method in module_names:
            raise InternalGeneratorError(f"method {method!r} would shadow a module-level name")


def _runtime_check_context(ir: PackageIR) -> dict[str, Any]:
    return {"api_version": pysource.literal(ir.runtime_api_version)}


# ------------------------------------------------------------------------------------------ modules


def _cli_table(ir: PackageIR) -> PyCode:
    """`_TOOLS = (CliTool(wire name, method, input model[, output model]), ...)`: what the command
    line needs besides tools.json (which it reads as data: descriptions never become code). Models
    by name: the command line imports (and builds) the models of the one tool it calls."""
    entries: list[Node] = []
    for tool in ir.tools:
        args: list[Node] = [
            pysource.literal(tool.wire_name),
            pysource.literal(tool.method_name),
            pysource.literal(tool.input_class),
        ]
        if tool.output_class is not None:
            args.append(pysource.literal(tool.output_class))
        entries.append(pysource.call(pysource.ident("CliTool"), args))
    value = pysource.brk("(", entries, ")", one_tuple=True) if entries else pysource.code("()")
    return layout.statement(pysource.seq(pysource.code("_TOOLS = "), value), indent="")


def render_cli_main(ir: PackageIR, *, cli_name: str | None = None) -> str:
    """The client package's `__main__.py`: `python -m PKG --url URL TOOL --option value`, or the
    console script `cli_name` (`[tool.mcpgen]` `cli = "..."`) pointing at its `main`."""
    imports = Imports()
    imports.add("mcpgen_runtime.cli", "CliTool")
    imports.add("mcpgen_runtime.cli", "run_cli")
    imports.add(".client", "Client")
    imports.add(".", "models", "_m")
    prog = cli_name or f"python -m {ir.package}"
    return render_template(
        "client/__main__.py.jinja",
        header=file_header(ir),
        module_doc=pysource.docstring(
            f"The tools from a shell: `{prog} --url URL TOOL --option value` (or `--stdio COMMAND`);\n"
            f"`{prog} --help` lists the tools, `{prog} TOOL --help` their options.",
            indent="",
        ),
        imports=imports.block(),
        tools=_cli_table(ir),
        run=layout.statement(
            pysource.call(
                pysource.ident("run_cli"),
                [
                    pysource.code("Client"),
                    pysource.code("_TOOLS"),
                    pysource.keyword_arg("prog", pysource.literal(prog)),
                    pysource.keyword_arg("models", pysource.code("_m")),
                    *([pysource.keyword_arg("surfaces", pysource.literal(True))] if ir.surfaces else []),
                ],
            ),
            indent="    ",
        ),
        main_doc=pysource.docstring(
            f"Run the command line (the entry point for a console script: `{ir.package}.__main__:main`).",
            indent="    ",
        ),
    )


def render_client(ir: PackageIR, *, cli_name: str | None = None) -> list[Render]:
    """The jobs (`jobs.Render`) of `__init__.py`, `client.py`, `_tasks.py` (with tools) and
    `__main__.py`, then of models.py and `_models/`."""
    return [functools.partial(_render_client, ir, cli_name), *render_models(ir)]


def _render_client(ir: PackageIR, cli_name: str | None) -> dict[str, str]:
    imports = Imports(future=True)  # annotations name models: evaluated never, so nothing is built
    tasks = Imports(future=True)  # _tasks.py's: the `start` / `resume` namespaces
    fixed = {
        "RUNTIME_API_VERSION": imports.add("mcpgen_runtime._version", "RUNTIME_API_VERSION"),
        "_ClientBase": imports.add("mcpgen_runtime.client", "Client", "_ClientBase"),
        "_AsyncClientBase": imports.add("mcpgen_runtime.client", "AsyncClient", "_AsyncClientBase"),
        "PackageTools": imports.add("mcpgen_runtime.tools", "PackageTools"),
    }
    taken = set(fixed) | {"Client", "AsyncClient", "_m", "_RUNTIME_API", "_TOOL_DEFINITIONS"}
    names = type_names(imports, tasks, prefix="_m")
    optional: dict[tuple[TypeExpr, str], Node] = {}
    methods = [_client_method(tool, names, (imports, tasks), optional) for tool in ir.tools]
    surfaces = render_surface_methods(ir.surfaces, imports)
    resources = render_resources_class(ir.surfaces.resources, imports)
    header = file_header(ir)
    files: dict[str, str] = {}
    if ir.tools:
        imports.add(".", "models", "_m")
        imports.add("typing", "TYPE_CHECKING")
        tasks.add(".", "models", "_m")
        inits = _namespace_inits(tasks)
        _check_method_names(ir, tasks.locals() | set(TASK_CLASSES))
        files["_tasks.py"] = render_template(
            "client/_tasks.py.jinja",
            header=header,
            imports=tasks.block(),
            start_sync=pysource.join([m.start_sync for m in methods], "\n\n"),
            start_async=pysource.join([m.start_async for m in methods], "\n\n"),
            resume_sync=pysource.join([m.resume_sync for m in methods], "\n\n"),
            resume_async=pysource.join([m.resume_async for m in methods], "\n\n"),
            **inits,
        )
    _check_method_names(ir, imports.locals() | taken | {"Resources"})
    return {
        **files,
        "__init__.py": render_template(
            "client/__init__.py.jinja", header=header, has_resources=resources is not None
        ),
        "client.py": render_template(
            "client/client.py.jinja",
            header=header,
            imports=imports.block(),
            sync_methods=pysource.join([*(m.sync for m in methods), *surfaces.sync], "\n\n"),
            async_methods=pysource.join([*(m.async_ for m in methods), *surfaces.async_], "\n\n"),
            tasks=bool(ir.tools),
            resources=resources,
            **_runtime_check_context(ir),
        ),
        "__main__.py": render_cli_main(ir, cli_name=cli_name),
    }


# the classes of _tasks.py, the task namespaces client.py imports on first use
TASK_CLASSES = ("Start", "Resume", "AsyncStart", "AsyncResume")


def _server_class_names(ir: PackageIR) -> set[str]:
    """Names a generated server class has before its surface methods: the tool methods and every
    attribute of the runtime's ToolServer (a surface method never shadows one)."""
    return {tool.method_name for tool in ir.tools} | set(naming.method_reserved_names(()))


def server_surface_methods(ir: PackageIR, surfaces: SurfacesIR) -> tuple[str, ...]:
    """The methods the surfaces add to ServerBase and Server, in order (the pipeline checks them)."""
    return render_server_surfaces(surfaces, Imports(), taken=_server_class_names(ir), base=False).method_names


def _server_module_imports(ir: PackageIR, imports: Imports) -> None:
    if ir.tools:
        imports.add("mcpgen_runtime.server", "ToolContext")
        imports.add(".", "models", "_m")
        if any(tool.output_class is None for tool in ir.tools):
            imports.add("mcpgen_runtime.server", "ToolReturn")


def render_server(ir: PackageIR, surfaces: SurfacesIR | None = None) -> list[Render]:
    """The jobs (`jobs.Render`) of `__init__.py`, `base.py` and `__main__.py`, of the user's
    `handlers.py` (`SERVER_USER_FILES`), then of models.py and `_models/`. `surfaces`: resources,
    templates and prompts (server_surfaces.py)."""
    shown = surfaces if surfaces is not None else SurfacesIR()
    return [
        functools.partial(_render_server_base, ir, shown),
        functools.partial(_render_handlers, ir, shown),
        *render_models(ir),
    ]


def _render_server_base(ir: PackageIR, surfaces: SurfacesIR) -> dict[str, str]:
    header = file_header(ir)
    imports = Imports(future=True)  # annotations name models: evaluated never, so nothing is built
    fixed = {
        "RUNTIME_API_VERSION": imports.add("mcpgen_runtime._version", "RUNTIME_API_VERSION"),
        "ToolBinding": imports.add("mcpgen_runtime.server", "ToolBinding"),
        "ToolServer": imports.add("mcpgen_runtime.server", "ToolServer"),
        "load_package_tools": imports.add("mcpgen_runtime.tools", "load_package_tools"),
    }
    taken = set(fixed) | {"ServerBase", "_m", "_RUNTIME_API", "ToolContext", "ToolReturn"}
    handlers = _handlers(ir, imports)
    _check_method_names(ir, imports.locals() | taken)
    extra = render_server_surfaces(surfaces, imports, taken=_server_class_names(ir), base=True)
    base = render_template(
        "server/base.py.jinja",
        header=header,
        imports=imports.block(),
        handlers=pysource.join([*handlers, *extra.methods], "\n\n"),
        bindings=_bindings(ir),
        surfaces=extra.attributes,
        has_tools=bool(ir.tools),
        **_runtime_check_context(ir),
    )
    return {
        "__init__.py": render_template("server/__init__.py.jinja", header=header),
        "base.py": base,
        "__main__.py": render_template(
            "server/__main__.py.jinja",
            header=header,
            module_doc=pysource.docstring(
                f"Serve the tools: `python -m {ir.package} --http --port 8000` or "
                f"`python -m {ir.package} --stdio`.",
                indent="",
            ),
        ),
    }


def _render_handlers(ir: PackageIR, surfaces: SurfacesIR) -> dict[str, str]:
    """handlers.py: the same handlers as base.py (a job of its own, so the two render side by side)."""
    imports = Imports(future=True)
    imports.add(".base", "ServerBase")
    handlers = _handlers(ir, imports)
    extra = render_server_surfaces(surfaces, imports, taken=_server_class_names(ir), base=False)
    text = render_template(
        "server/handlers.py.jinja",
        header=file_header(ir),
        imports=imports.block(),
        handlers=pysource.join([*handlers, *extra.methods], "\n\n"),
        module_doc=pysource.docstring(
            "Tool handlers: override each method, then serve with\n"
            f"`python -m {ir.package} --http --port 8000` or `python -m {ir.package} --stdio`.\n\n"
            "Return the output model (or its root value) for tools with an outputSchema; otherwise a str,\n"
            "a content block, a list of blocks or a ToolResult. Raise ToolExecutionError for a tool error."
            + (
                "\n\nResources and templates return str (text), bytes (binary) or contents; raise\n"
                "ResourceNotFound (from mcpgen_runtime.server) for a URI you do not serve. Prompts return\n"
                "str, content blocks or messages; completions the values to offer (mcpgen docs:\n"
                '"Resources, prompts and completions").'
                if surfaces
                else ""
            ),
            indent="",
        ),
    )
    return {"handlers.py": text}


def _handlers(ir: PackageIR, imports: Imports) -> list[PyCode]:
    """Every tool's handler, its annotations imported into `imports` with what a server module needs."""
    names = type_names(imports, prefix="_m")
    handlers = [_handler(tool, names, "ToolReturn").method for tool in ir.tools]
    _server_module_imports(ir, imports)
    return handlers
