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

Names are planned, never derived from input order alone: `<Stem>Input` / `<Stem>Output` per tool
(reserved first), `<Stem><Def>Def` per root `$defs` / `definitions` entry, and nested classes named
by their path (`<Owner><Property>`, `...Item`, `...Value`, `...Option<N>`); a clash gets a numeric
suffix in traversal order. Field names come from `naming.field_names` (keywords, BaseModel members
and builtin type names avoided; the wire name is kept as the alias).

Cost is bounded (SCHEMA-11): nesting depth, subschema visits per package and a wall-clock budget
raise UnsupportedSchemaError with the tool and pointer instead of running away.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcpgen_runtime._version import RUNTIME_API_VERSION, __version__

from . import naming
from .errors import InternalGeneratorError, NameCollisionError, UnsupportedSchemaError
from .ir import (
    ANY,
    NONE,
    AliasDef,
    AliasRef,
    Annotated,
    DictOf,
    FieldDef,
    ListOf,
    Lit,
    ModelDef,
    ModelRef,
    ModelsIR,
    PackageIR,
    ParamIR,
    Prim,
    ToolIR,
    TupleOf,
    TypeExpr,
    Union,
    class_refs,
    union,
)
from .refs import DRAFT_2020_12, SchemaIndex, SchemaLimitError, dialect_of, escape_token, split_pointer
from .spec import ValidatedSpec

__all__ = [
    "MAX_DEPTH",
    "MAX_SECONDS",
    "MAX_SUBSCHEMAS",
    "MAX_VISITS",
    "ClassPlan",
    "build_ir",
    "build_models",
    "plan_classes",
]

MAX_DEPTH: Final = 96  # nested schemas followed while building one type (objects, arrays, refs, allOf)
MAX_SUBSCHEMAS: Final = 20_000  # per tool member, as refs.SchemaIndex counts them
MAX_VISITS: Final = 1_000_000  # subschema visits per package
MAX_SECONDS: Final = 120.0  # wall-clock safety net per package
MAX_DESCRIPTION: Final = 16_000  # characters of a field description kept in models.py

_JSON_TYPES: Final = ("object", "array", "string", "integer", "number", "boolean", "null")
_UNION_KEYWORDS: Final = ("oneOf", "anyOf")
# Keywords that make a subschema say something about the *shape* of a value.
_SHAPE_KEYWORDS: Final = frozenset({
    "type", "enum", "const", "properties", "additionalProperties", "patternProperties", "items", "prefixItems",
    "$ref", "$dynamicRef", "allOf", "anyOf", "oneOf",
})
_SHAPE_BESIDES_REF: Final = _SHAPE_KEYWORDS - {"$ref", "$dynamicRef"}
_SHAPE_BESIDES_ALLOF: Final = _SHAPE_KEYWORDS - {"allOf"}
_OBJECT_KEYWORDS: Final = ("properties", "additionalProperties", "patternProperties")
_ARRAY_KEYWORDS: Final = ("items", "prefixItems")
_CONSTRAINTS: Final = {  # JSON Schema keyword -> (pydantic Field keyword, the types it applies to)
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


_CONSTRAINT_KEYS: Final = frozenset(_CONSTRAINTS)
# Keywords `_Builder._structure_facts` reads.
_STRUCTURE_KEYWORDS: Final = frozenset({
    "properties", "required", "additionalProperties", "patternProperties", "then", "else", "dependentSchemas",
    "items", "prefixItems",
})
_STR, _INT, _FLOAT = Prim("str"), Prim("int"), Prim("float")
_PRIMITIVES: Final[Mapping[str, tuple[TypeExpr, ...]]] = {  # JSON type -> the Python types that hold it
    "string": (_STR,), "integer": (_INT,), "number": (_INT, _FLOAT), "boolean": (Prim("bool"),), "null": (NONE,),
}
_NUMBER: Final = Union((_INT, _FLOAT))
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class ClassPlan:
    wire_name: str
    stem: str
    input_class: str
    output_class: str | None


# ------------------------------------------------------------------------------------------ names


class _Names:
    """Allocates the class and alias names of one models module (numeric suffix on a clash)."""

    def __init__(self, taken: set[str]) -> None:
        self.used = set(taken)

    def take(self, wanted: str) -> str:
        wanted = naming.cap_length(wanted, style="pascal")
        name, number = wanted, 1
        while name in self.used:
            number += 1
            name = f"{wanted}{number}"
        self.used.add(name)
        return name


# Module-level names of models.py that a class or alias may not take.
_MODULE_NAMES: Final = frozenset({"Annotated", "Any", "BaseModel", "ConfigDict", "Field", "Literal", "RootModel"})


def plan_classes(tools: list[dict[str, Any]], names: _Names | None = None) -> list[ClassPlan]:
    """`<Stem>Input` / `<Stem>Output` per tool, reserved before any nested class is named."""
    names = names or _Names(set(_MODULE_NAMES))
    stems = naming.class_bases(tool["name"] for tool in tools)
    plans = []
    for tool in tools:
        stem = stems[tool["name"]]
        input_class = names.take(f"{stem}Input")
        output_class = names.take(f"{stem}Output") if isinstance(tool.get("outputSchema"), Mapping) else None
        plans.append(ClassPlan(wire_name=tool["name"], stem=stem, input_class=input_class, output_class=output_class))
    return plans


# ---------------------------------------------------------------------------------------- budget


class _Budget:
    def __init__(self) -> None:
        self.visits = 0
        self.deadline = time.monotonic() + MAX_SECONDS

    def tick(self, doc: _Doc, pointer: str) -> None:
        self.visits += 1
        if self.visits > MAX_VISITS:
            raise UnsupportedSchemaError(
                f"{doc.where(pointer)}: more than {MAX_VISITS} subschema visits while building models (SCHEMA-11)"
            )
        if not self.visits & 1023 and time.monotonic() > self.deadline:
            raise UnsupportedSchemaError(
                f"{doc.where(pointer)}: building models took longer than {MAX_SECONDS:.0f} s (SCHEMA-11)"
            )


# --------------------------------------------------------------------------------------- documents


@dataclass
class _Doc:
    """One tool member schema (inputSchema or outputSchema); its refs resolved when it has any."""

    key: int
    wire_name: str
    member: str
    root_class: str
    root: Any
    refs: dict[str, str]  # subschema pointer -> pointer of its `$ref` / `$dynamicRef` target
    def_classes: dict[tuple[str, str], str]  # ("$defs", key) -> planned class stem
    nodes: dict[str, Any] = field(default_factory=dict)  # pointer -> subschema (memo)

    def where(self, pointer: str) -> str:
        return f"tool {self.wire_name!r} {self.member} at {pointer or '/'}"

    def node(self, pointer: str) -> Any:
        """The subschema at `pointer` (pointers come from this module or from `refs`)."""
        found = self.nodes.get(pointer, _MISSING)
        if found is not _MISSING:
            return found
        if not pointer:
            node: Any = self.root
        else:
            parent_pointer, _, token = pointer.rpartition("/")
            parent = self.node(parent_pointer)
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(parent, dict):
                node = parent.get(token, True)
            elif isinstance(parent, list) and token.isdigit() and int(token) < len(parent):
                node = parent[int(token)]
            else:
                node = True
        self.nodes[pointer] = node
        return node


_MISSING: Final = object()


def _has_refs(schema: Any) -> bool:
    """Whether any object inside `schema` has a `$ref` / `$dynamicRef` member (iterative)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "$ref" in node or "$dynamicRef" in node:
                return True
            stack.extend(value for value in node.values() if isinstance(value, (dict, list)))
        elif isinstance(node, list):
            stack.extend(value for value in node if isinstance(value, (dict, list)))
    return False


def _child(pointer: str, *tokens: str | int) -> str:
    return pointer + "".join("/" + escape_token(token) for token in tokens)


@dataclass
class _Facts:
    """What a subschema (with its `$ref` target and `allOf` members) says about a value's shape."""

    types: set[str] | None = None  # allowed JSON types; None: unconstrained
    properties: dict[str, list[str]] = field(default_factory=dict)  # wire name -> declaring pointers
    required: list[str] = field(default_factory=list)
    closed: bool = False  # additionalProperties: false somewhere
    extra_schemas: list[str] = field(default_factory=list)  # additionalProperties / patternProperties
    open_extra: bool = False  # additionalProperties: true (or patternProperties without `false`)
    conditional: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)  # (owner, branch, pointer)
    items: str | None = None  # `items` schema pointer (2020-12 / single draft-07)
    items_false: bool = False
    prefix: list[str] | None = None  # prefixItems (or draft-07 array `items`)
    constraints: dict[str, Any] = field(default_factory=dict)
    object_like: bool = False
    array_like: bool = False

    def add_types(self, types: set[str]) -> None:
        self.types = set(types) if self.types is None else self.types & types


# ------------------------------------------------------------------------------------------ builder


class _Builder:
    def __init__(self, names: _Names) -> None:
        self.names = names
        self.budget = _Budget()
        self.models: dict[str, ModelDef | None] = {}  # creation order; None while being built
        self.aliases: dict[str, AliasDef] = {}
        self.memo: dict[tuple[int, str], TypeExpr] = {}
        self.class_for: dict[tuple[int, str], str] = {}
        self.alias_for: dict[tuple[int, str], str] = {}
        self.active: set[tuple[int, str]] = set()
        self.root_wanted: set[tuple[int, str]] = set()  # a cycle reached this pointer: make it a class
        self.facts_memo: dict[tuple[int, str], _Facts] = {}

    # ---- document setup

    def document(self, key: int, tool: Mapping[str, Any], member: str, root_class: str, stem: str) -> _Doc:
        schema = tool[member]
        wire_name = tool["name"]
        where = f"tool {wire_name!r} {member}"
        if not isinstance(schema, Mapping):
            raise UnsupportedSchemaError(f"{where}: not a JSON object")
        refs: dict[str, str] = {}
        if _has_refs(schema):
            try:
                index = SchemaIndex.build(schema, dialect_of(schema) or DRAFT_2020_12, max_subschemas=MAX_SUBSCHEMAS)
            except SchemaLimitError as exc:
                raise UnsupportedSchemaError(f"{where}: {exc} (SCHEMA-11)") from exc
            for site in index.refs:
                resolution = index.resolve(site)
                if resolution.target is None:
                    raise UnsupportedSchemaError(f"{where} at {site.pointer}: {resolution.problem}")
                refs.setdefault(site.schema_pointer, resolution.target)
        def_classes: dict[tuple[str, str], str] = {}
        for keyword in ("$defs", "definitions"):
            members = schema.get(keyword)
            if isinstance(members, Mapping):
                for name in members:
                    def_classes[(keyword, name)] = f"{stem}{naming.identifier(name, style='pascal', prefix='Def')}Def"
        doc = _Doc(key, wire_name, member, root_class, schema, refs, def_classes)
        self.class_for[(key, "")] = root_class
        return doc

    def path_name(self, doc: _Doc, pointer: str) -> str:
        """A readable class name for the subschema at `pointer`, from its path (not yet unique)."""
        tokens = split_pointer(pointer)
        parts: list[str] = []
        if len(tokens) >= 2 and (tokens[0], tokens[1]) in doc.def_classes:
            parts.append(doc.def_classes[(tokens[0], tokens[1])])
            tokens = tokens[2:]
        else:
            parts.append(doc.root_class)
        i = 0
        while i < len(tokens):
            keyword = tokens[i]
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if keyword in ("properties", "$defs", "definitions", "dependentSchemas") and nxt is not None:
                parts.append(naming.identifier(nxt, style="pascal", prefix="Field"))
                i += 2
            elif keyword == "patternProperties" and nxt is not None:
                parts.append("Value")
                i += 2
            elif keyword in ("anyOf", "oneOf") and nxt is not None and nxt.isdigit():
                parts.append(f"Option{int(nxt) + 1}")
                i += 2
            elif keyword in ("allOf", "prefixItems") and nxt is not None and nxt.isdigit():
                parts.append(f"{'Part' if keyword == 'allOf' else 'Item'}{int(nxt) + 1}")
                i += 2
            elif keyword in ("items", "additionalItems", "unevaluatedItems", "contains"):
                if nxt is not None and nxt.isdigit():
                    parts.append(f"Item{int(nxt) + 1}")
                    i += 2
                else:
                    parts.append("Item")
                    i += 1
            elif keyword in ("additionalProperties", "unevaluatedProperties"):
                parts.append("Value")
                i += 1
            else:
                parts.append(naming.identifier(keyword, style="pascal", prefix="Part"))
                i += 1
        return "".join(parts)

    # ---- types

    def type_at(self, doc: _Doc, pointer: str, depth: int) -> TypeExpr:
        key = (doc.key, pointer)
        known = self.memo.get(key)
        if known is not None:
            return known
        if key in self.active:  # a cycle: this subschema becomes (or already is) a class
            name = self.class_for.get(key)
            if name is None:
                name = self.class_for[key] = self.names.take(self.path_name(doc, pointer))
                self.root_wanted.add(key)
            return ModelRef(name)
        if depth > MAX_DEPTH:
            raise UnsupportedSchemaError(f"{doc.where(pointer)}: schemas nested deeper than {MAX_DEPTH} levels (SCHEMA-11)")
        self.budget.tick(doc, pointer)
        self.active.add(key)
        try:
            result = self._compute(doc, pointer, depth)
        finally:
            self.active.discard(key)
        if key in self.root_wanted:
            name = self.class_for[key]
            if self.models.get(name) is None:
                self.models[name] = ModelDef(name=name, root=result)
            result = ModelRef(name)
        self.memo[key] = result
        return result

    def _compute(self, doc: _Doc, pointer: str, depth: int) -> TypeExpr:
        node = doc.node(pointer)
        if not isinstance(node, dict):
            return ANY  # true (anything) or false (nothing: the runtime rejects every value)
        if not _SHAPE_KEYWORDS.intersection(node):
            return ANY
        # A bare `$ref` (annotations aside) is its target's type: recursive refs reuse one class.
        ref = doc.refs.get(pointer)
        if ref is not None and not _SHAPE_BESIDES_REF.intersection(node):
            target = self.type_at(doc, ref, depth + 1)
            if pointer == "" and isinstance(target, ModelRef) and self._is_object_model(target.name):
                # the tool's own class gets the target's fields (keyword parameters, not one dict)
                return self._model(doc, pointer, self.facts(doc, pointer, depth), depth)
            return target
        if "enum" in node or "const" in node:
            return self._literal(doc, pointer, node)
        alternatives = self._alternatives(doc, pointer, node)
        if alternatives is not None:
            return self._union(doc, pointer, node, alternatives, depth)
        allof = node.get("allOf")
        if (
            isinstance(allof, list) and len(allof) == 1 and ref is None
            and not _SHAPE_BESIDES_ALLOF.intersection(node)
        ):
            return self.type_at(doc, _child(pointer, "allOf", 0), depth + 1)
        facts = self.facts(doc, pointer, depth)
        return self._from_facts(doc, pointer, facts, depth)

    def _is_object_model(self, name: str) -> bool:
        if name not in self.models:
            return False  # a RootModel asked for by a cycle, not built yet
        model = self.models[name]
        return model is None or model.root is None  # None: a BaseModel still being built

    def _alternatives(self, doc: _Doc, pointer: str, node: Mapping[str, Any]) -> list[str] | None:
        """Pointers of the oneOf (else anyOf) members when they say something about the shape."""
        for keyword in _UNION_KEYWORDS:
            members = node.get(keyword)
            if isinstance(members, list) and members:
                pointers = [_child(pointer, keyword, i) for i in range(len(members))]
                if all(self._shapes(doc, p) for p in pointers):
                    return pointers
        return None

    def _shapes(self, doc: _Doc, pointer: str) -> bool:
        node = doc.node(pointer)
        return isinstance(node, dict) and bool(_SHAPE_KEYWORDS.intersection(node))

    def _literal(self, doc: _Doc, pointer: str, node: Mapping[str, Any]) -> TypeExpr:
        values = node["enum"] if "enum" in node else [node["const"]]
        if not isinstance(values, list):
            return ANY
        allowed = _declared_types(node.get("type"))
        literal: list[str | int | bool] = []
        members: list[TypeExpr] = []
        for value in values:
            kind = _json_type(value)
            if allowed is not None and kind not in allowed and not (kind == "integer" and "number" in allowed):
                continue  # the value cannot be valid: it fails `type`
            if kind == "null":
                members.append(NONE)
            elif kind == "string" and _SURROGATE.search(value):
                members.append(Prim("str"))  # pydantic cannot hold a lone surrogate in a Literal
            elif kind in ("string", "integer", "boolean"):
                if isinstance(value, float):  # 1.0 is the integer 1 in JSON Schema; Literal needs an int
                    value = int(value)
                if not any(type(value) is type(seen) and value == seen for seen in literal):
                    literal.append(value)
            elif kind == "number":
                members.append(Prim("float"))
            elif kind == "object":
                members.append(DictOf(ANY))
            else:
                members.append(ListOf(ANY))
        if not literal and not members:
            return ANY  # no value can be valid; the runtime rejects everything
        head: list[TypeExpr] = []
        if literal:
            lit = Lit(tuple(literal))
            if len(literal) >= 2 and "enum" in node:
                key = (doc.key, pointer)
                name = self.alias_for.get(key)
                if name is None:
                    name = self.alias_for[key] = self.names.take(self.path_name(doc, pointer))
                    self.aliases[name] = AliasDef(name, lit)
                head.append(AliasRef(name))
            else:
                head.append(lit)
        return union(head + members)

    def _union(
        self, doc: _Doc, pointer: str, node: Mapping[str, Any], alternatives: list[str], depth: int
    ) -> TypeExpr:
        base = {k: v for k, v in node.items() if k not in _UNION_KEYWORDS}
        base_facts = self.facts(doc, pointer, depth) if _SHAPE_KEYWORDS.intersection(base) else None
        merge = base_facts is not None and bool(base_facts.properties or base_facts.required)
        members: list[TypeExpr] = []
        for alternative in alternatives:
            if merge and base_facts is not None and self._object_like(doc, alternative):
                facts = self.facts(doc, alternative, depth + 1)
                combined = _merge(base_facts, facts)
                members.append(self._model(doc, alternative, combined, depth + 1))
            else:
                members.append(self.type_at(doc, alternative, depth + 1))
        result = union(members)
        if isinstance(result, Union):
            tag = node.get("discriminator")
            wanted = tag.get("propertyName") if isinstance(tag, dict) else None
            result = self._discriminated(result, wanted if isinstance(wanted, str) else None)
        return result

    def _object_like(self, doc: _Doc, pointer: str) -> bool:
        node = doc.node(pointer)
        if not isinstance(node, dict):
            return False
        declared = _declared_types(node.get("type"))
        if declared is not None:
            return declared == {"object"}
        return any(k in node for k in _OBJECT_KEYWORDS) or "required" in node

    def _discriminated(self, result: Union, wanted: str | None) -> TypeExpr:
        """`Annotated[A | B, Field(discriminator=...)]` when every non-null member is a finished model
        with a required field of distinct string literal tags (the `discriminator` keyword's property
        first, else the first such field of the first member)."""
        models = [m for m in result.members if m != NONE]
        if len(models) < 2 or not all(isinstance(m, ModelRef) for m in models):
            return result
        defs = [self.models.get(m.name) for m in models if isinstance(m, ModelRef)]
        if any(d is None or d.root is not None for d in defs):
            return result
        candidates = [f.wire_name for f in defs[0].fields] if defs[0] is not None else []
        if wanted is not None:
            candidates = [wanted] if wanted in candidates else []
        for wire in candidates:
            field_name: str | None = None
            seen: set[str] = set()
            for model in defs:
                assert model is not None
                found = next((f for f in model.fields if f.wire_name == wire), None)
                tags = _string_tags(found.type, self.aliases) if found is not None and found.required else None
                if found is None or tags is None or seen & tags or (field_name not in (None, found.name)):
                    break
                field_name = found.name
                seen |= tags
            else:
                assert field_name is not None
                tagged = Annotated(Union(tuple(models)), field_name)
                return union([tagged, NONE]) if NONE in result.members else tagged
        return result

    # ---- facts (object and array shape, through $ref and allOf)

    def facts(self, doc: _Doc, pointer: str, depth: int) -> _Facts:
        """The merged facts of `pointer` (memoised: callers must not change the result)."""
        key = (doc.key, pointer)
        known = self.facts_memo.get(key)
        if known is None:
            known = self.facts_memo[key] = self._collect_facts(doc, pointer, depth)
        return known

    def _collect_facts(self, doc: _Doc, pointer: str, depth: int) -> _Facts:
        facts = _Facts()
        stack: list[tuple[str, int]] = [(pointer, depth)]
        seen: set[str] = set()
        while stack:
            current, level = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            if level > MAX_DEPTH:
                raise UnsupportedSchemaError(f"{doc.where(current)}: allOf/$ref chain deeper than {MAX_DEPTH} (SCHEMA-11)")
            self.budget.tick(doc, current)
            node = doc.node(current)
            if node is False:
                facts.add_types(set())
            if not isinstance(node, dict):
                continue
            self._own_facts(doc, current, node, facts)
            nested: list[str] = []
            ref = doc.refs.get(current)
            if ref is not None:
                nested.append(ref)
            allof = node.get("allOf")
            if isinstance(allof, list):
                nested.extend(_child(current, "allOf", i) for i in range(len(allof)))
            # oneOf/anyOf inside this subschema only narrow the value: leaving them out is honest.
            stack.extend((p, level + 1) for p in reversed(nested))
        return facts

    def _own_facts(self, doc: _Doc, pointer: str, node: Mapping[str, Any], facts: _Facts) -> None:
        declared = _declared_types(node.get("type"))
        if declared is not None:
            facts.add_types(declared)
        if not _STRUCTURE_KEYWORDS.isdisjoint(node):  # most subschemas are scalars: skip the rest
            self._structure_facts(pointer, node, facts)
        for keyword in _CONSTRAINT_KEYS.intersection(node):
            value = node[keyword]
            if keyword not in facts.constraints and _finite_number(value):
                facts.constraints[keyword] = value

    def _structure_facts(self, pointer: str, node: Mapping[str, Any], facts: _Facts) -> None:
        """Object members, array items and conditionally declared properties of one subschema."""
        properties = node.get("properties")
        if isinstance(properties, dict):
            facts.object_like = True
            for name in properties:
                facts.properties.setdefault(name, []).append(_child(pointer, "properties", name))
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
            facts.extra_schemas.append(_child(pointer, "additionalProperties"))
        patterns = node.get("patternProperties")
        if isinstance(patterns, dict) and patterns:
            facts.object_like = True
            facts.extra_schemas.extend(_child(pointer, "patternProperties", key) for key in patterns)
        for keyword in ("then", "else"):
            branch = node.get(keyword)
            if isinstance(branch, dict) and isinstance(branch.get("properties"), dict):
                for name in branch["properties"]:
                    facts.conditional.setdefault(name, []).append(
                        (pointer, keyword, _child(pointer, keyword, "properties", name))
                    )
        dependent = node.get("dependentSchemas")
        if isinstance(dependent, dict):
            for key, branch in dependent.items():
                if isinstance(branch, dict) and isinstance(branch.get("properties"), dict):
                    for name in branch["properties"]:
                        facts.conditional.setdefault(name, []).append(
                            (pointer, "dependent", _child(pointer, "dependentSchemas", key, "properties", name))
                        )
        items = node.get("items")
        prefix = node.get("prefixItems")
        if isinstance(prefix, list):
            facts.array_like = True
            if facts.prefix is None:
                facts.prefix = [_child(pointer, "prefixItems", i) for i in range(len(prefix))]
        if isinstance(items, list):  # draft-07 tuple form
            facts.array_like = True
            if facts.prefix is None:
                facts.prefix = [_child(pointer, "items", i) for i in range(len(items))]
            extra = node.get("additionalItems")
            if extra is False:
                facts.items_false = True
            elif isinstance(extra, dict) and facts.items is None:
                facts.items = _child(pointer, "additionalItems")
        elif items is False:
            facts.array_like = True
            facts.items_false = True
        elif isinstance(items, dict) or items is True:
            facts.array_like = True
            if facts.items is None:
                facts.items = _child(pointer, "items")

    def _from_facts(self, doc: _Doc, pointer: str, facts: _Facts, depth: int) -> TypeExpr:
        types = facts.types
        if types is None:
            if facts.object_like and not facts.array_like:
                types = {"object"}
            elif facts.array_like and not facts.object_like:
                types = {"array"}
            else:
                return ANY
        if not types:
            return ANY  # contradictory: nothing is valid; the runtime says so
        members: list[TypeExpr] = []
        for kind in _JSON_TYPES:
            if kind not in types:
                continue
            if kind == "object":
                members.append(self._object(doc, pointer, facts, depth))
            elif kind == "array":
                members.append(self._array(doc, facts, depth))
            else:
                members.extend(_PRIMITIVES[kind])
        return union(members)

    def _object(self, doc: _Doc, pointer: str, facts: _Facts, depth: int) -> TypeExpr:
        if facts.properties or facts.required or facts.conditional or pointer == "":
            return self._model(doc, pointer, facts, depth)
        return DictOf(self._extra_type(doc, facts, depth))

    def _extra_type(self, doc: _Doc, facts: _Facts, depth: int) -> TypeExpr:
        """The type of values under keys no `properties` entry names."""
        if not facts.extra_schemas or (facts.open_extra and not facts.closed):
            return ANY
        if not facts.closed and any("/patternProperties/" in p for p in facts.extra_schemas) and not any(
            p.endswith("/additionalProperties") for p in facts.extra_schemas
        ):
            return ANY  # keys matching no pattern may hold anything
        return union([self.type_at(doc, p, depth + 1) for p in facts.extra_schemas])

    def _array(self, doc: _Doc, facts: _Facts, depth: int) -> TypeExpr:
        if facts.prefix:
            prefix = [self.type_at(doc, p, depth + 1) for p in facts.prefix]
            min_items = facts.constraints.get("minItems", 0)
            max_items = facts.constraints.get("maxItems")
            closed = facts.items_false or (max_items is not None and max_items <= len(prefix))
            if closed and min_items >= len(prefix):
                return TupleOf(tuple(prefix))
            rest = [] if closed else [self.type_at(doc, facts.items, depth + 1) if facts.items else ANY]
            return ListOf(union(prefix + rest))
        if facts.items is not None:
            return ListOf(self.type_at(doc, facts.items, depth + 1))
        return ListOf(ANY)

    def _model(self, doc: _Doc, pointer: str, facts: _Facts, depth: int) -> TypeExpr:
        key = (doc.key, pointer)
        name = self.class_for.get(key)
        if name is None:
            name = self.class_for[key] = self.names.take(self.path_name(doc, pointer))
        if self.models.get(name) is not None:
            return ModelRef(name)
        self.models[name] = None  # being built: recursive references see the name
        extra_type = self._extra_type(doc, facts, depth)
        root_map = pointer == "" and not facts.properties and not facts.required and facts.extra_schemas
        if root_map and extra_type != ANY:
            self.models[name] = ModelDef(name=name, root=DictOf(extra_type))
            return ModelRef(name)
        wire_names = list(facts.properties)
        wire_names += [n for n in facts.required if n not in facts.properties]
        wire_names += [n for n in facts.conditional if n not in wire_names]
        # pydantic cannot use a name with a lone surrogate as an alias: such keys stay extras
        unusable = [n for n in wire_names if _SURROGATE.search(n)]
        wire_names = [n for n in wire_names if n not in unusable]
        names = naming.field_names(wire_names)
        fields: list[FieldDef] = []
        for wire in wire_names:
            declarations = facts.properties.get(wire, [])
            required = wire in facts.required and wire in facts.properties
            if declarations:
                options = [self.type_at(doc, p, depth + 1) for p in declarations]
                chosen = next((t for t in options if t != ANY), ANY)  # any one declaration is a superset
                source = declarations[options.index(chosen)] if chosen in options else declarations[0]
            elif wire in facts.conditional:
                # Declared only under conditions: honest only when `then` and `else` of one `if` both
                # declare it (one of them always applies); otherwise the value may be anything.
                chosen = ANY
                by_owner: dict[str, dict[str, str]] = {}
                for owner, branch, pointer in facts.conditional[wire]:
                    by_owner.setdefault(owner, {})[branch] = pointer
                for branches in by_owner.values():
                    if "then" in branches and "else" in branches:
                        chosen = union([self.type_at(doc, branches[b], depth + 1) for b in ("then", "else")])
                        break
                source = None
            else:  # required but declared nowhere: whatever the object allows for other keys
                chosen = extra_type
                source = None
                required = wire in facts.required
            fields.append(self._field(doc, names[wire], wire, chosen, required, source))
        extra: Any = "forbid" if facts.closed and not facts.extra_schemas and not unusable else "allow"
        self.models[name] = ModelDef(name=name, fields=tuple(fields), extra=extra)
        return ModelRef(name)

    def _field(
        self, doc: _Doc, name: str, wire: str, type_: TypeExpr, required: bool, source: str | None
    ) -> FieldDef:
        node = doc.node(source) if source is not None else None
        description = None
        has_default = False
        default: Any = None
        constraints: tuple[tuple[str, int | float], ...] = ()
        if isinstance(node, dict):
            text = node.get("description")
            if isinstance(text, str) and text.strip():
                description = text if len(text) <= MAX_DESCRIPTION else text[:MAX_DESCRIPTION] + " [...]"
            if "default" in node and not required and _conforms(node["default"], type_, self.aliases):
                has_default, default = True, node["default"]
            facts = self.facts(doc, source, 0) if source is not None else _Facts()
            constraints = _field_constraints(type_, facts.constraints)
        field_type = type_ if required else union([type_, NONE])
        return FieldDef(
            name=name,
            wire_name=wire,
            type=field_type,
            required=required,
            has_default=has_default,
            default=default,
            description=description,
            constraints=constraints,
        )

    # ---- output

    def finish(self) -> ModelsIR:
        models: dict[str, ModelDef] = {}
        for name, model in self.models.items():
            if model is None:  # pragma: no cover - every started model is finished
                raise InternalGeneratorError(f"model {name!r} was never finished")
            models[name] = model
        order = _dependency_order(models)
        return ModelsIR(aliases=tuple(self.aliases.values()), models=tuple(models[n] for n in order))


# ----------------------------------------------------------------------------------------- helpers


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _declared_types(value: Any) -> set[str] | None:
    if isinstance(value, str):
        return {value} if value in _JSON_TYPES else set()
    if isinstance(value, list):
        return {item for item in value if isinstance(item, str) and item in _JSON_TYPES}
    return None


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _merge(base: _Facts, extra: _Facts) -> _Facts:
    merged = _Facts(
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


def _string_tags(type_: TypeExpr, aliases: Mapping[str, AliasDef]) -> set[str] | None:
    if isinstance(type_, AliasRef):
        type_ = aliases[type_.name].value
    if isinstance(type_, Lit) and type_.values and all(isinstance(v, str) for v in type_.values):
        return {str(v) for v in type_.values}
    return None


def _conforms(value: Any, type_: TypeExpr, aliases: Mapping[str, AliasDef], depth: int = 0) -> bool:
    """Whether the JSON value `value` is an instance of `type_` (as a default mypy accepts)."""
    if depth > 32:
        return False
    if isinstance(type_, Prim):
        kind = _json_type(value)
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
        return isinstance(value, dict) and all(_conforms(v, type_.value, aliases, depth + 1) for v in value.values())
    if isinstance(type_, Union):
        return any(_conforms(value, m, aliases, depth + 1) for m in type_.members)
    return False  # models, tuples (a JSON list is no tuple), tagged unions


def _field_constraints(type_: TypeExpr, found: Mapping[str, Any]) -> tuple[tuple[str, int | float], ...]:
    """pydantic Field keywords for bounds whose meaning is exactly the schema's (never `pattern`:
    ECMA-262 and pydantic's regex engine disagree)."""
    if not found:
        return ()
    if type_ == _STR:
        kind = "string"
    elif type_ == _INT:
        kind = "integer"
    elif type_ == _NUMBER:
        kind = "number"
    elif isinstance(type_, ListOf):
        kind = "array"
    else:
        return ()
    out: list[tuple[str, int | float]] = []
    for keyword, (argument, applies) in _CONSTRAINTS.items():
        value = found.get(keyword)
        if value is None:
            continue
        if applies == "number" and kind not in ("integer", "number"):
            continue
        if applies == "integer" and not (kind == "integer" and isinstance(value, int) and value > 0):
            continue
        if applies in ("string", "array"):
            if kind != applies or not (value >= 0 and float(value).is_integer()):
                continue
            value = int(value)
        elif isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
            value = int(value) if kind == "integer" else value
        out.append((argument, value))
    return tuple(out)


def _model_refs(model: ModelDef) -> list[str]:
    refs: list[str] = []
    types = [model.root] if model.root is not None else [f.type for f in model.fields]
    for type_ in types:
        if type_ is not None:
            refs += [r for r in class_refs(type_) if r not in refs]
    return refs


def _dependency_order(models: Mapping[str, ModelDef]) -> list[str]:
    """Classes after the classes they mention (iterative DFS in creation order; cycles as found)."""
    order: list[str] = []
    state: dict[str, int] = {}
    for start in models:
        if state.get(start):
            continue
        stack: list[tuple[str, list[str]]] = [(start, _model_refs(models[start]))]
        state[start] = 1
        while stack:
            name, pending = stack[-1]
            while pending and state.get(pending[0], 0) != 0:
                pending.pop(0)
            if pending:
                nxt = pending.pop(0)
                if nxt in models:
                    state[nxt] = 1
                    stack.append((nxt, _model_refs(models[nxt])))
                continue
            stack.pop()
            state[name] = 2
            order.append(name)
    return order


# --------------------------------------------------------------------------------------- entry point


def build_models(tools: list[dict[str, Any]]) -> tuple[list[ClassPlan], ModelsIR]:
    """The planned tool classes and the models module."""
    names = _Names(set(_MODULE_NAMES))
    plans = plan_classes(tools, names)
    builder = _Builder(names)
    docs: list[tuple[_Doc, ClassPlan]] = []
    for key, (tool, plan) in enumerate(zip(tools, plans, strict=True)):
        docs.append((builder.document(2 * key, tool, "inputSchema", plan.input_class, plan.stem), plan))
        if plan.output_class is not None:
            docs.append((builder.document(2 * key + 1, tool, "outputSchema", plan.output_class, plan.stem), plan))
    try:
        for doc, _plan in docs:
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
    used: set[str] = set()
    params = []
    for f in model.fields:
        scalar_default = f.has_default and (f.default is None or isinstance(f.default, (str, int, float, bool)))
        params.append(
            ParamIR(
                name=_param_name(f.name, used),
                field_name=f.name,
                wire_name=f.wire_name,
                type=f.type,
                required=f.required,
                has_default=scalar_default,
                default=f.default if scalar_default else None,
                description=f.description,
            )
        )
    return tuple(params)


def _text(tool: Mapping[str, Any], key: str) -> str | None:
    value = tool.get(key)
    return value if isinstance(value, str) and value.strip() else None


def build_ir(spec: ValidatedSpec, *, package: str) -> PackageIR:
    """Validated tools -> PackageIR."""
    tools = [dict(tool) for tool in spec.tools]
    wire_names = [tool["name"] for tool in tools]
    if len(set(wire_names)) != len(wire_names):
        raise NameCollisionError("duplicate tool names reached the generator (TOOLS-15)")
    plans, models = build_models(tools)
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
            )
        )
    return PackageIR(
        package=package,
        source=spec.source,
        digest=spec.digest,
        generator_version=__version__,
        runtime_api_version=RUNTIME_API_VERSION,
        tools=tuple(tool_irs),
        models=models,
        definitions=tuple(tools),
    )
