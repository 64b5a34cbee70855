"""MODEL: tool schemas -> typed models (`ModelsIR`) and one method plan per tool (`ToolIR`).

Every schema is read into the closest *honest* Python type: the type accepts every instance the
schema accepts (it may accept more; it never rejects a valid value). What a type cannot say
(`if`/`then`/`else`, `not`, `dependentSchemas`, `pattern`, `format`, `uniqueItems`, ...) is left to
the runtime, which validates against the original schema shipped in tools.json.

    schema                                   Python type
    string / integer / number / boolean      str / int / int | float / bool
    null, a type array with null,            ... | None
      anyOf/oneOf with {"type": "null"}
    enum / const                             Literal[...] (an alias named after the property when it
                                             has two or more values); floats, objects and arrays as
                                             float, dict[str, Any], list[Any]
    object with properties (also merged      a BaseModel: fields in schema order, wire names as
      through allOf and $ref)                aliases; additionalProperties false -> extra="forbid",
                                             otherwise extra="allow" (nothing a server sends is lost)
    object without properties                dict[str, V] (additionalProperties / patternProperties)
    array / prefixItems                      list[T]; tuple[A, B] when the length is fixed
    anyOf / oneOf                            A | B; Annotated[A | B, Field(discriminator=...)] when
                                             every member is a model tagged by a distinct const
    $ref (also recursive, to the root)       the target's class; a RootModel breaks other cycles
    true, {}, no type keyword                Any

The stage in steps, each its own module:

    classnames    plan `<Stem>Input` / `<Stem>Output` per tool (reserved first), `$defs` stems and
                  path names of nested classes; a clash gets a numeric suffix
    schemadoc     open each tool member schema: refs resolved to pointers, cost limits (SCHEMA-11)
    shareddefs    identical `$defs` entries of several tools: one class, named without a tool
    schemafacts   what a subschema (through $ref and allOf) says about a value's shape
    typebuild     facts -> type expressions, BaseModel / RootModel classes and Literal aliases
    fields        one field's description, default and bounds
    build         (here) the package: every tool's classes, then method parameters per tool

Field names come from `naming.field_names` (keywords, BaseModel members and builtin type names
avoided; the wire name is kept as the alias); method names from `naming.method_names`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcpgen_runtime._version import RUNTIME_API_VERSION

from .. import RELEASE
from ..errors import NameCollisionError, UnsupportedSchemaError
from ..spec import ValidatedSpec
from . import naming
from .classnames import ClassNames, ClassPlan, plan_classes
from .fields import MAX_DESCRIPTION
from .ir import ModelDef, ModelRef, ModelsIR, PackageIR, ParamIR, Prim, ToolIR, TypeExpr, Union, union
from .schemadoc import MAX_DEPTH, MAX_SECONDS, MAX_SUBSCHEMAS, MAX_VISITS, SchemaDoc
from .shareddefs import plan_shared
from .surfaces import build_surfaces
from .typebuild import TypeBuilder

__all__ = [
    "MAX_DEPTH",
    "MAX_DESCRIPTION",
    "MAX_SECONDS",
    "MAX_SUBSCHEMAS",
    "MAX_VISITS",
    "ClassPlan",
    "Stopped",
    "build_ir",
    "build_models",
    "plan_classes",
]


class Stopped(Exception):
    """`build_ir` was asked to stop: its result is no longer wanted."""


def build_models(
    tools: list[dict[str, Any]], stop: Callable[[], bool] | None = None
) -> tuple[list[ClassPlan], ModelsIR]:
    """The planned tool classes and the models module; `stop` is asked between schemas."""
    names = ClassNames()
    plans = plan_classes(tools, names)
    builder = TypeBuilder(names)
    docs: list[tuple[SchemaDoc, ClassPlan]] = []
    for key, (tool, plan) in enumerate(zip(tools, plans, strict=True)):
        docs.append((builder.document(2 * key, tool, "inputSchema", plan.input_class, plan.stem), plan))
        if plan.output_class is not None:
            docs.append(
                (builder.document(2 * key + 1, tool, "outputSchema", plan.output_class, plan.stem), plan)
            )
    shared = plan_shared(doc for doc, _plan in docs)
    shared.apply_stems()
    builder.share(shared.redirects)
    try:
        for doc, _plan in docs:
            if stop is not None and stop():
                raise Stopped
            root = builder.type_at(doc, "", 0)
            # the root is no object model: wrap it in a RootModel
            if root != ModelRef(doc.root_class) and builder.models.get(doc.root_class) is None:
                builder.models[doc.root_class] = ModelDef(name=doc.root_class, root=root)
    except RecursionError as exc:  # pragma: no cover - MAX_DEPTH keeps the stack far below the limit
        raise UnsupportedSchemaError("schemas nested too deeply to model (SCHEMA-11)") from exc
    return plans, builder.finish()


def _param_name(field_name: str, used: set[str]) -> str:
    name = field_name if field_name != "self" else "self_"
    base, number = name, 1
    while name in used:
        number += 1
        name = f"{base}_{number}"
    used.add(name)
    return name


def _params(model: ModelDef) -> tuple[ParamIR, ...]:
    """The input model's fields as method parameters: the required ones in the schema's `required`
    order (which a caller reads in the tool's documentation), then the others in schema order."""
    used: set[str] = set()
    names = {f.name: _param_name(f.name, used) for f in model.fields}  # in schema order: stable
    by_name = {f.name: f for f in model.fields}
    required = set(model.required)
    ordered = [by_name[name] for name in model.required]
    ordered += [f for f in model.fields if f.name not in required]
    params = []
    for f in ordered:
        scalar_default = f.has_default and (
            f.default is None or isinstance(f.default, (str, int, float, bool))
        )
        params.append(
            ParamIR(
                name=names[f.name],
                field_name=f.name,
                wire_name=f.wire_name,
                type=f.type if f.required or f.nullable else _without_none(f.type),
                required=f.required,
                has_default=scalar_default,
                default=f.default if scalar_default else None,
                description=f.description,
            )
        )
    return tuple(params)


def _without_none(type_: TypeExpr) -> TypeExpr:
    if isinstance(type_, Union):  # `None` told by class and name: cheaper than the dataclasses' __eq__
        return union([m for m in type_.members if not (type(m) is Prim and m.name == "None")])
    return type_


def _text(tool: Mapping[str, Any], key: str) -> str | None:
    value = tool.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _task_support(tool: Mapping[str, Any]) -> str | None:
    """The tool's `execution.taskSupport` when it lets the tool run as a task: "optional" or "required"."""
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    return value if isinstance(value, str) and value in ("optional", "required") else None


def build_ir(spec: ValidatedSpec, *, package: str, stop: Callable[[], bool] | None = None) -> PackageIR:
    """Validated tools -> PackageIR. `stop`: asked between schemas; True raises `Stopped` (the
    pipeline models tools while they are validated, and stops once validation rejects them)."""
    tools = [dict(tool) for tool in spec.tools]
    wire_names = [tool["name"] for tool in tools]
    if len(set(wire_names)) != len(wire_names):
        raise NameCollisionError("duplicate tool names reached the generator (TOOLS-15)")
    plans, models = build_models(tools, stop)
    by_name = {model.name: model for model in models.models}
    methods = naming.method_names(wire_names)
    tool_irs: list[ToolIR] = []
    for tool, plan in zip(tools, plans, strict=True):
        input_model = by_name[plan.input_class]
        output_root = None
        if plan.output_class is not None:
            output_root = by_name[plan.output_class].root
        tool_irs.append(
            ToolIR(
                wire_name=plan.wire_name,
                method_name=methods[plan.wire_name],
                input_class=plan.input_class,
                output_class=plan.output_class,
                output_root=output_root,
                params=() if input_model.root is not None else _params(input_model),
                description=_text(tool, "description"),
                title=_text(tool, "title"),
                input_root=input_model.root,
                task_support=_task_support(tool),
            )
        )
    return PackageIR(
        package=package,
        source=spec.source,
        digest=spec.digest,
        generator_version=RELEASE,
        runtime_api_version=RUNTIME_API_VERSION,
        tools=tuple(tool_irs),
        models=models,
        definitions=tuple(tools),
        surfaces=build_surfaces(spec, taken=methods.values()),
    )
