"""`args.<field>` reads in the user's handlers.py that a tool's input model no longer has: the spec
renamed `location` to `city` while a handler still reads `args.location` (the read fails when the
handler runs, and type checkers refuse it). Read with `ast` (never imported) against base.py's
bindings and the generated models, which are scanned as text: a 1,000-tool package holds 2.5 MB of
models, and only the modules of handlers that read their input are read.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["StaleRead", "stale_reads"]


@dataclass(frozen=True)
class StaleRead:
    """A handler reads `args.<attribute>`, which its tool's input model does not have (any more)."""

    line: int
    method: str
    attribute: str
    fields: tuple[str, ...]  # the input model's fields now


# What a handler may read on any input model besides its fields: pydantic's BaseModel API.
_MODEL_API = frozenset(
    {
        "model_config",
        "model_fields",
        "model_computed_fields",
        "model_extra",
        "model_fields_set",
        "model_construct",
        "model_copy",
        "model_dump",
        "model_dump_json",
        "model_json_schema",
        "model_parametrized_name",
        "model_post_init",
        "model_rebuild",
        "model_validate",
        "model_validate_json",
        "model_validate_strings",
        "copy",
        "dict",
        "json",
        "parse_obj",
        "parse_raw",
        "parse_file",
        "from_orm",
        "construct",
        "schema",
        "schema_json",
        "validate",
        "update_forward_refs",
    }
)


def _input_models(base: ast.Module) -> dict[str, str]:
    """Method -> the name of its tool's input model, from base.py's `ToolBinding`s."""
    models: dict[str, str] = {}
    for node in ast.walk(base):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ToolBinding":
            kw = {k.arg: k.value for k in node.keywords}
            method, model = kw.get("method"), kw.get("input_model")
            if isinstance(method, ast.Constant) and isinstance(model, ast.Constant):
                models[str(method.value)] = str(model.value)
    return models


def _model_modules(models: ast.Module) -> dict[str, str]:
    """Class name -> its `_models/` module, from models.py's `_MODULES` table."""
    target: ast.expr
    value: ast.expr | None
    for node in models.body:
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "_MODULES" and isinstance(value, ast.Dict):
            return {
                str(k.value): str(v.value)
                for k, v in zip(value.keys, value.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(v, ast.Constant)
            }
    return {}


_MODEL_CLASS = re.compile(r"^class ([A-Za-z_][A-Za-z0-9_]*)\(BaseModel\):\n((?:(?:    .*)?\n)*)", re.M)
_FIELD = re.compile(r"^    ([A-Za-z_][A-Za-z0-9_]*): ", re.M)


def _class_fields(source: str) -> dict[str, tuple[str, ...]]:
    """The fields of each `class X(BaseModel)` in a module the generator laid out (a class line, then
    its body at four spaces: `    field: type ...`); a class that is no plain model (a `RootModel`: its
    input is a union) is left out, so nothing is reported for it. A text scan, not a parse: a
    1,000-tool package holds 2.5 MB of models."""
    return {found.group(1): tuple(_FIELD.findall(found.group(2))) for found in _MODEL_CLASS.finditer(source)}


def stale_reads(
    cls: ast.ClassDef,
    base: ast.Module,
    models: ast.Module,
    source_of: Callable[[str], str | None],
) -> list[StaleRead]:
    """`args.<name>` reads in each tool method of `cls` whose input model has no field `<name>`."""
    inputs = _input_models(base)
    modules: dict[str, str] | None = None
    classes: dict[str, dict[str, tuple[str, ...]]] = {}  # module -> class -> fields
    found: list[StaleRead] = []
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or method.name not in inputs:
            continue
        if len(method.args.args) < 2:
            continue
        param = method.args.args[1].arg  # (self, args, ctx)
        reads: list[ast.Attribute] = []
        rebound = False  # `args = ...` in the body: its attributes are no longer the input's
        for statement in method.body:
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and node.id == param:
                    rebound = rebound or not isinstance(node.ctx, ast.Load)
                elif (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == param
                    and not node.attr.startswith("_")
                    and node.attr not in _MODEL_API
                ):
                    reads.append(node)
        if not reads or rebound:
            continue
        if modules is None:
            modules = _model_modules(models)
        model = inputs[method.name]
        rel = f"_models/{modules[model]}.py" if model in modules else "models.py"
        if rel not in classes:
            text = source_of(rel)
            classes[rel] = _class_fields(text) if text is not None else {}
        fields = classes[rel].get(model)
        if fields is None:
            continue
        unique = {(node.lineno, node.attr): node for node in reads if node.attr not in fields}
        found.extend(StaleRead(line, method.name, attr, fields) for line, attr in sorted(unique))
    return found
