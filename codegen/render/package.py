"""RENDER: PackageIR -> {relative path: Python source}, already in black's layout.

Every value a template prints is a `pysource.PySource` marker (identifiers, literals, docstrings,
comments, laid-out statements, import blocks): the environment's `finalize` hook refuses anything
else, and its filters are removed so no filter can turn a plain string into output. Type annotations
come from `typenodes`; statements are laid out by `layout` (black's rules, black itself for the rare
statement it cannot place), so no formatter runs over whole files; templates only place blocks and
fixed text. tools.json is data, written by `toolsjson`.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from ..errors import InternalGeneratorError
from ..model.ir import (
    ANY,
    NONE,
    DictOf,
    FieldDef,
    JsonScalar,
    ModelDef,
    ModelRef,
    ModelsIR,
    PackageIR,
    ParamIR,
    ToolIR,
    TypeExpr,
    Union,
    class_refs,
    union,
)
from . import black_format as fmt
from . import layout, pysource
from .pysource import Node, PyCode, PyComment, PySource
from .toolsjson import tools_json  # tools.json is rendered too: one place for every generated file
from .typenodes import TypeNames, type_node

__all__ = [
    "Imports",
    "environment",
    "render_client",
    "render_models",
    "render_server",
    "templates_dir",
    "tools_json",
]

_CLASS = " " * 4
_DEFAULT_CHARS = 120  # of a schema default shown in a method's docstring
_METHOD = " " * 8


# ------------------------------------------------------------------------------------- environment


def templates_dir() -> Path:
    """`codegen/_templates` in an installed wheel, else `<repo>/templates` in a source checkout."""
    package = Path(__file__).resolve().parent.parent  # codegen/
    for candidate in (package / "_templates", package.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise InternalGeneratorError(f"template directory not found next to {package}")


def _finalize(value: Any) -> Any:
    # Macros return markupsafe.Markup (autoescape is on); their own output went through this hook.
    if isinstance(value, (PySource, markupsafe.Markup)):
        return value
    if isinstance(value, jinja2.Undefined):
        str(value)  # StrictUndefined raises UndefinedError naming the missing variable
    raise InternalGeneratorError(
        f"template tried to output unchecked {type(value).__name__} {value!r:.80}; build it with codegen.pysource"
    )


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=True,  # plain strings would be HTML-escaped (and finalize rejects them first)
        finalize=_finalize,
        auto_reload=False,
    )
    env.filters.clear()  # no |safe, |e, |join, |format ...: nothing can launder a str into output
    return env


def _render(template: str, **context: Any) -> str:
    try:
        return environment().get_template(template).render(**context)
    except InternalGeneratorError as exc:
        raise InternalGeneratorError(f"{template}: {exc}") from exc
    except jinja2.TemplateError as exc:
        raise InternalGeneratorError(f"{template}: {type(exc).__name__}: {exc}") from exc


# ------------------------------------------------------------------------------------------ imports


def _member_key(name: str) -> tuple[int, str, str]:
    """isort/ruff `order-by-type`: CONSTANTS, then Classes, then everything else."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name.lower(), name


@dataclass
class Imports:
    """An import block planned as data and printed in isort (ruff `I`) order."""

    future: bool = False
    entries: set[tuple[str, str | None, str]] = field(default_factory=set)  # (module, name|None, local)

    def add(self, module: str, name: str | None = None, local: str | None = None) -> str:
        """Record `from module import name as local` (or `import module as local`); return the local name."""
        local = local or name or module
        for other in self.entries:
            if other[2] == local and other[:2] != (module, name):
                raise InternalGeneratorError(f"two imports bound to {local!r}")
        self.entries.add((module, name, local))
        return local

    def locals(self) -> set[str]:
        return {entry[2] for entry in self.entries}

    @staticmethod
    def _section(module: str) -> int:
        if module.startswith("."):
            return 3
        return 1 if module.split(".", 1)[0] in sys.stdlib_module_names else 2

    def block(self) -> PyCode:
        lines: list[list[PySource]] = [[], [], [], []]
        if self.future:
            lines[0].append(pysource.import_from("__future__", [("annotations", None)]))
        by_section: dict[int, list[tuple[str, str | None, str]]] = {1: [], 2: [], 3: []}
        for entry in self.entries:
            by_section[self._section(entry[0])].append(entry)
        for section, entries in by_section.items():
            plain = sorted({(m, local) for m, name, local in entries if name is None}, key=lambda e: (e[0].lower(), e))
            for module, local in plain:
                lines[section].append(pysource.import_module(module, None if local == module else local))
            statements: list[tuple[tuple[Any, ...], str, list[tuple[str, str | None]]]] = []
            modules = sorted({m for m, name, _ in entries if name is not None})
            for module in modules:
                names = [(name, local) for m, name, local in entries if m == module and name is not None]
                unaliased = sorted((n for n, local in names if n == local), key=_member_key)
                if unaliased:
                    statements.append(((module.lower(), module, _member_key(unaliased[0])), module,
                                       [(n, None) for n in unaliased]))
                for n, local in sorted((item for item in names if item[0] != item[1]), key=lambda i: _member_key(i[0])):
                    statements.append(((module.lower(), module, _member_key(n)), module, [(n, local)]))
            for _, module, members in sorted(statements, key=lambda s: s[0]):
                lines[section].append(self._from_line(module, members))
        groups = [pysource.join(group, "\n") for group in lines if group]
        return pysource.join_blocks(groups)

    @staticmethod
    def _from_line(module: str, members: list[tuple[str, str | None]]) -> PyCode:
        one_line = pysource.import_from(module, members)
        if len(one_line) <= layout.line_length() or len(members) == 1:
            return one_line
        # isort and black agree on one name per line with a trailing comma once the line is too long
        return pysource.import_from_wrapped(module, members)


# ------------------------------------------------------------------------------------- type names


def _model_names(imports: Imports, *, prefix: str | None) -> TypeNames:
    """Type spelling for a module: models.py (`prefix` None) names classes directly, other modules
    as `_m.X`; typing/pydantic helpers are imported on first use."""
    sources = {"Any": "typing", "Literal": "typing", "Annotated": "typing", "Field": "pydantic"}

    def qualify(name: str) -> Node:
        checked = pysource.ident(name)
        return checked if prefix is None else pysource.code(f"{prefix}.{checked}")

    def use(name: str) -> str:
        return imports.add(sources[name], name)

    return TypeNames(qualify, use)


# -------------------------------------------------------------------------------------------- views


@dataclass(frozen=True)
class Header:
    version: PyComment
    source: PyComment
    digest: PyComment


@dataclass(frozen=True)
class MethodView:
    """One client method, laid out for the blocking and the asyncio class."""

    sync: PyCode
    async_: PyCode


@dataclass(frozen=True)
class HandlerView:
    method: PyCode  # `async def tool(self, args, ctx) -> ...:` with docstring and body


def _header(ir: PackageIR) -> Header:
    digest = ir.digest
    if not (len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
        raise InternalGeneratorError(f"digest {digest!r:.80} is not a sha256 hex string")
    return Header(
        version=pysource.comment(ir.generator_version),
        source=pysource.comment(ir.source or "<unknown>"),
        digest=pysource.comment(digest),
    )


def _tool_text(tool: ToolIR) -> str:
    text = pysource.clean_text(tool.description or "") or pysource.clean_text(tool.title or "")
    return text or f"Call the {tool.wire_name!r} tool."


def _args_section(params: Iterable[ParamIR]) -> str:
    entries = []
    for param in params:
        text = pysource.clean_text(param.description or "")
        if param.has_default:  # documented, never sent for the caller: omitted stays omitted
            default = f"Defaults to {_default_text(param.default)} when omitted."
            text = f"{text}{chr(10) if chr(10) in text else ' '}{default}" if text else default
        if not text:
            continue
        first, *rest = text.split("\n")
        entries.append(f"    {param.name}: {first}" + "".join(f"\n        {line}" if line else "\n" for line in rest))
    return "\n\nArgs:\n" + "\n".join(entries) if entries else ""


def _default_text(value: JsonScalar) -> str:
    """A schema default as JSON text for a docstring: characters that do not print escaped, long
    strings shortened."""
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in json.dumps(value, ensure_ascii=False))
    return text if len(text) <= _DEFAULT_CHARS else text[: _DEFAULT_CHARS - 1] + "…"


def _client_method(tool: ToolIR, names: TypeNames, imports: Imports) -> MethodView:
    params: list[Node] = [pysource.code("self")]
    keyword_only: list[Node] = []
    arguments: Node
    if tool.input_root is not None:
        # A RootModel input: the whole arguments object is one parameter. A map at the root keeps
        # its type; a union at the root takes any of its object options as a model, or a dict.
        params.append(pysource.annotated_name("arguments", type_node(
            _root_argument_type(tool.input_root), names, plain=True)))
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
                annotation = _optional_annotation(param.type, names, imports.add("mcpgen_runtime.types", "Unset"))
                unset = pysource.ident(imports.add("mcpgen_runtime.types", "UNSET"))
                keyword_only.append(pysource.annotated_name(param.name, annotation, unset))
            items.append(pysource.seq(pysource.literal(param.wire_name), pysource.code(": "), pysource.ident(param.name)))
        arguments = pysource.brk("{", items, "}") if items else pysource.code("{}")
    if keyword_only:
        params += [pysource.code("*"), *keyword_only]
    input_model = names.qualify(tool.input_class)
    if tool.output_class is None:
        returns: Node = pysource.ident(imports.add("mcpgen_runtime.content", "ToolResult"))
        call_name, extra = "_call", [input_model]
    else:
        output_model = names.qualify(tool.output_class)
        returns = type_node(tool.output_root, names, plain=True) if tool.output_root is not None else output_model
        call_name, extra = "_call_structured", [input_model, output_model]
    doc = pysource.docstring(_tool_text(tool) + _args_section(tool.params), indent=_METHOD)
    name = pysource.ident(tool.method_name)

    def one(is_async: bool) -> PyCode:
        header = layout.def_header(name, params, returns, indent=_CLASS, is_async=is_async)
        target = "_result = " if tool.output_is_root else "return "
        awaited = "await " if is_async else ""
        invoke = pysource.call(pysource.code(f"{target}{awaited}self.{call_name}"),
                               [pysource.literal(tool.wire_name), arguments, *extra])
        body = [layout.statement(invoke, indent=_METHOD)]
        if tool.output_is_root:
            body.append(layout.statement(pysource.code("return _result.root"), indent=_METHOD))
        return pysource.join([header, pysource.indent_first(doc, _METHOD), *body], "\n")

    return MethodView(sync=one(False), async_=one(True))


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
    options = [member for member in root.members if isinstance(member, ModelRef)] if isinstance(root, Union) else []
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
        pysource.annotated_name("ctx", pysource.ident("ToolContext")),
    ]
    header = layout.def_header(pysource.ident(tool.method_name), params, returns, indent=_CLASS, is_async=True)
    doc = pysource.docstring(_tool_text(tool), indent=_METHOD)
    body = layout.statement(pysource.code("raise NotImplementedError"), indent=_METHOD)
    return HandlerView(pysource.join([header, pysource.indent_first(doc, _METHOD), body], "\n"))


def _bindings(ir: PackageIR, names: TypeNames) -> PyCode:
    entries: list[Node] = []
    for tool in ir.tools:
        output: Node = names.qualify(tool.output_class) if tool.output_class else pysource.literal(None)
        entries.append(pysource.call(pysource.ident("ToolBinding"), [
            pysource.keyword_arg("name", pysource.literal(tool.wire_name)),
            pysource.keyword_arg("method", pysource.literal(tool.method_name)),
            pysource.keyword_arg("input_model", names.qualify(tool.input_class)),
            pysource.keyword_arg("output_model", output),
            pysource.keyword_arg("output_is_root", pysource.literal(tool.output_is_root)),
        ]))
    value = pysource.brk("(", entries, ")", one_tuple=True) if entries else pysource.code("()")
    return layout.statement(pysource.seq(pysource.code("_tool_bindings_ = "), value), indent=_CLASS)


def _check_method_names(ir: PackageIR, module_names: set[str]) -> None:
    for tool in ir.tools:
        if tool.method_name in module_names:
            raise InternalGeneratorError(f"method {tool.method_name!r} would shadow a module-level name")


def _runtime_check_context(ir: PackageIR) -> dict[str, Any]:
    return {
        "generator": pysource.literal(f"mcpgen {ir.generator_version}"),
        "api_version": pysource.literal(ir.runtime_api_version),
    }


# ------------------------------------------------------------------------------------------ models


def _field_statement(f: FieldDef, names: TypeNames) -> PyCode:
    """`name: T`, `name: T = default` or `name: T = Field(default=..., ...)`. Written so pyright and
    mypy (with the pydantic plugin or without) read the constructor as pydantic does: a default
    only as `default=` (a positional one reads as required), and a wire name as
    `validation_alias`/`serialization_alias` (`alias` would make it the only keyword a checker
    accepts; `populate_by_name` lets the Python name in at run time too)."""
    annotation = type_node(f.type, names)
    default: Node | None = None
    if not f.required:
        default = pysource.literal_node(f.default if f.has_default else None)
    keywords: list[Node] = []
    if f.name != f.wire_name:
        wire = pysource.literal(f.wire_name)
        keywords += [pysource.keyword_arg("validation_alias", wire), pysource.keyword_arg("serialization_alias", wire)]
    if f.description is not None:
        keywords.append(pysource.keyword_arg("description", pysource.literal(f.description)))
    for keyword, value in f.constraints:
        keywords.append(pysource.keyword_arg(keyword, pysource.literal(value)))
    mutable = f.has_default and isinstance(f.default, (list, dict))
    if not keywords and not mutable:
        simple = pysource.annotated_name(f.name, annotation, default)
        if f.required or layout.width(_CLASS + pysource.flat(simple)) <= layout.line_length():
            return layout.statement(simple, indent=_CLASS)
        # too long: `= Field(` with the default on its own line, when that line fits; else black's
        # split of the annotation, keeping `= None` on the closing line
        head = _CLASS + pysource.flat(pysource.annotated_name(f.name, annotation, pysource.code("Field(")))
        if layout.width(head) > layout.line_length():
            return layout.statement(simple, indent=_CLASS)
    if default is not None:
        keywords.insert(0, pysource.keyword_arg("default", default))
    field_call = pysource.call(pysource.ident(names.use("Field")), keywords)
    return layout.statement(pysource.annotated_name(f.name, annotation, field_call), indent=_CLASS)


def _model_block(model: ModelDef, names: TypeNames, defined: set[str], imports: Imports) -> PyCode:
    name = pysource.ident(model.name)
    if model.root is not None:
        root = type_node(model.root, names)
        forward = any(ref not in defined for ref in class_refs(model.root))
        argument: Node = pysource.literal(pysource.flat(root)) if forward else root
        base = pysource.seq(pysource.ident(imports.add("pydantic", "RootModel")),
                            pysource.brk("[", [argument], "]", magic=False))
        lines = [layout.class_header(name, [base]), _config(imports),
                 layout.statement(pysource.annotated_name("root", root), indent=_CLASS)]
        return pysource.join(lines, "\n")
    lines = [layout.class_header(name, [pysource.ident(imports.add("pydantic", "BaseModel"))])]
    renamed = any(f.name != f.wire_name for f in model.fields)
    lines.append(_config(imports, extra=model.extra, populate_by_name=renamed))
    lines += [_field_statement(f, names) for f in model.fields]
    return pysource.join(lines, "\n")


def _config(imports: Imports, *, extra: str | None = None, populate_by_name: bool = False) -> PyCode:
    """`model_config = ConfigDict(defer_build=True, strict=True, ...)`: pydantic builds a model's
    validator when it is first used, not at import (a 1,000-tool client imports in about half the
    time), and forward references are resolved then, so no `model_rebuild()` calls are needed.
    Strict: a constructor refuses what its annotations refuse (`"10"` for an `int`), which is also
    what makes the pydantic mypy plugin check constructor argument types; the runtime parses JSON
    it receives with `strict=False` after the schema check (arrays become tuples)."""
    return _config_statement(imports.add("pydantic", "ConfigDict"), extra, populate_by_name, fmt.style())


@functools.lru_cache(maxsize=64)  # one of a few statements, repeated in every class of models.py
def _config_statement(config_dict: str, extra: str | None, populate_by_name: bool, _style: fmt.Style) -> PyCode:
    config = [pysource.keyword_arg("defer_build", pysource.literal(True)),
              pysource.keyword_arg("strict", pysource.literal(True))]
    if extra is not None:
        config.append(pysource.keyword_arg("extra", pysource.literal(extra)))
    if populate_by_name:
        config.append(pysource.keyword_arg("populate_by_name", pysource.literal(True)))
    config_call = pysource.call(pysource.ident(config_dict), config)
    return layout.statement(pysource.seq(pysource.code("model_config = "), config_call), indent=_CLASS)


def _models_body(models: ModelsIR, imports: Imports) -> tuple[PyCode, PyCode]:
    """(the Literal aliases, the classes)."""
    names = _model_names(imports, prefix=None)
    aliases = [
        layout.statement(pysource.seq(pysource.code(f"{pysource.ident(a.name)} = "), type_node(a.value, names)),
                           indent="")
        for a in models.aliases
    ]
    blocks: list[PySource] = []
    defined: set[str] = set()
    for model in models.models:
        blocks.append(_model_block(model, names, defined, imports))
        defined.add(model.name)
    return pysource.join(aliases, "\n"), pysource.join(blocks, "\n\n\n")


_MODELS_TEXT: dict[int, tuple[ModelsIR, tuple[str, str, str, fmt.Style], str]] = {}


def render_models(ir: PackageIR) -> str:
    """models.py (the same text for a client and a server built from one IR: computed once)."""
    key = (ir.source, ir.digest, ir.generator_version, fmt.style())
    hit = _MODELS_TEXT.get(id(ir.models))
    if hit is not None and hit[0] is ir.models and hit[1] == key:
        return hit[2]
    imports = Imports(future=True)
    aliases, body = _models_body(ir.models, imports)
    text = _render("models.py.jinja", header=_header(ir), imports=imports.block(), aliases=aliases, body=body)
    _MODELS_TEXT.clear()
    _MODELS_TEXT[id(ir.models)] = (ir.models, key, text)
    return text


# ------------------------------------------------------------------------------------------ modules


def _cli_table(ir: PackageIR, names: TypeNames) -> PyCode:
    """`_TOOLS = (CliTool(wire name, method, input model[, output model]), ...)`: what the command
    line needs besides tools.json (which it reads as data: descriptions never become code)."""
    entries: list[Node] = []
    for tool in ir.tools:
        args: list[Node] = [pysource.literal(tool.wire_name), pysource.literal(tool.method_name),
                            names.qualify(tool.input_class)]
        if tool.output_class is not None:
            args.append(names.qualify(tool.output_class))
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
    names = _model_names(imports, prefix="_m")
    if ir.tools:
        imports.add(".", "models", "_m")
    prog = cli_name or f"python -m {ir.package}"
    return _render(
        "client/__main__.py.jinja",
        header=_header(ir),
        module_doc=pysource.docstring(
            f"The tools from a shell: `{prog} --url URL TOOL --option value` (or `--stdio COMMAND`);\n"
            f"`{prog} --help` lists the tools, `{prog} TOOL --help` their options.",
            indent="",
        ),
        imports=imports.block(),
        tools=_cli_table(ir, names),
        prog=pysource.literal(prog),
        main_doc=pysource.docstring(
            f"Run the command line (the entry point for a console script: `{ir.package}.__main__:main`).",
            indent="    ",
        ),
    )


def render_client(ir: PackageIR, *, cli_name: str | None = None) -> dict[str, str]:
    """`__init__.py`, `models.py`, `client.py`, `__main__.py`."""
    imports = Imports()
    fixed = {
        "RUNTIME_API_VERSION": imports.add("mcpgen_runtime._version", "RUNTIME_API_VERSION"),
        "_ClientBase": imports.add("mcpgen_runtime.client", "Client", "_ClientBase"),
        "_AsyncClientBase": imports.add("mcpgen_runtime.client", "AsyncClient", "_AsyncClientBase"),
        "load_package_tools": imports.add("mcpgen_runtime.tools", "load_package_tools"),
    }
    taken = set(fixed) | {"Client", "AsyncClient", "_m", "_GENERATOR", "_RUNTIME_API", "_TOOL_DEFINITIONS"}
    names = _model_names(imports, prefix="_m")
    methods = [_client_method(tool, names, imports) for tool in ir.tools]
    if ir.tools:
        imports.add(".", "models", "_m")
    _check_method_names(ir, imports.locals() | taken)
    header = _header(ir)
    client = _render(
        "client/client.py.jinja",
        header=header,
        imports=imports.block(),
        sync_methods=pysource.join([m.sync for m in methods], "\n\n"),
        async_methods=pysource.join([m.async_ for m in methods], "\n\n"),
        **_runtime_check_context(ir),
    )
    return {
        "__init__.py": _render("client/__init__.py.jinja", header=header),
        "models.py": render_models(ir),
        "client.py": client,
        "__main__.py": render_cli_main(ir, cli_name=cli_name),
    }


def _server_module_imports(ir: PackageIR, imports: Imports) -> None:
    if ir.tools:
        imports.add("mcpgen_runtime.server", "ToolContext")
        imports.add(".", "models", "_m")
        if any(tool.output_class is None for tool in ir.tools):
            imports.add("mcpgen_runtime.server", "ToolReturn")


def render_server(ir: PackageIR) -> tuple[dict[str, str], dict[str, str]]:
    """(generator-owned files, user files): `__init__.py`, `models.py`, `base.py`, `__main__.py`;
    `handlers.py`."""
    header = _header(ir)
    base_imports = Imports()
    fixed = {
        "RUNTIME_API_VERSION": base_imports.add("mcpgen_runtime._version", "RUNTIME_API_VERSION"),
        "ToolBinding": base_imports.add("mcpgen_runtime.server", "ToolBinding"),
        "ToolServer": base_imports.add("mcpgen_runtime.server", "ToolServer"),
        "load_package_tools": base_imports.add("mcpgen_runtime.tools", "load_package_tools"),
    }
    taken = set(fixed) | {"ServerBase", "_m", "_GENERATOR", "_RUNTIME_API", "ToolContext", "ToolReturn"}
    names = _model_names(base_imports, prefix="_m")
    handlers = [_handler(tool, names, "ToolReturn") for tool in ir.tools]
    bindings = _bindings(ir, names)
    _server_module_imports(ir, base_imports)
    _check_method_names(ir, base_imports.locals() | taken)
    base = _render(
        "server/base.py.jinja",
        header=header,
        imports=base_imports.block(),
        handlers=pysource.join([h.method for h in handlers], "\n\n"),
        bindings=bindings,
        **_runtime_check_context(ir),
    )

    # handlers.py needs the same annotations; plan its own imports the same way.
    user_imports = Imports()
    user_imports.add(".base", "ServerBase")
    user_names = _model_names(user_imports, prefix="_m")
    user_handlers = [_handler(tool, user_names, "ToolReturn") for tool in ir.tools]
    _server_module_imports(ir, user_imports)
    handlers_py = _render(
        "server/handlers.py.jinja",
        header=header,
        imports=user_imports.block(),
        handlers=pysource.join([h.method for h in user_handlers], "\n\n"),
        module_doc=pysource.docstring(
            "Tool handlers: override each method, then serve with\n"
            f"`python -m {ir.package} --http --port 8000` or `python -m {ir.package} --stdio`.\n\n"
            "Return the output model (or its root value) for tools with an outputSchema; otherwise a str,\n"
            "a content block, a list of blocks or a ToolResult. Raise ToolExecutionError for a tool error.",
            indent="",
        ),
    )
    files = {
        "__init__.py": _render("server/__init__.py.jinja", header=header),
        "models.py": render_models(ir),
        "base.py": base,
        "__main__.py": _render(
            "server/__main__.py.jinja",
            header=header,
            module_doc=pysource.docstring(
                f"Serve the tools: `python -m {ir.package} --http --port 8000` or `python -m {ir.package} --stdio`.",
                indent="",
            ),
        ),
    }
    return files, {"handlers.py": handlers_py}
