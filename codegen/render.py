"""RENDER: PackageIR -> {relative path: Python source} through jinja2 templates.

Every value a template prints is a `pysource.PySource` marker (identifiers, literals, docstrings,
comments, re-emitted annotations, import lines): the environment's `finalize` hook refuses
anything else, and its filters are removed so no filter can turn a plain string into output.
Templates only loop and branch over the view objects built here.
"""

from __future__ import annotations

import ast
import copy
import functools
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from . import pysource
from .errors import InternalGeneratorError
from .ir import ImportIR, PackageIR, ParamIR, ToolIR
from .pysource import PyCode, PyComment, PyDocstring, PyExpr, PyIdent, PyLiteral, PySource

__all__ = [
    "LINE_LENGTH",
    "Imports",
    "environment",
    "render_client",
    "render_models",
    "render_server",
    "templates_dir",
]

LINE_LENGTH = 110  # black and the import block wrap at this width
_METHOD_INDENT = " " * 8
_CLASS_INDENT = " " * 4
# builtins that may appear in a model annotation (anything else there is a bug)
_BUILTIN_TYPES = frozenset({
    "bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list", "object", "set", "str",
    "tuple", "type",
})


# ------------------------------------------------------------------------------------- environment


def templates_dir() -> Path:
    """`codegen/_templates` in an installed wheel, else `<repo>/templates` in a source checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_templates", here.parent / "templates"):
        if candidate.is_dir():
            return candidate
    raise InternalGeneratorError(f"template directory not found next to {here}")


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
        if len(one_line) <= LINE_LENGTH or len(members) == 1:
            return one_line
        # isort and black agree on one name per line with a trailing comma once the line is too long
        return pysource.import_from_wrapped(module, members)


# ------------------------------------------------------------------------------------- annotations


class _Retarget:
    """Rewrites annotations from models.py's namespace into a generated module's namespace.

    Model classes become `_m.X`; names models.py imported are imported here too (under their own
    name where free, DCG's alias otherwise); builtins stay; anything else is a bug.
    """

    def __init__(self, models_classes: frozenset[str], model_imports: tuple[ImportIR, ...], imports: Imports,
                 taken: set[str]) -> None:
        self.classes = models_classes
        self.by_local = {imp.local: imp for imp in model_imports}
        self.imports = imports
        self.taken = taken  # module-level names this file defines itself

    def _literal_names(self) -> set[str]:
        return {local for local, imp in self.by_local.items() if imp.name == "Literal"}

    def convert(self, node: ast.expr) -> PyExpr:
        return pysource.expr(self._visit(copy.deepcopy(node), in_literal=False))

    def _visit(self, node: ast.expr, *, in_literal: bool) -> ast.expr:
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.Attribute):
            node.value = self._visit(node.value, in_literal=in_literal)
            return node
        if isinstance(node, ast.Subscript):
            literal = isinstance(node.value, ast.Name) and node.value.id in self._literal_names()
            node.value = self._visit(node.value, in_literal=in_literal)
            node.slice = self._visit(node.slice, in_literal=literal)
            return node
        if isinstance(node, (ast.Tuple, ast.List)):
            node.elts = [self._visit(element, in_literal=in_literal) for element in node.elts]
            return node
        if isinstance(node, ast.BinOp):
            node.left = self._visit(node.left, in_literal=in_literal)
            node.right = self._visit(node.right, in_literal=in_literal)
            return node
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str) and not in_literal:
                raise InternalGeneratorError(f"string annotation {node.value!r} (forward reference) in models")
            return node
        raise InternalGeneratorError(f"unexpected {type(node).__name__} in a model annotation")

    def _name(self, node: ast.Name) -> ast.expr:
        name = node.id
        if name in self.classes:
            return ast.Attribute(value=ast.Name(id="_m", ctx=ast.Load()), attr=name, ctx=ast.Load())
        imported = self.by_local.get(name)
        if imported is not None:
            if imported.module == "builtins" and imported.name in _BUILTIN_TYPES:
                return ast.Name(id=imported.name, ctx=ast.Load())
            preferred = imported.name or imported.module
            for local in (preferred, imported.local):
                if local in self.taken:
                    continue
                try:
                    self.imports.add(imported.module, imported.name, local)
                except InternalGeneratorError:
                    continue
                return ast.Name(id=local, ctx=ast.Load())
            raise InternalGeneratorError(f"no free name to import {imported.module}.{imported.name} as")
        if name in _BUILTIN_TYPES:
            return node
        raise InternalGeneratorError(f"annotation name {name!r} is neither a model, an import nor a builtin")


def _or_none(node: ast.expr) -> ast.expr:
    """`node | None` unless `None` is already one of its top-level union members."""
    members: list[ast.expr] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.BinOp) and isinstance(item.op, ast.BitOr):
            stack.extend((item.left, item.right))
        else:
            members.append(item)
    if any(isinstance(m, ast.Constant) and m.value is None for m in members):
        return node
    return ast.BinOp(left=copy.deepcopy(node), op=ast.BitOr(), right=ast.Constant(value=None))


# -------------------------------------------------------------------------------------------- views


@dataclass(frozen=True)
class Header:
    version: PyComment
    source: PyComment
    digest: PyComment


@dataclass(frozen=True)
class ParamView:
    name: PyIdent
    wire: PyLiteral
    annotation: PyExpr
    default: PySource | None  # keyword-only parameters only


@dataclass(frozen=True)
class Layout:
    """Where a client method breaks lines (black keeps exploded forms: they carry trailing commas).

    Emitting what black would produce anyway keeps formatting time down (black is ~3x slower on
    long logical lines) and the output stable.
    """

    explode_signature: bool
    explode_call: bool
    arguments: PyCode  # the arguments dict, on one line or one entry per line


@dataclass(frozen=True)
class MethodView:
    name: PyIdent
    wire: PyLiteral
    positional: tuple[ParamView, ...]
    keyword_only: tuple[ParamView, ...]
    call: PyIdent  # `_call` or `_call_structured`
    call_args: tuple[PySource, ...]  # after the arguments dict: input model [, output model]
    output_is_root: bool
    returns: PyExpr
    docstring: PyDocstring
    sync: Layout
    async_: Layout


@dataclass(frozen=True)
class HandlerView:
    name: PyIdent
    method: PyLiteral  # the method name as a string, for ToolBinding
    wire: PyLiteral
    input_model: PyExpr
    output_model_or_none: PySource
    output_is_root: PyLiteral
    returns: PyExpr
    docstring: PyDocstring


def _header(ir: PackageIR) -> Header:
    digest = ir.digest
    if not (len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
        raise InternalGeneratorError(f"digest {digest!r:.80} is not a sha256 hex string")
    return Header(
        version=pysource.comment(ir.generator_version),
        source=pysource.comment(ir.source or "<unknown>"),
        digest=pysource.comment(digest),
    )


def _expr_name(name: str) -> PyExpr:
    return pysource.expr(ast.Name(id=name, ctx=ast.Load()))


def _model_ref(name: str) -> PyExpr:
    return pysource.expr(ast.Attribute(value=ast.Name(id="_m", ctx=ast.Load()), attr=name, ctx=ast.Load()))


def _tool_text(tool: ToolIR) -> str:
    text = pysource.clean_text(tool.description or "") or pysource.clean_text(tool.title or "")
    return text or f"Call the {tool.wire_name!r} tool."


def _args_section(params: Iterable[ParamIR]) -> str:
    entries = []
    for param in params:
        if not param.description:
            continue
        text = pysource.clean_text(param.description)
        if not text:
            continue
        first, *rest = text.split("\n")
        entries.append(f"    {param.name}: {first}" + "".join(f"\n        {line}" if line else "\n" for line in rest))
    return "\n\nArgs:\n" + "\n".join(entries) if entries else ""


def _method_view(tool: ToolIR, retarget: _Retarget, imports: Imports) -> MethodView:
    positional: list[ParamView] = []
    keyword_only: list[ParamView] = []
    every: list[ParamView] = []
    root_arguments: PyIdent | None = None  # input model is a RootModel: this parameter is the whole dict
    if tool.input_root_annotation is not None:
        any_name = imports.add("typing", "Any")
        annotation = pysource.expr(
            ast.Subscript(
                value=ast.Name(id="dict", ctx=ast.Load()),
                slice=ast.Tuple(elts=[ast.Name(id="str", ctx=ast.Load()), ast.Name(id=any_name, ctx=ast.Load())],
                                ctx=ast.Load()),
                ctx=ast.Load(),
            )
        )
        root_arguments = pysource.ident("arguments")
        positional.append(ParamView(root_arguments, pysource.literal("arguments"), annotation, None))
    for param in tool.params:
        if param.required:
            view = ParamView(pysource.ident(param.name), pysource.literal(param.wire_name),
                             retarget.convert(param.annotation), None)
            positional.append(view)
        elif param.has_default:
            view = ParamView(pysource.ident(param.name), pysource.literal(param.wire_name),
                             retarget.convert(param.annotation), pysource.literal(param.default))
            keyword_only.append(view)
        else:
            view = ParamView(pysource.ident(param.name), pysource.literal(param.wire_name),
                             retarget.convert(_or_none(param.annotation)), pysource.literal(None))
            keyword_only.append(view)
        every.append(view)
    if tool.output_class is None:
        returns = _expr_name(imports.add("mcpgen_runtime.content", "ToolResult"))
        output_model = None
    elif tool.output_root_annotation is not None:
        returns = retarget.convert(tool.output_root_annotation)
        output_model = _model_ref(tool.output_class)
    else:
        returns = _model_ref(tool.output_class)
        output_model = returns
    docstring = pysource.docstring(_tool_text(tool) + _args_section(tool.params), indent=_METHOD_INDENT)
    name = pysource.ident(tool.method_name)
    wire = pysource.literal(tool.wire_name)
    call = pysource.ident("_call" if output_model is None else "_call_structured")
    call_args: tuple[PySource, ...] = (_model_ref(tool.input_class),)
    if output_model is not None:
        call_args += (output_model,)
    is_root = tool.output_root_annotation is not None
    items = [(view.wire, view.name) for view in every]

    def layout(is_async: bool) -> Layout:
        params = ["self", *(f"{p.name}: {p.annotation}" for p in positional)]
        if keyword_only:
            params += ["*", *(f"{p.name}: {p.annotation} = {p.default}" for p in keyword_only)]
        prefix = "async " if is_async else ""
        signature = f"{_CLASS_INDENT}{prefix}def {name}({', '.join(params)}) -> {returns}:"
        one_line_args = (
            pysource.join([root_arguments], ", ") if root_arguments is not None else pysource.dict_display(items)
        )
        head = f"{_METHOD_INDENT}{'_result = ' if is_root else 'return '}{'await ' if is_async else ''}self.{call}("
        call_line = head + ", ".join([wire, one_line_args, *call_args]) + ")"
        explode_call = len(call_line) > LINE_LENGTH
        arguments = one_line_args
        if explode_call and root_arguments is None and len(_METHOD_INDENT + "    " + one_line_args + ",") > LINE_LENGTH:
            arguments = pysource.dict_display(items, indent=_METHOD_INDENT + "    ")
        return Layout(len(signature) > LINE_LENGTH, explode_call, arguments)

    return MethodView(
        name=name,
        wire=wire,
        positional=tuple(positional),
        keyword_only=tuple(keyword_only),
        call=call,
        call_args=call_args,
        output_is_root=is_root,
        returns=returns,
        docstring=docstring,
        sync=layout(False),
        async_=layout(True),
    )


def _handler_view(tool: ToolIR, retarget: _Retarget, *, tool_return: str) -> HandlerView:
    if tool.output_class is None:
        returns = _expr_name(tool_return)
        output_model = None
    elif tool.output_root_annotation is not None:
        returns = retarget.convert(tool.output_root_annotation)
        output_model = _model_ref(tool.output_class)
    else:
        returns = _model_ref(tool.output_class)
        output_model = returns
    return HandlerView(
        name=pysource.ident(tool.method_name),
        method=pysource.literal(str(pysource.ident(tool.method_name))),
        wire=pysource.literal(tool.wire_name),
        input_model=_model_ref(tool.input_class),
        output_model_or_none=output_model if output_model is not None else pysource.literal(None),
        output_is_root=pysource.literal(tool.output_root_annotation is not None),
        returns=returns,
        docstring=pysource.docstring(_tool_text(tool), indent=_METHOD_INDENT),
    )


def _check_method_names(ir: PackageIR, module_names: set[str]) -> None:
    for tool in ir.tools:
        if tool.method_name in module_names:
            raise InternalGeneratorError(f"method {tool.method_name!r} would shadow a module-level name")


def _runtime_check_context(ir: PackageIR) -> dict[str, Any]:
    return {
        "generator": pysource.literal(f"mcpgen {ir.generator_version}"),
        "api_version": pysource.literal(ir.runtime_api_version),
    }


# ------------------------------------------------------------------------------------------ modules


def render_models(ir: PackageIR) -> str:
    imports = Imports(future=True)
    for imp in ir.models.imports:
        imports.add(imp.module, imp.name, imp.local)
    return _render(
        "models.py.jinja",
        header=_header(ir),
        imports=imports.block(),
        body=pysource.generated_code(ir.models.source, origin="datamodel-code-generator"),
    )


def render_client(ir: PackageIR) -> dict[str, str]:
    """`__init__.py`, `models.py`, `client.py` (unformatted)."""
    imports = Imports()
    fixed = {
        "RUNTIME_API_VERSION": imports.add("mcpgen_runtime._version", "RUNTIME_API_VERSION"),
        "_ClientBase": imports.add("mcpgen_runtime.client", "Client", "_ClientBase"),
        "_AsyncClientBase": imports.add("mcpgen_runtime.client", "AsyncClient", "_AsyncClientBase"),
        "load_package_tools": imports.add("mcpgen_runtime.tools", "load_package_tools"),
    }
    taken = set(fixed) | {"Client", "AsyncClient", "_m", "_GENERATOR", "_RUNTIME_API", "_TOOL_DEFINITIONS"}
    retarget = _Retarget(ir.models.classes, ir.models.imports, imports, taken)
    methods = [_method_view(tool, retarget, imports) for tool in ir.tools]
    if ir.tools:
        imports.add(".", "models", "_m")
    _check_method_names(ir, imports.locals() | taken)
    header = _header(ir)
    client = _render(
        "client/client.py.jinja",
        header=header,
        imports=imports.block(),
        methods=methods,
        **_runtime_check_context(ir),
    )
    return {
        "__init__.py": _render("client/__init__.py.jinja", header=header),
        "models.py": render_models(ir),
        "client.py": client,
    }


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
    retarget = _Retarget(ir.models.classes, ir.models.imports, base_imports, taken)
    handlers = [_handler_view(tool, retarget, tool_return="ToolReturn") for tool in ir.tools]
    if ir.tools:
        base_imports.add("mcpgen_runtime.server", "ToolContext")
        base_imports.add(".", "models", "_m")
        if any(tool.output_class is None for tool in ir.tools):
            base_imports.add("mcpgen_runtime.server", "ToolReturn")
    _check_method_names(ir, base_imports.locals() | taken)
    base = _render(
        "server/base.py.jinja",
        header=header,
        imports=base_imports.block(),
        handlers=handlers,
        **_runtime_check_context(ir),
    )

    # handlers.py needs the same annotations; plan its own imports the same way.
    user_imports = Imports()
    user_imports.add(".base", "ServerBase")
    user_retarget = _Retarget(ir.models.classes, ir.models.imports, user_imports, {"Server", "ServerBase", "_m"})
    user_handlers = [_handler_view(tool, user_retarget, tool_return="ToolReturn") for tool in ir.tools]
    if ir.tools:
        user_imports.add("mcpgen_runtime.server", "ToolContext")
        user_imports.add(".", "models", "_m")
        if any(tool.output_class is None for tool in ir.tools):
            user_imports.add("mcpgen_runtime.server", "ToolReturn")
    handlers_py = _render(
        "server/handlers.py.jinja",
        header=header,
        imports=user_imports.block(),
        handlers=user_handlers,
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


def tools_json(definitions: Iterable[Mapping[str, Any]]) -> str:
    import json

    return json.dumps({"tools": list(definitions)}, indent=2, ensure_ascii=True, allow_nan=False) + "\n"
