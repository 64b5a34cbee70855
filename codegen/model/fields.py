"""What one models.py field keeps from the subschema that declares it.

Its description (capped at MAX_DESCRIPTION characters), its `default` only when that JSON value is
an instance of the field's type (a default mypy accepts), and the numeric and length bounds whose
pydantic meaning is exactly the schema's (`CONSTRAINTS`; never `pattern`: ECMA-262 and pydantic's
regex engine disagree). A field that is not required is `... | None` and defaults to None;
`nullable` keeps apart whether the schema itself allows null (client methods send None as null).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..refs import json_type
from .ir import NONE, AliasDef, AliasRef, DictOf, FieldDef, ListOf, Lit, Prim, TypeExpr, Union, union

__all__ = ["CONSTRAINTS", "CONSTRAINT_KEYWORDS", "MAX_DESCRIPTION", "field_def"]

MAX_DESCRIPTION: Final = 16_000  # characters of a field description kept in models.py

CONSTRAINTS: Final = {  # JSON Schema keyword -> (pydantic Field keyword, the types it applies to)
    "minimum": ("ge", "number"),
    "maximum": ("le", "number"),
    "exclusiveMinimum": ("gt", "number"),
    "exclusiveMaximum": ("lt", "number"),
    "multipleOf": ("multiple_of", "integer"),
    "minLength": ("min_length", "string"),
    "maxLength": ("max_length", "string"),
    "minItems": ("min_length", "array"),
    "maxItems": ("max_length", "array"),
}
CONSTRAINT_KEYWORDS: Final = frozenset(CONSTRAINTS)

_NUMBER: Final = Union((Prim("int"), Prim("float")))
_PRIM_KINDS: Final = {"str": "string", "int": "integer"}  # Python type -> the JSON type bounds apply to
# JSON type of a field -> the CONSTRAINTS that may apply to it, in CONSTRAINTS order
_APPLICABLE: Final = {
    kind: tuple(
        (keyword, argument, applies)
        for keyword, (argument, applies) in CONSTRAINTS.items()
        if applies == kind or (applies == "number" and kind == "integer")
    )
    for kind in ("string", "integer", "number", "array")
}


def field_def(
    name: str,
    wire: str,
    type_: TypeExpr,
    required: bool,
    node: Any,
    bounds: Mapping[str, Any],
    aliases: Mapping[str, AliasDef],
) -> FieldDef:
    """The field `name` (wire name `wire`) of type `type_`, declared by the subschema `node` (None
    when no subschema declares it) whose collected numeric bounds are `bounds`."""
    description = None
    has_default = False
    default: Any = None
    constraints: tuple[tuple[str, int | float], ...] = ()
    if isinstance(node, dict):
        text = node.get("description")
        if isinstance(text, str) and text.strip():
            description = text if len(text) <= MAX_DESCRIPTION else text[:MAX_DESCRIPTION] + " [...]"
        if "default" in node and not required and _conforms(node["default"], type_, aliases):
            has_default, default = True, node["default"]
        constraints = _field_constraints(type_, bounds)
    field_type = type_ if required else union([type_, NONE])
    # `type_ in (NONE, ANY)`, without calling the dataclasses' __eq__ (this runs for every field)
    nullable = (isinstance(type_, Prim) and type_.name in ("None", "Any")) or (
        isinstance(type_, Union) and NONE in type_.members
    )
    return FieldDef(
        name=name,
        wire_name=wire,
        type=field_type,
        required=required,
        has_default=has_default,
        default=default,
        description=description,
        constraints=constraints,
        nullable=nullable,
    )


def _conforms(value: Any, type_: TypeExpr, aliases: Mapping[str, AliasDef], depth: int = 0) -> bool:
    """Whether the JSON value `value` is an instance of `type_` (as a default mypy accepts)."""
    if depth > 32:
        return False
    if isinstance(type_, Prim):
        kind = json_type(value)
        return {
            "Any": True,
            "str": kind == "string",
            "int": isinstance(value, int) and not isinstance(value, bool),
            "float": isinstance(value, float),
            "bool": kind == "boolean",
            "None": value is None,
        }[type_.name]
    if isinstance(type_, AliasRef):
        return _conforms(value, aliases[type_.name].value, aliases, depth + 1)
    if isinstance(type_, Lit):
        return any(type(value) is type(v) and value == v for v in type_.values)
    if isinstance(type_, ListOf):
        return isinstance(value, list) and all(_conforms(v, type_.item, aliases, depth + 1) for v in value)
    if isinstance(type_, DictOf):
        return isinstance(value, dict) and all(
            _conforms(v, type_.value, aliases, depth + 1) for v in value.values()
        )
    if isinstance(type_, Union):
        return any(_conforms(value, m, aliases, depth + 1) for m in type_.members)
    return False  # models, tuples (a JSON list is no tuple), tagged unions


def _field_constraints(type_: TypeExpr, found: Mapping[str, Any]) -> tuple[tuple[str, int | float], ...]:
    """pydantic Field keywords for the bounds in `found` that apply to `type_`, exactly as meant."""
    if not found:
        return ()
    kind: str | None = None
    if isinstance(type_, Prim):
        kind = _PRIM_KINDS.get(type_.name)
    elif isinstance(type_, ListOf):
        kind = "array"
    elif type_ == _NUMBER:
        kind = "number"
    if kind is None:
        return ()
    out: list[tuple[str, int | float]] = []
    for keyword, argument, applies in _APPLICABLE[kind]:
        value = found.get(keyword)
        if value is None:
            continue
        if applies == "integer" and not (isinstance(value, int) and value > 0):
            continue
        if applies in ("string", "array"):
            if not (value >= 0 and float(value).is_integer()):
                continue
            value = int(value)
        elif isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            value = int(value) if kind == "integer" else value
        out.append((argument, value))
    return tuple(out)
