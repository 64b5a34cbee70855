"""What a subschema says about the *shape* of a value.

`collect_facts` reads one subschema together with its `$ref` target and `allOf` members (an
explicit stack, never recursion over input) into `Facts`: the allowed JSON types, object members
(with every pointer that declares each one), `required`, whether extra keys are allowed and what
they hold, properties declared only under `then` / `else` / `dependentSchemas`, array items and
numeric bounds. `oneOf` / `anyOf` inside the subschema are left out: they only narrow the value,
so a type built from the facts alone still accepts every valid instance. The type builder
(`typebuild`) turns facts into Python types.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import UnsupportedSchemaError
from ..refs import escape_token, join_pointer
from .fields import CONSTRAINT_KEYWORDS
from .schemadoc import MAX_DEPTH, Budget, SchemaDoc

__all__ = [
    "JSON_TYPES",
    "OBJECT_KEYWORDS",
    "SHAPE_KEYWORDS",
    "Facts",
    "collect_facts",
    "declared_types",
    "merge_facts",
    "own_constraints",
]

JSON_TYPES: Final = ("object", "array", "string", "integer", "number", "boolean", "null")
# Keywords that make a subschema say something about the *shape* of a value.
SHAPE_KEYWORDS: Final = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "additionalProperties",
        "patternProperties",
        "items",
        "prefixItems",
        "$ref",
        "$dynamicRef",
        "allOf",
        "anyOf",
        "oneOf",
    }
)
OBJECT_KEYWORDS: Final = ("properties", "additionalProperties", "patternProperties")
# Keywords `_structure_facts` reads.
_STRUCTURE_KEYWORDS: Final = frozenset(
    {
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "then",
        "else",
        "dependentSchemas",
        "items",
        "prefixItems",
    }
)


@dataclass(slots=True)
class Facts:
    """What a subschema (with its `$ref` target and `allOf` members) says about a value's shape."""

    types: set[str] | None = None  # allowed JSON types; None: unconstrained
    properties: dict[str, list[str]] = field(default_factory=dict)  # wire name -> declaring pointers
    required: list[str] = field(default_factory=list)
    closed: bool = False  # additionalProperties: false somewhere
    extra_schemas: list[str] = field(default_factory=list)  # additionalProperties / patternProperties
    open_extra: bool = False  # additionalProperties: true (or patternProperties without `false`)
    conditional: dict[str, list[tuple[str, str, str]]] = field(
        default_factory=dict
    )  # (owner, branch, pointer)
    items: str | None = None  # `items` schema pointer (2020-12 / single draft-07)
    items_false: bool = False
    prefix: list[str] | None = None  # prefixItems (or draft-07 array `items`)
    constraints: dict[str, Any] = field(default_factory=dict)
    object_like: bool = False
    array_like: bool = False

    def add_types(self, types: set[str]) -> None:
        self.types = set(types) if self.types is None else self.types & types


def declared_types(value: Any) -> set[str] | None:
    """The JSON types a `type` keyword value allows (unknown names dropped); None: no `type`."""
    if isinstance(value, str):
        return {value} if value in JSON_TYPES else set()
    if isinstance(value, list):
        return {item for item in value if isinstance(item, str) and item in JSON_TYPES}
    return None


def collect_facts(doc: SchemaDoc, pointer: str, depth: int, budget: Budget) -> Facts:
    """The merged facts of the subschema at `pointer`, its `$ref` target and `allOf` members."""
    facts = Facts()
    stack: list[tuple[str, int]] = [(pointer, depth)]
    seen: set[str] = set()
    while stack:
        current, level = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if level > MAX_DEPTH:
            raise UnsupportedSchemaError(
                f"{doc.where(current)}: allOf/$ref chain deeper than {MAX_DEPTH} (SCHEMA-11)"
            )
        budget.tick(doc, current)
        node = doc.node(current)
        if node is False:
            facts.add_types(set())
        if not isinstance(node, dict):
            continue
        _own_facts(current, node, facts, doc.nodes)
        ref = doc.refs.get(current)
        allof = node.get("allOf")
        if ref is None and not isinstance(allof, list):
            continue  # the common case: nothing more to merge
        nested: list[str] = [] if ref is None else [ref]
        if isinstance(allof, list):
            nested.extend(join_pointer(current, "allOf", i) for i in range(len(allof)))
        # oneOf/anyOf inside this subschema only narrow the value: leaving them out is honest.
        stack.extend((p, level + 1) for p in reversed(nested))
    return facts


def _own_facts(pointer: str, node: Mapping[str, Any], facts: Facts, nodes: dict[str, Any]) -> None:
    declared = declared_types(node.get("type"))
    if declared is None:
        pass
    elif facts.types is None:
        facts.types = declared  # a new set: no copy needed
    else:
        facts.add_types(declared)
    if not _STRUCTURE_KEYWORDS.isdisjoint(node):  # most subschemas are scalars: skip the rest
        _structure_facts(pointer, node, facts, nodes)
    if CONSTRAINT_KEYWORDS.isdisjoint(node):
        return
    constraints = facts.constraints
    for keyword in CONSTRAINT_KEYWORDS.intersection(node):
        value = node[keyword]
        if keyword not in constraints and _finite_number(value):
            constraints[keyword] = value


def own_constraints(node: Mapping[str, Any]) -> dict[str, Any]:
    """The finite numeric bounds `node` states itself: all of its facts' `constraints` when it has
    no `$ref` and no `allOf` (callers must not change the result)."""
    if CONSTRAINT_KEYWORDS.isdisjoint(node):
        return _NO_CONSTRAINTS
    found: dict[str, Any] = {}
    for keyword in CONSTRAINT_KEYWORDS.intersection(node):
        value = node[keyword]
        if _finite_number(value):
            found[keyword] = value
    return found


_NO_CONSTRAINTS: Final[dict[str, Any]] = {}


def _structure_facts(pointer: str, node: Mapping[str, Any], facts: Facts, nodes: dict[str, Any]) -> None:
    """Object members, array items and conditionally declared properties of one subschema.
    `nodes` (the document's pointer -> subschema memo) learns each member's subschema: the type
    builder reads them next, without parsing their pointers."""
    properties = node.get("properties")
    if isinstance(properties, dict):
        facts.object_like = True
        members = facts.properties
        property_at = pointer + "/properties/"
        for name, member in properties.items():
            member_at = property_at + escape_token(name)
            members.setdefault(name, []).append(member_at)
            nodes[member_at] = member
    required = node.get("required")
    if isinstance(required, list):
        for name in required:
            if isinstance(name, str) and name not in facts.required:
                facts.required.append(name)
    additional = node.get("additionalProperties")
    if additional is False:
        facts.closed = True
        facts.object_like = True
    elif additional is True:
        facts.open_extra = True
    elif isinstance(additional, dict):
        facts.object_like = True
        facts.extra_schemas.append(join_pointer(pointer, "additionalProperties"))
    patterns = node.get("patternProperties")
    if isinstance(patterns, dict) and patterns:
        facts.object_like = True
        facts.extra_schemas.extend(join_pointer(pointer, "patternProperties", key) for key in patterns)
    for keyword in ("then", "else"):
        branch = node.get(keyword)
        if isinstance(branch, dict) and isinstance(branch.get("properties"), dict):
            for name in branch["properties"]:
                facts.conditional.setdefault(name, []).append(
                    (pointer, keyword, join_pointer(pointer, keyword, "properties", name))
                )
    dependent = node.get("dependentSchemas")
    if isinstance(dependent, dict):
        for key, branch in dependent.items():
            if isinstance(branch, dict) and isinstance(branch.get("properties"), dict):
                for name in branch["properties"]:
                    facts.conditional.setdefault(name, []).append(
                        (
                            pointer,
                            "dependent",
                            join_pointer(pointer, "dependentSchemas", key, "properties", name),
                        )
                    )
    items = node.get("items")
    prefix = node.get("prefixItems")
    if isinstance(prefix, list):
        facts.array_like = True
        if facts.prefix is None:
            facts.prefix = [join_pointer(pointer, "prefixItems", i) for i in range(len(prefix))]
    if isinstance(items, list):  # draft-07 tuple form
        facts.array_like = True
        if facts.prefix is None:
            facts.prefix = [join_pointer(pointer, "items", i) for i in range(len(items))]
        extra = node.get("additionalItems")
        if extra is False:
            facts.items_false = True
        elif isinstance(extra, dict) and facts.items is None:
            facts.items = join_pointer(pointer, "additionalItems")
    elif items is False:
        facts.array_like = True
        facts.items_false = True
    elif isinstance(items, dict) or items is True:
        facts.array_like = True
        if facts.items is None:
            facts.items = join_pointer(pointer, "items")


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def merge_facts(base: Facts, extra: Facts) -> Facts:
    """An object option of a union merged with the object facts around the union (`base`)."""
    merged = Facts(
        types=base.types,
        properties={k: list(v) for k, v in base.properties.items()},
        required=list(base.required),
        closed=base.closed or extra.closed,
        extra_schemas=[*base.extra_schemas, *extra.extra_schemas],
        open_extra=base.open_extra or extra.open_extra,
        conditional={**extra.conditional, **base.conditional},
        object_like=True,
    )
    if extra.types is not None:
        merged.add_types(extra.types)
    for name, pointers in extra.properties.items():
        merged.properties.setdefault(name, []).extend(pointers)
    merged.required += [n for n in extra.required if n not in merged.required]
    return merged
