"""Tool schemas -> the Python types, classes and aliases of models.py (`ModelsIR`).

`TypeBuilder.type_at` gives the closest *honest* type of the subschema at a pointer: one that
accepts every instance the schema accepts (it may accept more; it never rejects a valid value).
Scalars, literals, lists, tuples and dicts become type expressions (`ir.TypeExpr`); objects with
members become `ModelDef`s (fields in schema order, `fields`), enums of two or more values
become `Literal` aliases, a union of models tagged by distinct consts becomes a discriminated
union. Results are memoised per (document, pointer); a `$ref` cycle makes the subschema it reaches a
class (a RootModel when it is no object), so recursive schemas end in class references. A `$defs`
entry identical to one of another tool (`shareddefs`) is the type of that one.
`finish` orders the classes so each comes after the classes it mentions where the graph allows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from ..errors import InternalGeneratorError, UnsupportedSchemaError
from ..refs import join_pointer, json_type
from . import naming
from .classnames import ClassNames, path_name
from .fields import field_def
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
    Prim,
    TupleOf,
    TypeExpr,
    Union,
    class_refs,
    union,
)
from .schemadoc import MAX_DEPTH, Budget, SchemaDoc, open_document
from .schemafacts import (
    JSON_TYPES,
    OBJECT_KEYWORDS,
    SHAPE_KEYWORDS,
    Facts,
    collect_facts,
    declared_types,
    merge_facts,
    own_constraints,
)
from .shareddefs import entry_of

__all__ = ["TypeBuilder"]

_UNION_KEYWORDS: Final = ("oneOf", "anyOf")
_SHAPE_BESIDES_REF: Final = SHAPE_KEYWORDS - {"$ref", "$dynamicRef"}
_SHAPE_BESIDES_ALLOF: Final = SHAPE_KEYWORDS - {"allOf"}
_SHAPE_BESIDES_TYPE: Final = SHAPE_KEYWORDS - {"type"}
_SHAPE_BESIDES_UNION: Final = SHAPE_KEYWORDS - set(_UNION_KEYWORDS)
_PRIMITIVES: Final[Mapping[str, tuple[TypeExpr, ...]]] = {  # JSON type -> the Python types that hold it
    "string": (Prim("str"),),
    "integer": (Prim("int"),),
    "number": (Prim("int"), Prim("float")),
    "boolean": (Prim("bool"),),
    "null": (NONE,),
}
# `type` of a scalar subschema -> its Python type (what `_from_facts` gives for those types alone)
_SCALAR_TYPES: Final[Mapping[str, TypeExpr]] = {
    "string": Prim("str"),
    "integer": Prim("int"),
    "number": Union((Prim("int"), Prim("float"))),
    "boolean": Prim("bool"),
    "null": NONE,
}
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class TypeBuilder:
    """Builds the types of every tool member schema of one package into one models module."""

    def __init__(self, names: ClassNames) -> None:
        self.names = names
        self.budget = Budget()
        self.models: dict[str, ModelDef | None] = {}  # creation order; None while being built
        self.aliases: dict[str, AliasDef] = {}
        self.memo: dict[tuple[int, str], TypeExpr] = {}
        self.class_for: dict[tuple[int, str], str] = {}
        self.alias_for: dict[tuple[int, str], str] = {}
        self.active: set[tuple[int, str]] = set()
        self.root_wanted: set[tuple[int, str]] = set()  # a cycle reached this pointer: make it a class
        self.facts_memo: dict[tuple[int, str], Facts] = {}
        # (document, root `$defs` entry) -> the identical entry modelled in its place (`shareddefs`)
        self.redirects: dict[tuple[int, str], tuple[SchemaDoc, str]] = {}
        self.redirected_docs: set[int] = set()  # keys of the documents some redirect starts in

    def share(self, redirects: dict[tuple[int, str], tuple[SchemaDoc, str]]) -> None:
        """Model each redirected `$defs` entry as the identical entry it is redirected to."""
        self.redirects = redirects
        self.redirected_docs = {key for key, _entry in redirects}

    def document(
        self, key: int, tool: Mapping[str, Any], member: str, root_class: str, stem: str
    ) -> SchemaDoc:
        """`tool[member]` opened as document `key`; its root is the planned class `root_class`."""
        doc = open_document(key, tool, member, root_class, stem)
        self.class_for[(key, "")] = root_class
        return doc

    def path_name(self, doc: SchemaDoc, pointer: str) -> str:
        return path_name(pointer, doc.root_class, doc.def_classes)

    # ---- types

    def type_at(self, doc: SchemaDoc, pointer: str, depth: int) -> TypeExpr:
        key = (doc.key, pointer)
        known = self.memo.get(key)
        if known is not None:
            return known
        if doc.key in self.redirected_docs:
            shared = self._shared(doc, pointer)
            if shared is not None:  # an identical `$defs` entry of another document: one class for both
                result = self.memo[key] = self.type_at(shared[0], shared[1], depth)
                return result
        if key in self.active:  # a cycle: this subschema becomes (or already is) a class
            name = self.class_for.get(key)
            if name is None:
                name = self.class_for[key] = self.names.take(self.path_name(doc, pointer))
                self.root_wanted.add(key)
            return ModelRef(name)
        if depth > MAX_DEPTH:
            raise UnsupportedSchemaError(
                f"{doc.where(pointer)}: schemas nested deeper than {MAX_DEPTH} levels (SCHEMA-11)"
            )
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

    def _shared(self, doc: SchemaDoc, pointer: str) -> tuple[SchemaDoc, str] | None:
        entry = entry_of(pointer)
        target = self.redirects.get((doc.key, entry)) if entry is not None else None
        if target is None or entry is None:
            return None
        return target[0], target[1] + pointer[len(entry) :]

    def _compute(self, doc: SchemaDoc, pointer: str, depth: int) -> TypeExpr:
        node = doc.node(pointer)
        if not isinstance(node, dict):
            return ANY  # true (anything) or false (nothing: the runtime rejects every value)
        if SHAPE_KEYWORDS.isdisjoint(node):
            return ANY
        if _SHAPE_BESIDES_TYPE.isdisjoint(node):  # only `type`: most subschemas, read without facts
            scalar = self._scalar(node["type"])
            if scalar is not None:
                self.budget.tick(doc, pointer)  # the visit `collect_facts` would have counted
                return scalar
        # A bare `$ref` (annotations aside) is its target's type: recursive refs reuse one class.
        ref = doc.refs.get(pointer)
        if ref is not None and _SHAPE_BESIDES_REF.isdisjoint(node):
            target = self.type_at(doc, ref, depth + 1)
            if pointer == "" and isinstance(target, ModelRef) and self._is_object_model(target.name):
                # the tool's own class gets the target's fields (keyword parameters, not one dict)
                return self._model(doc, pointer, self.facts(doc, pointer, depth), depth)
            return target
        if "enum" in node or "const" in node:
            return self._literal(doc, pointer, node)
        alternatives = self._alternatives(doc, pointer, node) if "oneOf" in node or "anyOf" in node else None
        if alternatives is not None:
            return self._union(doc, pointer, node, alternatives, depth)
        allof = node.get("allOf")
        if (
            isinstance(allof, list)
            and len(allof) == 1
            and ref is None
            and _SHAPE_BESIDES_ALLOF.isdisjoint(node)
        ):
            return self.type_at(doc, join_pointer(pointer, "allOf", 0), depth + 1)
        facts = self.facts(doc, pointer, depth)
        return self._from_facts(doc, pointer, facts, depth)

    @staticmethod
    def _scalar(declared: Any) -> TypeExpr | None:
        """The type of a subschema whose only shape keyword is `type` (its value `declared`) when
        that allows no object or array; None otherwise (objects and arrays need the facts)."""
        if isinstance(declared, str) and declared in _SCALAR_TYPES:
            return _SCALAR_TYPES[declared]
        types = declared_types(declared)
        if types is None or "object" in types or "array" in types:
            return None
        if not types:
            return ANY  # no known type: nothing is valid, the runtime says so (as `_from_facts`)
        return union([t for kind in JSON_TYPES if kind in types for t in _PRIMITIVES[kind]])

    def _is_object_model(self, name: str) -> bool:
        if name not in self.models:
            return False  # a RootModel asked for by a cycle, not built yet
        model = self.models[name]
        return model is None or model.root is None  # None: a BaseModel still being built

    def _alternatives(self, doc: SchemaDoc, pointer: str, node: Mapping[str, Any]) -> list[str] | None:
        """Pointers of the oneOf (else anyOf) members when they say something about the shape."""
        for keyword in _UNION_KEYWORDS:
            members = node.get(keyword)
            if isinstance(members, list) and members:
                pointers = [join_pointer(pointer, keyword, i) for i in range(len(members))]
                if all(self._shapes(doc, p) for p in pointers):
                    return pointers
        return None

    def _shapes(self, doc: SchemaDoc, pointer: str) -> bool:
        node = doc.node(pointer)
        return isinstance(node, dict) and not SHAPE_KEYWORDS.isdisjoint(node)

    def _literal(self, doc: SchemaDoc, pointer: str, node: Mapping[str, Any]) -> TypeExpr:
        values = node["enum"] if "enum" in node else [node["const"]]
        if not isinstance(values, list):
            return ANY
        allowed = declared_types(node.get("type"))
        literal: list[str | int | bool] = []
        distinct: set[tuple[type, str | int | bool]] = set()  # by type too: `True == 1`, not the same literal
        members: list[TypeExpr] = []
        for value in values:
            kind = json_type(value)
            if (
                allowed is not None
                and kind not in allowed
                and not (kind == "integer" and "number" in allowed)
            ):
                continue  # the value cannot be valid: it fails `type`
            if kind == "null":
                members.append(NONE)
            elif kind == "string" and _SURROGATE.search(value):
                members.append(Prim("str"))  # pydantic cannot hold a lone surrogate in a Literal
            elif kind in ("string", "integer", "boolean"):
                if isinstance(value, float):  # 1.0 is the integer 1 in JSON Schema; Literal needs an int
                    value = int(value)
                typed = (type(value), value)
                if typed not in distinct:
                    distinct.add(typed)
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
        if not members:
            return head[0]  # the values are distinct already: nothing for `union` to merge
        return union(head + members)

    def _union(
        self, doc: SchemaDoc, pointer: str, node: Mapping[str, Any], alternatives: list[str], depth: int
    ) -> TypeExpr:
        # facts of the schema around the union: only when it says more than the union itself
        base_facts = None if _SHAPE_BESIDES_UNION.isdisjoint(node) else self.facts(doc, pointer, depth)
        merge = base_facts is not None and bool(base_facts.properties or base_facts.required)
        members: list[TypeExpr] = []
        for alternative in alternatives:
            if merge and base_facts is not None and self._object_like(doc, alternative):
                facts = self.facts(doc, alternative, depth + 1)
                combined = merge_facts(base_facts, facts)
                members.append(self._model(doc, alternative, combined, depth + 1))
            else:
                members.append(self.type_at(doc, alternative, depth + 1))
        result = union(members)
        if isinstance(result, Union):
            tag = node.get("discriminator")
            wanted = tag.get("propertyName") if isinstance(tag, dict) else None
            result = self._discriminated(result, wanted if isinstance(wanted, str) else None)
        return result

    def _object_like(self, doc: SchemaDoc, pointer: str) -> bool:
        node = doc.node(pointer)
        if not isinstance(node, dict):
            return False
        declared = declared_types(node.get("type"))
        if declared is not None:
            return declared == {"object"}
        return any(k in node for k in OBJECT_KEYWORDS) or "required" in node

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
                tags = (
                    _string_tags(found.type, self.aliases) if found is not None and found.required else None
                )
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

    def facts(self, doc: SchemaDoc, pointer: str, depth: int) -> Facts:
        """The merged facts of `pointer` (memoised: callers must not change the result)."""
        key = (doc.key, pointer)
        known = self.facts_memo.get(key)
        if known is None:
            known = self.facts_memo[key] = collect_facts(doc, pointer, depth, self.budget)
        return known

    def _from_facts(self, doc: SchemaDoc, pointer: str, facts: Facts, depth: int) -> TypeExpr:
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
        for kind in JSON_TYPES:
            if kind not in types:
                continue
            if kind == "object":
                members.append(self._object(doc, pointer, facts, depth))
            elif kind == "array":
                members.append(self._array(doc, facts, depth))
            else:
                members.extend(_PRIMITIVES[kind])
        return union(members)

    def _object(self, doc: SchemaDoc, pointer: str, facts: Facts, depth: int) -> TypeExpr:
        if facts.properties or facts.required or facts.conditional or pointer == "":
            return self._model(doc, pointer, facts, depth)
        return DictOf(self._extra_type(doc, facts, depth))

    def _extra_type(self, doc: SchemaDoc, facts: Facts, depth: int) -> TypeExpr:
        """The type of values under keys no `properties` entry names."""
        if not facts.extra_schemas or (facts.open_extra and not facts.closed):
            return ANY
        if (
            not facts.closed
            and any("/patternProperties/" in p for p in facts.extra_schemas)
            and not any(p.endswith("/additionalProperties") for p in facts.extra_schemas)
        ):
            return ANY  # keys matching no pattern may hold anything
        return union([self.type_at(doc, p, depth + 1) for p in facts.extra_schemas])

    def _array(self, doc: SchemaDoc, facts: Facts, depth: int) -> TypeExpr:
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

    def _model(self, doc: SchemaDoc, pointer: str, facts: Facts, depth: int) -> TypeExpr:
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
        unusable: list[str] = []
        if _SURROGATE.search("".join(wire_names)):  # one search for the model, not one per name
            unusable = [n for n in wire_names if _SURROGATE.search(n)]
            wire_names = [n for n in wire_names if n not in unusable]
        names = naming.field_names(wire_names)
        required_names = set(facts.required)
        fields: list[FieldDef] = []
        for wire in wire_names:
            declarations = facts.properties.get(wire, [])
            required = wire in required_names and wire in facts.properties
            if len(declarations) == 1:  # the common case
                chosen = self.type_at(doc, declarations[0], depth + 1)
                source = declarations[0]
            elif declarations:
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
                required = wire in required_names
            fields.append(self._field(doc, names[wire], wire, chosen, required, source))
        extra: Any = "forbid" if facts.closed and not facts.extra_schemas and not unusable else "allow"
        required_fields = {f.wire_name: f.name for f in fields if f.required}
        in_order = tuple(dict.fromkeys(required_fields[w] for w in facts.required if w in required_fields))
        self.models[name] = ModelDef(name=name, fields=tuple(fields), extra=extra, required=in_order)
        return ModelRef(name)

    def _field(
        self, doc: SchemaDoc, name: str, wire: str, type_: TypeExpr, required: bool, source: str | None
    ) -> FieldDef:
        node = doc.node(source) if source is not None else None
        bounds: Mapping[str, Any] = {}
        if source is not None and isinstance(node, dict):
            if "allOf" in node or source in doc.refs:
                bounds = self.facts(doc, source, 0).constraints
            else:  # no `$ref`, no `allOf`: the subschema's own bounds are all its facts hold
                bounds = own_constraints(node)
        return field_def(name, wire, type_, required, node, bounds, self.aliases)

    # ---- output

    def finish(self) -> ModelsIR:
        models: dict[str, ModelDef] = {}
        for name, model in self.models.items():
            if model is None:  # pragma: no cover - every started model is finished
                raise InternalGeneratorError(f"model {name!r} was never finished")
            models[name] = model
        order = _dependency_order(models)
        return ModelsIR(aliases=tuple(self.aliases.values()), models=tuple(models[n] for n in order))


def _string_tags(type_: TypeExpr, aliases: Mapping[str, AliasDef]) -> set[str] | None:
    if isinstance(type_, AliasRef):
        type_ = aliases[type_.name].value
    if isinstance(type_, Lit) and type_.values and all(isinstance(v, str) for v in type_.values):
        return {str(v) for v in type_.values}
    return None


def _model_refs(model: ModelDef) -> list[str]:
    if model.root is not None:
        return class_refs(model.root)
    return class_refs(*[f.type for f in model.fields])


def _dependency_order(models: Mapping[str, ModelDef]) -> list[str]:
    """Classes after the classes they mention (iterative DFS in creation order; cycles as found)."""
    order: list[str] = []
    started: set[str] = set()
    for start in models:
        if start in started:
            continue
        started.add(start)
        stack: list[tuple[str, Iterator[str]]] = [(start, iter(_model_refs(models[start])))]
        while stack:
            name, pending = stack[-1]
            for nxt in pending:  # the next class it mentions that is not started yet
                if nxt not in started and nxt in models:
                    started.add(nxt)
                    stack.append((nxt, iter(_model_refs(models[nxt]))))
                    break
            else:
                stack.pop()
                order.append(name)
    return order
