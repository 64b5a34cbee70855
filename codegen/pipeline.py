"""MODEL -> RENDER -> FORMAT for one package, in memory.

    build_client(spec, package="weather_client") -> GeneratedPackage
        __init__.py, models.py, client.py, tools.json
    build_server(spec, package="weather_server") -> GeneratedPackage
        __init__.py, models.py, base.py, __main__.py, tools.json; user file handlers.py

The same ValidatedSpec always gives the same bytes: no timestamps, no absolute paths, tool order as
in the input, names chosen independently of input order. Writing the files is `write.py`'s job.
"""

from __future__ import annotations

import ast

from .errors import InternalGeneratorError
from .fmt import format_python
from .ir import PackageIR
from .modelgen import build_ir
from .render import render_client, render_server, tools_json
from .spec import GeneratedPackage, ValidatedSpec

__all__ = ["build_client", "build_server"]


def _check_package_name(package: str) -> None:
    parts = package.split(".")
    if not all(part.isascii() and part.isidentifier() for part in parts):
        raise InternalGeneratorError(f"package name {package!r} is not a dotted Python identifier")


def _encode(files: dict[str, str]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted(files):
        text = files[path]
        if path.endswith(".py"):
            text = format_python(path, text)
        out[path] = text.encode("utf-8")
    return out


def _verify_methods(ir: PackageIR, path: str, text: str, classes: tuple[str, ...]) -> None:
    """The formatted module defines exactly the planned methods in each generated class."""
    module = ast.parse(text, filename=path)
    planned = [tool.method_name for tool in ir.tools]
    found = {node.name: node for node in module.body if isinstance(node, ast.ClassDef)}
    for name in classes:
        cls = found.get(name)
        if cls is None:
            raise InternalGeneratorError(f"generated {path} lacks class {name}")
        methods = [node.name for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if methods != planned:
            raise InternalGeneratorError(f"generated {path}: class {name} methods differ from the plan")


def build_client(spec: ValidatedSpec, *, package: str) -> GeneratedPackage:
    _check_package_name(package)
    ir = build_ir(spec, package=package)
    files = _encode(render_client(ir))
    _verify_methods(ir, "client.py", files["client.py"].decode("utf-8"), ("Client", "AsyncClient"))
    files["tools.json"] = tools_json(ir.definitions).encode("utf-8")
    return GeneratedPackage(package=package, files=dict(sorted(files.items())))


def build_server(spec: ValidatedSpec, *, package: str) -> GeneratedPackage:
    _check_package_name(package)
    ir = build_ir(spec, package=package)
    owned, user = render_server(ir)
    files = _encode(owned)
    _verify_methods(ir, "base.py", files["base.py"].decode("utf-8"), ("ServerBase",))
    user_files = _encode(user)
    _verify_methods(ir, "handlers.py", user_files["handlers.py"].decode("utf-8"), ("Server",))
    files["tools.json"] = tools_json(ir.definitions).encode("utf-8")
    return GeneratedPackage(package=package, files=dict(sorted(files.items())), user_files=user_files)
