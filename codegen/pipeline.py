"""MODEL -> RENDER (already formatted) -> CHECK for one package, in memory.

    build_client(spec, package="weather_client") -> GeneratedPackage
        __init__.py, models.py, client.py, tools.json
    build_server(spec, package="weather_server") -> GeneratedPackage
        __init__.py, models.py, base.py, __main__.py, tools.json; user file handlers.py

The same ValidatedSpec always gives the same bytes: no timestamps, no absolute paths, tool order as
in the input, names chosen independently of input order. Every module comes out of `render` in
black's layout (see `fmt`); here each is compiled once (a syntax error is a bug in mcpgen) and the
generated classes are checked against the plan: each defines exactly the planned methods, in order.
Writing the files is `write.py`'s job.

A client and a server built from the same ValidatedSpec object share one model (the IR and the
models.py text are computed once).
"""

from __future__ import annotations

import dataclasses
import types

from .errors import InternalGeneratorError
from .fmt import compile_python
from .ir import PackageIR
from .modelgen import build_ir
from .render import render_client, render_server, tools_json
from .spec import GeneratedPackage, ValidatedSpec

__all__ = ["build_client", "build_server"]

_IR_CACHE: dict[int, tuple[ValidatedSpec, PackageIR]] = {}
_IR_CACHE_SIZE = 4


def _check_package_name(package: str) -> None:
    parts = package.split(".")
    if not all(part.isascii() and part.isidentifier() for part in parts):
        raise InternalGeneratorError(f"package name {package!r} is not a dotted Python identifier")


def _ir_for(spec: ValidatedSpec, package: str) -> PackageIR:
    """build_ir, reused for the same spec object (client and server of one source)."""
    hit = _IR_CACHE.get(id(spec))
    if hit is not None and hit[0] is spec and hit[1].digest == spec.digest and len(hit[1].tools) == len(spec.tools):
        return dataclasses.replace(hit[1], package=package)
    ir = build_ir(spec, package=package)
    _IR_CACHE[id(spec)] = (spec, ir)
    while len(_IR_CACHE) > _IR_CACHE_SIZE:
        del _IR_CACHE[next(iter(_IR_CACHE))]
    return ir


def _encode(files: dict[str, str], compiled: dict[str, types.CodeType]) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted(files):
        text = files[path]
        if path.endswith(".py"):
            compiled[path] = compile_python(path, text)
        out[path] = text.encode("utf-8")
    return out


def _functions(code: types.CodeType) -> list[str]:
    return [const.co_name for const in code.co_consts if isinstance(const, types.CodeType)]


def _verify_methods(ir: PackageIR, path: str, module: types.CodeType, classes: tuple[str, ...]) -> None:
    """The compiled module defines exactly the planned methods in each generated class, in order."""
    planned = [tool.method_name for tool in ir.tools]
    bodies = {const.co_name: const for const in module.co_consts if isinstance(const, types.CodeType)}
    for name in classes:
        body = bodies.get(name)
        if body is None:
            raise InternalGeneratorError(f"generated {path} lacks class {name}")
        if _functions(body) != planned:
            raise InternalGeneratorError(f"generated {path}: class {name} methods differ from the plan")


def build_client(spec: ValidatedSpec, *, package: str) -> GeneratedPackage:
    _check_package_name(package)
    ir = _ir_for(spec, package)
    compiled: dict[str, types.CodeType] = {}
    files = _encode(render_client(ir), compiled)
    _verify_methods(ir, "client.py", compiled["client.py"], ("Client", "AsyncClient"))
    files["tools.json"] = tools_json(ir.definitions).encode("utf-8")
    return GeneratedPackage(package=package, files=dict(sorted(files.items())))


def build_server(spec: ValidatedSpec, *, package: str) -> GeneratedPackage:
    _check_package_name(package)
    ir = _ir_for(spec, package)
    owned, user = render_server(ir)
    compiled: dict[str, types.CodeType] = {}
    files = _encode(owned, compiled)
    _verify_methods(ir, "base.py", compiled["base.py"], ("ServerBase",))
    user_files = _encode(user, compiled)
    _verify_methods(ir, "handlers.py", compiled["handlers.py"], ("Server",))
    files["tools.json"] = tools_json(ir.definitions).encode("utf-8")
    return GeneratedPackage(package=package, files=dict(sorted(files.items())), user_files=user_files)
