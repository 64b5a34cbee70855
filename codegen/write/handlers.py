"""The user's `handlers.py` checked against its regenerated package, read with `ast` (never imported).

`mcpgen generate` never rewrites handlers.py, so a spec change can leave it behind:

- a tool added to the spec has no method in `class Server` (its calls answer "not implemented"), nor
  has a resource template, prompt or completable argument (their bindings in base.py; issue 22);
- a tool removed from the spec leaves code that names what models.py or base.py no longer define
  (`_m.GetWeatherInput`), and the package no longer imports;
- a method that handles no tool any more is dead code;
- a handler reads `args.location` after the spec renamed `location` to `city` (its input model has no
  such field any more: the read fails when the handler runs, and type checkers refuse it).

`check_handlers` finds all four (the last through handler_args.py). Each name the package no longer
defines is reported with when Python evaluates it, which decides what happens: when handlers.py is
imported (an import, module or class level code, an annotation without `from __future__ import
annotations`: the server cannot start), when a function runs (its calls fail), or never (an
annotation left unevaluated: only type checkers see it). The stub for a missing method is cut from
the scaffold handlers.py the renderer writes (`GeneratedPackage.user_files`), so it is generated
code (names by the generator's naming rules, descriptions escaped as in base.py), never text built
here; `add_stubs` appends those methods to the user's class (plus any import they need that the
file lacks) and leaves every other byte of the file as it was.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import McpgenError
from .handler_args import StaleRead, stale_reads

__all__ = [
    "HandlersReport",
    "Missing",
    "StubError",
    "add_stubs",
    "check_handlers",
    "implemented_tools",
]

_CLASS = "Server"  # __init__.py and __main__.py import this name from handlers.py
_PACKAGE_MODULES = ("models", "base")


class StubError(McpgenError):
    """`--add-stubs` cannot place the methods (no `class Server`, a one-line class, ...)."""


# When Python evaluates a piece of handlers.py: "import" (importing it: the server cannot start),
# "call" (when the function around it runs), "annotation" (never: an annotation left unevaluated).
When = Literal["import", "call", "annotation"]

# PEP 649: from Python 3.14 annotations are evaluated only when asked for (the runtime never asks);
# the generator judges with its own interpreter, which is usually the one that serves.
_LAZY_ANNOTATIONS = sys.version_info >= (3, 14)


@dataclass(frozen=True)
class Missing:
    line: int
    name: str  # as written: `_m.GetWeatherInput`, `GetWeatherInput`
    module: str  # "models" or "base"
    when: When = "import"
    function: str = ""  # the top-level function or method around it ("" at module or class level)


@dataclass(frozen=True)
class HandlersReport:
    path: Path
    unimplemented: tuple[tuple[str, str], ...] = ()  # (tool wire name, method)
    missing: tuple[Missing, ...] = ()  # names the file uses that the package no longer defines
    stale_methods: tuple[tuple[int, str], ...] = ()  # (line, method) handling no tool any more
    problem: str = ""  # the file could not be read as expected (syntax error, no class Server)
    stubs: str = ""  # methods to paste into class Server, indented for it
    imports: tuple[str, ...] = field(default=())  # import lines the stubs need that the file lacks
    stale_reads: tuple[StaleRead, ...] = ()  # args.<field> the tool's input no longer has

    @property
    def broken(self) -> bool:
        """The package cannot import (or serve) until handlers.py is fixed."""
        return bool(self.problem) or any(m.when == "import" for m in self.missing)

    @property
    def drifted(self) -> bool:
        """handlers.py uses something the spec no longer has (`generate --check` fails on it)."""
        return bool(self.problem or self.missing or self.stale_reads)

    @property
    def clean(self) -> bool:
        return not (
            self.unimplemented or self.missing or self.stale_methods or self.problem or self.stale_reads
        )


def _parse(source: bytes | str, what: str) -> ast.Module:
    return ast.parse(source, filename=what)


def _defined_names(tree: ast.Module) -> set[str]:
    """Every name a module binds at its top level (inside `if`/`try` blocks too) and lists in `__all__`."""
    names: set[str] = set()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
                and isinstance(node.value, (ast.List, ast.Tuple))
            ):
                names.update(
                    e.value
                    for e in node.value.elts
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                )
        elif isinstance(node, ast.If):
            stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                stack.extend(handler.body)
    return names


_SURFACE_BINDINGS = {  # binding call -> the keyword that names what it serves
    "ResourceTemplateBinding": "uri_template",
    "PromptBinding": "name",
    "CompletionBinding": "argument",
}


def _tool_methods(base: ast.Module, *, tools_only: bool = False) -> list[tuple[str, str]]:
    """(wire name, method) of every tool, from `ServerBase._tool_bindings_` in base.py, then (unless
    `tools_only`) of every resource template, prompt and completion (their bindings) and the static
    resources' reader."""
    found: list[tuple[str, str]] = []
    surfaces: list[tuple[str, str]] = []
    for node in ast.walk(base):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ToolBinding":
            kw = {k.arg: k.value for k in node.keywords}
            name, method = kw.get("name"), kw.get("method")
            if isinstance(name, ast.Constant) and isinstance(method, ast.Constant):
                found.append((str(name.value), str(method.value)))
        elif tools_only:
            continue
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in _SURFACE_BINDINGS:
            kw = {k.arg: k.value for k in node.keywords}
            what, method = kw.get(_SURFACE_BINDINGS[str(getattr(node.func, "id", ""))]), kw.get("method")
            if isinstance(what, ast.Constant) and isinstance(method, ast.Constant):
                surfaces.append((str(what.value), str(method.value)))
        elif (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_static_resource_method_" for t in node.targets)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            surfaces.append(("static resources", node.value.value))
    order = {method: i for i, method in enumerate(_method_order(base))}
    surfaces.sort(key=lambda entry: order.get(entry[1], len(order)))
    return found + surfaces


def _method_order(base: ast.Module) -> list[str]:
    cls = next((n for n in base.body if isinstance(n, ast.ClassDef)), None)
    if cls is None:
        return []
    return [n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _find_class(tree: ast.Module) -> ast.ClassDef | None:
    return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == _CLASS), None)


def _class_methods(tree: ast.Module, cls: ast.ClassDef) -> set[str]:
    """Names `cls` defines in its body, and those of classes of the same file it derives from."""
    local = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    names: set[str] = set()
    todo, seen = [cls], set()
    while todo:
        current = todo.pop()
        if current.name in seen:
            continue
        seen.add(current.name)
        for node in current.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        todo.extend(local[b.id] for b in current.bases if isinstance(b, ast.Name) and b.id in local)
    return names


def _module_of(node: ast.ImportFrom | ast.Import, alias: ast.alias, package: str) -> str | None:
    """ "models"/"base" when this import names one of the package's own generated modules."""
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        if node.level == 1 and not module and alias.name in _PACKAGE_MODULES:
            return alias.name  # from . import models as _m
        if node.level == 0 and module == package and alias.name in _PACKAGE_MODULES:
            return alias.name  # from weather_server import models
        return None
    parts = alias.name.split(".")
    if len(parts) == 2 and parts[0] == package and parts[1] in _PACKAGE_MODULES and alias.asname:
        return parts[1]  # import weather_server.models as _m
    return None


def _imported_from(node: ast.ImportFrom, package: str) -> str | None:
    """ "models"/"base" when `from <it> import X` reads X from one of the package's generated modules."""
    module = node.module or ""
    if node.level == 1 and module in _PACKAGE_MODULES:
        return module
    if node.level == 0 and module in {f"{package}.{m}" for m in _PACKAGE_MODULES}:
        return module.rsplit(".", 1)[1]
    return None


def _evaluated(tree: ast.Module) -> Iterator[tuple[ast.AST, When, str]]:
    """Every node of `tree` with when Python evaluates it and the top-level function or method around
    it: a function's body runs when it is called, its decorators and defaults where it is defined, its
    annotations there too unless they are deferred (`from __future__ import annotations`, Python 3.14);
    a local variable's annotation is never evaluated."""
    deferred = _LAZY_ANNOTATIONS or any(
        isinstance(node, ast.ImportFrom)
        and node.module == "__future__"
        and any(a.name == "annotations" for a in node.names)
        for node in tree.body
    )
    stack: list[tuple[ast.AST, When, str]] = [(tree, "import", "")]
    while stack:
        node, when, function = stack.pop()
        yield node, when, function
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            defaults = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
            stack.extend((default, when, function) for default in defaults)
            inner = function or getattr(node, "name", "<lambda>")
            if isinstance(node, ast.Lambda):
                stack.append((node.body, "call", inner))
                continue
            stack.extend((decorator, when, function) for decorator in node.decorator_list)
            annotated: When = "annotation" if deferred else when
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            stack.extend((a.annotation, annotated, function) for a in every if a and a.annotation)
            if node.returns is not None:
                stack.append((node.returns, annotated, function))
            stack.extend((statement, "call", inner) for statement in node.body)
        elif isinstance(node, ast.AnnAssign):
            annotated = "annotation" if deferred or when == "call" else when
            stack.append((node.annotation, annotated, function))
            stack.extend((child, when, function) for child in (node.target, node.value) if child)
        else:
            stack.extend((child, when, function) for child in ast.iter_child_nodes(node))


def _missing_names(
    evaluated: list[tuple[ast.AST, When, str]], defined: Mapping[str, set[str]], package: str
) -> list[Missing]:
    aliases: dict[str, str] = {}  # local name -> "models" / "base"
    missing: list[Missing] = []
    for node, when, function in evaluated:
        if isinstance(node, ast.ImportFrom):
            owner = _imported_from(node, package)
            for alias in node.names:
                if owner is not None and alias.name != "*" and alias.name not in defined[owner]:
                    missing.append(Missing(node.lineno, alias.name, owner, when, function))
                module = _module_of(node, alias, package)
                if module is not None:
                    aliases[alias.asname or alias.name] = module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module = _module_of(node, alias, package)
                if module is not None and alias.asname:
                    aliases[alias.asname] = module
    for node, when, function in evaluated:
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr not in defined[aliases[node.value.id]]
        ):
            name = f"{node.value.id}.{node.attr}"
            missing.append(Missing(node.lineno, name, aliases[node.value.id], when, function))
    # one report per place, the earliest evaluation winning (an import beats a call beats never)
    unique: dict[tuple[int, str], Missing] = {}
    for m in sorted(missing, key=lambda m: ("import", "call", "annotation").index(m.when), reverse=True):
        unique[(m.line, m.name)] = m
    return sorted(unique.values(), key=lambda m: (m.line, m.name))


def _indent_of(cls: ast.ClassDef, lines: list[str]) -> str | None:
    first = cls.body[0]
    if first.lineno == cls.lineno:
        return None  # `class Server(ServerBase): pass`
    line = lines[first.lineno - 1]
    return line[: len(line) - len(line.lstrip())]


def _stubs(
    scaffold: bytes, methods: Iterable[str], user_tree: ast.Module, indent: str
) -> tuple[str, tuple[str, ...]]:
    """The scaffold's methods for `methods` (re-indented for the user's class) and the scaffold's
    imports of names those methods use that the user's file does not bind."""
    text = scaffold.decode("utf-8")
    tree = _parse(text, "handlers.py (scaffold)")
    cls = _find_class(tree)
    if cls is None:
        return "", ()
    wanted = set(methods)
    lines = text.splitlines()
    chunks: list[str] = []
    used: set[str] = set()
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in wanted:
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            chunk = lines[start - 1 : node.end_lineno]
            scaffold_indent = chunk[0][: len(chunk[0]) - len(chunk[0].lstrip())]
            chunks.append(
                "\n".join(
                    indent + line[len(scaffold_indent) :] if line.startswith(scaffold_indent) else line
                    for line in chunk
                )
            )
            used.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
    have = _defined_names(user_tree)
    imports: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            needed = [
                a for a in node.names if (a.asname or a.name) in used and (a.asname or a.name) not in have
            ]
            if needed:
                imports.append(
                    ast.unparse(ast.ImportFrom(module=node.module, names=needed, level=node.level))
                )
    return "\n\n".join(chunks), tuple(imports)


def check_handlers(
    package_dir: Path, package: str, files: Mapping[str, bytes], scaffold: bytes | None
) -> HandlersReport | None:
    """handlers.py of the server package in `package_dir` against the package's generated `files`
    (base.py and models.py as just generated); None when there is no handlers.py (nothing to check)."""
    path = package_dir / "handlers.py"
    if not path.is_file() or "base.py" not in files or "models.py" not in files:
        return None
    try:
        tree = _parse(path.read_bytes(), str(path))
    except SyntaxError as exc:
        return HandlersReport(path, problem=f"line {exc.lineno}: cannot be parsed: {exc.msg}")
    except (OSError, ValueError) as exc:
        return HandlersReport(path, problem=f"cannot be read: {exc}")
    base = _parse(files["base.py"], "base.py")
    models = _parse(files["models.py"], "models.py")
    defined = {"models": _defined_names(models), "base": _defined_names(base)}
    missing = tuple(_missing_names(list(_evaluated(tree)), defined, package))
    cls = _find_class(tree)
    if cls is None:
        return HandlersReport(
            path, missing=missing, problem=f"has no top-level `class {_CLASS}`, which the package imports"
        )
    tools = _tool_methods(base)
    implemented = _class_methods(tree, cls)
    unimplemented = tuple((name, method) for name, method in tools if method not in implemented)
    tool_methods = {method for _name, method in tools}
    stale = tuple(
        (node.lineno, node.name)
        for node in cls.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and not node.name.startswith("_")
        and node.name not in tool_methods
        and any(
            isinstance(a.annotation, ast.Attribute) for a in node.args.args[1:2]
        )  # (self, args: _m.X, ...)
    )
    stubs = ""
    imports: tuple[str, ...] = ()
    indent = _indent_of(cls, path.read_text("utf-8").splitlines())
    if unimplemented and scaffold is not None:
        stubs, imports = _stubs(scaffold, [m for _n, m in unimplemented], tree, indent or "    ")

    def source_of(rel: str) -> str | None:  # a models module as just generated, else as on disk
        try:
            data = files[rel] if rel in files else (package_dir / rel).read_bytes()
        except OSError:
            return None
        return data.decode("utf-8", "replace")

    reads = tuple(stale_reads(cls, base, models, source_of))
    return HandlersReport(path, unimplemented, missing, stale, "", stubs, imports, reads)


def implemented_tools(package_dir: Path) -> dict[str, int]:
    """Tool wire name -> line of its method in the package's handlers.py, for every tool the package's
    base.py (as last generated) binds and `class Server` implements; empty when either file is missing
    or cannot be parsed (`mcpgen diff` then judges added tools as it would without handlers)."""
    try:
        base = _parse((package_dir / "base.py").read_bytes(), "base.py")
        tree = _parse((package_dir / "handlers.py").read_bytes(), "handlers.py")
    except (OSError, SyntaxError, ValueError):
        return {}
    cls = _find_class(tree)
    if cls is None:
        return {}
    lines = {
        node.name: node.lineno
        for node in cls.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    implemented = _class_methods(tree, cls)
    return {
        name: lines.get(method, cls.lineno)
        for name, method in _tool_methods(base, tools_only=True)
        if method in implemented
    }


def add_stubs(report: HandlersReport) -> bytes:
    """handlers.py with the report's stubs appended to `class Server` (and the imports they need
    added after the file's last top-level import); every other line unchanged."""
    if report.problem:
        raise StubError(f"{report.path}: {report.problem}; add the methods by hand")
    text = report.path.read_text("utf-8")
    tree = _parse(text, str(report.path))
    cls = _find_class(tree)
    if cls is None:
        raise StubError(f"{report.path}: has no top-level `class {_CLASS}`; add the methods by hand")
    lines = text.splitlines(keepends=True)
    if _indent_of(cls, [line.rstrip("\r\n") for line in lines]) is None:
        raise StubError(f"{report.path}: `class {_CLASS}` is written on one line; add the methods by hand")
    if not report.stubs:
        return text.encode("utf-8")
    assert cls.end_lineno is not None
    end = cls.end_lineno
    if lines and not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    lines[end:end] = ["\n", *(line + "\n" for line in report.stubs.split("\n"))]
    if report.imports:
        imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        at = imports[-1].end_lineno if imports else 0
        assert at is not None
        lines[at:at] = [line + "\n" for line in report.imports]
    return "".join(lines).encode("utf-8")
