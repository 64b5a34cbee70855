"""MODEL output: what the templates render, with every name resolved and every order fixed.

Built by `build.build_ir` from the validated tools. Types are a small algebra (`TypeExpr`)
that says what a JSON value looks like in Python; `typenodes` turns them into source for
models.py (`X`) and for the client and server modules (`_m.X`), so no text from a spec is
ever spliced into code.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from .surfaces import SurfacesIR

__all__ = [
    "AliasDef",
    "AliasRef",
    "Annotated",
    "DictOf",
    "FieldDef",
    "JsonScalar",
    "ListOf",
    "Lit",
    "ModelDef",
    "ModelRef",
    "ModelsIR",
    "PackageIR",
    "ParamIR",
    "Prim",
    "ToolIR",
    "TupleOf",
    "TypeExpr",
    "Union",
    "class_refs",
    "union",
]

JsonScalar = str | int | float | bool | None
PrimName = Literal["str", "int", "float", "bool", "None", "Any"]

_Frozen = TypeVar("_Frozen", bound=type)


def _slot_init(cls: _Frozen) -> _Frozen:
    """`cls`, a frozen dataclass with slots, with an `__init__` that stores each field through its
    slot: the generated one gets past the frozen `__setattr__` with an `object.__setattr__` call
    per field, which makes a FieldDef twice as dear to create (the model builder creates thousands).
    Same signature and defaults (immutable ones only: no default factories), still frozen."""
    names: list[str] = []
    namespace: dict[str, Any] = {}
    for item in dataclasses.fields(cls):
        assert item.default_factory is dataclasses.MISSING, f"{cls.__name__}.{item.name}: a factory"
        namespace[f"_set_{item.name}"] = cls.__dict__[item.name].__set__  # the slot's own descriptor
        if item.default is dataclasses.MISSING:
            names.append(item.name)
        else:
            namespace[f"_default_{item.name}"] = item.default
            names.append(f"{item.name}=_default_{item.name}")
    body = "".join(f"\n    _set_{item.name}(self, {item.name})" for item in dataclasses.fields(cls))
    exec(f"def __init__(self, {', '.join(names)}):{body}", namespace)  # as `dataclasses` builds one
    namespace["__init__"].__qualname__ = f"{cls.__qualname__}.__init__"
    setattr(cls, "__init__", namespace["__init__"])  # noqa: B010 - mypy rejects `cls.__init__ = ...`
    return cls


# ---------------------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class Prim:
    """`str`, `int`, `float`, `bool`, `None` or `Any`."""

    name: PrimName


@dataclass(frozen=True, slots=True, eq=False)
class Lit:
    """`Literal[...]` of strings, integers and booleans (never floats or None).

    Compared by value *and* type: `True == 1` in Python, but `Literal[True]` is not `Literal[1]`
    (type expressions are memoised and deduplicated by equality)."""

    values: tuple[str | int | bool, ...]

    def _typed(self) -> tuple[tuple[type, str | int | bool], ...]:
        return tuple((type(value), value) for value in self.values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lit) and self._typed() == other._typed()

    def __hash__(self) -> int:
        return hash(self._typed())


# Repeats in shape only (duplicates): one small frozen dataclass per node kind of the type algebra.
@dataclass(frozen=True, slots=True)
class ListOf:
    item: TypeExpr


@dataclass(frozen=True, slots=True)
class TupleOf:
    items: tuple[TypeExpr, ...]


@dataclass(frozen=True, slots=True)
class DictOf:
    """`dict[str, value]` (JSON object keys are always strings)."""

    value: TypeExpr


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A class defined in models.py."""

    name: str


@dataclass(frozen=True, slots=True)
class AliasRef:
    """A module-level `Name = Literal[...]` alias defined in models.py."""

    name: str


@dataclass(frozen=True, slots=True)
class Union:
    """`A | B | ...`: at least two members, flattened, without duplicates, `None` last."""

    members: tuple[TypeExpr, ...]


@dataclass(frozen=True, slots=True)
class Annotated:
    """`Annotated[union, Field(discriminator=tag)]`: a tagged union pydantic validates by its tag."""

    union: Union
    discriminator: str  # the tag's *field* name on every member model


TypeExpr = Prim | Lit | ListOf | TupleOf | DictOf | ModelRef | AliasRef | Union | Annotated

ANY = Prim("Any")
NONE = Prim("None")

_SIMPLE = (Prim, ListOf, DictOf, ModelRef, AliasRef, TupleOf, Annotated)  # no Union to flatten, no Lit
_LEAVES = (Prim, Lit, AliasRef)  # mention no class
_LEAF_CLASSES = frozenset(_LEAVES)


def union(members: list[TypeExpr] | tuple[TypeExpr, ...]) -> TypeExpr:
    """The union of `members`: nested unions flattened, duplicates dropped (first wins), literals
    merged, `Any` absorbing everything, `None` moved last; one member is returned as itself."""
    if len(members) == 1 and not isinstance(members[0], (Union, Lit)):
        return members[0]  # the most common case: nothing to flatten or merge
    if len(members) == 2:  # the common case: `T | None`
        first, second = members
        # `Any` and `None` told by class and name: cheaper than the dataclasses' `__eq__` here
        first_prim = first.name if type(first) is Prim else None
        if second is NONE and first_prim != "Any" and isinstance(first, _SIMPLE):  # an optional field's type
            return first if first_prim == "None" else Union((first, NONE))
        second_prim = second.name if type(second) is Prim else None
        if (
            first_prim != "Any"
            and second_prim != "Any"
            and isinstance(first, _SIMPLE)
            and isinstance(second, _SIMPLE)
        ):
            if first == second:
                return first
            return Union((second, first)) if first_prim == "None" else Union((first, second))
    flat: list[TypeExpr] = []
    stack = list(reversed(members))
    while stack:
        member = stack.pop()
        if isinstance(member, Union):
            stack.extend(reversed(member.members))
        else:
            flat.append(member)
    literal_values: list[str | int | bool] = []
    out: list[TypeExpr] = []
    literal_at = -1
    prim_names: set[str] = set()  # `Prim`s told apart by name: cheaper than the dataclasses' __eq__
    for member in flat:
        if type(member) is Prim:
            if member.name == "Any":
                return ANY
            if member.name not in prim_names:
                prim_names.add(member.name)
                out.append(member)
        elif isinstance(member, Lit):
            if literal_at < 0:
                literal_at = len(out)
                out.append(member)  # placeholder, replaced below
            for value in member.values:
                if not any(type(value) is type(seen) and value == seen for seen in literal_values):
                    literal_values.append(value)
        elif member not in out:
            out.append(member)
    if literal_at >= 0:
        out[literal_at] = Lit(tuple(literal_values))
    if "None" in prim_names:
        out = [member for member in out if not (type(member) is Prim and member.name == "None")]
        out.append(NONE)
    if len(out) == 1:
        return out[0]
    return Union(tuple(out))


def class_refs(*exprs: TypeExpr, aliases: bool = False) -> list[str]:
    """Names of the models.py classes `exprs` mention (and of the aliases, with `aliases`), in
    order of first appearance: the one walk over type expressions every caller shares."""
    found: dict[str, None] = {}
    stack: list[TypeExpr] = list(reversed(exprs))
    while stack:
        node = stack.pop()
        if type(node) in _LEAF_CLASSES:  # most of what a field type holds
            if aliases and type(node) is AliasRef:
                found[node.name] = None
            continue
        # by exact class: a chain of isinstance calls costs more than the walk itself
        if type(node) is Union:
            stack.extend(reversed(node.members))
        elif type(node) is ModelRef:
            found[node.name] = None
        elif type(node) is ListOf:
            stack.append(node.item)
        elif type(node) is DictOf:
            stack.append(node.value)
        elif type(node) is TupleOf:
            stack.extend(reversed(node.items))
        elif type(node) is Annotated:
            stack.append(node.union)
    return list(found)


# --------------------------------------------------------------------------------------- models


@_slot_init  # made by the thousand
@dataclass(frozen=True, slots=True)
class FieldDef:
    """One field of a BaseModel in models.py."""

    name: str  # Python attribute (checked identifier)
    wire_name: str  # JSON key; an alias when it differs from `name`
    type: TypeExpr  # includes `None` when the field may be null or is optional
    required: bool
    has_default: bool  # False: optional fields default to None
    default: Any  # a JSON value that conforms to `type` (only when has_default)
    description: str | None
    constraints: tuple[tuple[str, int | float], ...] = ()  # pydantic Field keywords: ge, le, min_length, ...
    nullable: bool = False  # the schema itself allows null (not only: the field may be left out)


@_slot_init  # made by the thousand
@dataclass(frozen=True, slots=True)
class ModelDef:
    """One class in models.py: a BaseModel with fields, or a RootModel[root]."""

    name: str
    fields: tuple[FieldDef, ...] = ()
    extra: Literal["allow", "forbid"] | None = None  # None: pydantic's default (ignore)
    root: TypeExpr | None = None  # set for a RootModel
    required: tuple[str, ...] = ()  # names of the required fields, in the schema's `required` order


@dataclass(frozen=True, slots=True)
class AliasDef:
    name: str
    value: Lit


@dataclass(frozen=True, slots=True)
class ModelsIR:
    """Everything models.py defines, in the order it defines it."""

    aliases: tuple[AliasDef, ...]
    models: tuple[ModelDef, ...]  # dependencies first where the graph allows it

    @property
    def classes(self) -> frozenset[str]:
        return frozenset(model.name for model in self.models)


# ---------------------------------------------------------------------------------------- tools


@_slot_init  # made by the thousand
@dataclass(frozen=True, slots=True)
class ParamIR:
    """One field of a tool's input model, as a method parameter. An optional parameter defaults to
    `UNSET` (left out of the call); `None` is a value only where the schema allows null."""

    name: str  # Python parameter name
    field_name: str  # attribute on the input model
    wire_name: str  # JSON key sent to the server
    type: TypeExpr  # the value's type: includes None only when the schema allows null
    required: bool
    has_default: bool  # True: the schema's `default` is the JSON scalar `default` (documented, not sent)
    default: JsonScalar
    description: str | None


@_slot_init  # made by the thousand
@dataclass(frozen=True, slots=True)
class ToolIR:
    wire_name: str
    method_name: str
    input_class: str
    output_class: str | None  # None: the tool has no outputSchema
    output_root: TypeExpr | None  # set when the output model is a RootModel[...]
    params: tuple[ParamIR, ...]  # required ones first, in `required` order; then the rest in schema order
    description: str | None
    title: str | None
    input_root: TypeExpr | None = None  # the input model is a RootModel: one `arguments` param
    task_support: str | None = None  # "optional" / "required": `execution.taskSupport` lets it run as a task

    @property
    def output_is_root(self) -> bool:
        return self.output_root is not None


@dataclass(frozen=True, slots=True)
class PackageIR:
    package: str
    source: str  # display name of the input (untrusted text)
    digest: str  # sha256 hex of the canonical input
    generator_version: str
    runtime_api_version: int
    tools: tuple[ToolIR, ...]  # source order
    models: ModelsIR
    definitions: tuple[dict[str, Any], ...]  # the validated tool objects, source order (tools.json)
    # resources, resource templates and prompts (issue 22): names and parameters, model/surfaces.py
    surfaces: SurfacesIR = field(default_factory=SurfacesIR)
