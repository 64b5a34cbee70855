"""A tool's `outputSchema` rewritten into the schema the value generator draws from.

hypothesis-jsonschema reads drafts 04-07 and cannot follow recursive `$ref`s; tool schemas are
2020-12 by default (SCHEMA-01/02) and may recurse. `prepare` returns a schema without `$ref`s
in draft-07 spelling whose every instance is also an instance of the original — it may only
*narrow*, never widen, and the mock still checks every value against the original schema:

- `$ref`s are inlined (resolved with `referencing`, never fetched: SCHEMA-08); a reference that
  recurses deeper than `MAX_UNROLL` becomes `false`, which prunes that branch (an optional
  property is left out, an array stays short);
- 2020-12 keywords become their draft-07 forms (`prefixItems`/`items` -> `items`/`additionalItems`,
  `dependentRequired`/`dependentSchemas` -> `dependencies`);
- with `prefer_examples`, a subschema's `examples` and `default` (those valid against it)
  replace it as an `enum`, so the values a schema's author wrote come first;
- with `close_objects`, objects that do not ask for other properties get
  `additionalProperties: false`, so answers carry the declared properties only;
- unbounded integers stay within ±(2^53-1), which every JSON peer reads exactly, and unbounded
  numbers within ±10^9;
- with `prefer_examples`, a string or number without `examples`, `default`, `enum` or `const`
  gets the plausible values realistic.py guesses from its `format` and its property's name (an
  email address, a city, a humidity of 0..100), those valid against it, as an `enum`;
- a value the schema leaves free (`true`, `{}`, the members of an open object, the items of an
  array without `items`) is a string, number, boolean or null: what every peer can read.

Rewrites happen only where they narrow: never under `not` or `if`, and objects are not closed
(nor their free members, free items or missing `type` filled in) where another schema is merged
into them (`allOf` members, `anyOf`/`oneOf` members of a schema with properties of its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypeGuard

import referencing
import referencing.exceptions
import referencing.jsonschema

from ...protocol.xheader import MAX_SAFE_INTEGER
from ...schema import DRAFT7, SchemaCompileError, compile_schema, dialect_of
from ..canonical import canonical_json
from .realistic import guesses

__all__ = ["MAX_UNROLL", "UnsupportedSchema", "prepare"]

MAX_UNROLL: Final = 3  # how often one `$ref` target may repeat on a path before it is cut off
MAX_NODES: Final = 20_000  # an inlined schema larger than this is refused (exponential $ref fan-out)
MAX_DEPTH: Final = 200
MAX_NUMBER: Final = 10**9  # the bound of an unbounded number (integers: MAX_SAFE_INTEGER)
# What a value the schema leaves free becomes: a scalar every JSON peer reads.
FREE_TYPES: Final = ("string", "integer", "number", "boolean", "null")
_COMPOSED: Final = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "$ref", "enum", "const"})

_DROPPED: Final = frozenset(
    {
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$defs",
        "definitions",
        "$comment",
        "$vocabulary",
        "title",
        "description",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "minContains",
        "maxContains",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)
_ONE_SCHEMA: Final = ("additionalProperties", "propertyNames", "contains", "additionalItems", "then", "else")
_SCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf")
_SCHEMA_MAPS: Final = ("properties", "patternProperties")
_OBJECT_KEYWORDS: Final = frozenset(
    {
        "properties",
        "required",
        "patternProperties",
        "additionalProperties",
        "minProperties",
        "maxProperties",
        "dependentRequired",
        "dependentSchemas",
        "dependencies",
        "propertyNames",
    }
)
_OPENS_OBJECT: Final = frozenset(
    {
        "additionalProperties",
        "patternProperties",
        "unevaluatedProperties",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "dependentSchemas",
        "dependencies",
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
    }
)


class UnsupportedSchema(ValueError):
    """The schema cannot be turned into one the generator reads (a `$dynamicRef`, too large, ...)."""


def _refuse(uri: str) -> referencing.Resource[Any]:
    raise referencing.exceptions.NoSuchResource(uri)


def prepare(
    schema: Mapping[str, Any] | bool, *, prefer_examples: bool = True, close_objects: bool = True
) -> Any:
    """The generation schema for `schema` (see the module docstring); `UnsupportedSchema` if none."""
    if isinstance(schema, bool):
        return schema
    try:
        dialect = dialect_of(schema)
    except SchemaCompileError as exc:
        raise UnsupportedSchema(str(exc)) from exc
    spec = referencing.jsonschema.specification_with(dialect)
    root = spec.create_resource(schema)
    registry: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse)  # type: ignore[call-arg]
    walker = _Walker(spec, modern=dialect != DRAFT7, prefer=prefer_examples, close=close_objects)
    return walker.walk(schema, registry.resolver_with_root(root), (), preferable=True, closable=True, depth=0)


_ARRAY_KEYWORDS: Final = frozenset(
    {"items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains"}
)
_STRING_KEYWORDS: Final = frozenset({"minLength", "maxLength", "pattern", "format"})
_NUMBER_KEYWORDS: Final = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)


def _free() -> dict[str, Any]:
    """The schema of a value the original leaves free."""
    out: dict[str, Any] = {"type": list(FREE_TYPES)}
    _bound(out)
    return out


def _infer_type(node: Mapping[str, Any]) -> list[str]:
    """The types a node without `type` is about, from its keywords; a keyword-less node: scalars."""
    keys = set(node)
    types = [
        t
        for t, hints in (
            ("object", _OBJECT_KEYWORDS),
            ("array", _ARRAY_KEYWORDS),
            ("string", _STRING_KEYWORDS),
            ("number", _NUMBER_KEYWORDS),
        )
        if hints & keys
    ]
    return types or list(FREE_TYPES)


def _bound(schema: dict[str, Any]) -> None:
    declared = schema.get("type")
    types = (
        {declared} if isinstance(declared, str) else set(declared) if isinstance(declared, list) else set()
    )
    if "number" in types:
        _within(schema, MAX_NUMBER)
    elif "integer" in types:
        _within(schema, MAX_SAFE_INTEGER)


class _Walker:
    __slots__ = ("close", "modern", "nodes", "prefer", "spec")

    def __init__(self, spec: Any, *, modern: bool, prefer: bool, close: bool) -> None:
        self.spec = spec
        self.modern = modern
        self.prefer = prefer
        self.close = close
        self.nodes = 0

    def walk(
        self,
        node: Any,
        resolver: Any,
        path: tuple[int, ...],
        *,
        preferable: bool,
        closable: bool,
        depth: int,
        name: str | None = None,
        positive: bool = True,
    ) -> Any:
        if isinstance(node, bool) or not isinstance(node, Mapping):
            if node is False:
                return False
            node = {}  # `true` (or a non-schema, read as `true`): free
        if not positive:
            preferable = closable = False
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise UnsupportedSchema(
                f"the schema grows past {MAX_NODES} subschemas once its $refs are inlined"
            )
        if depth > MAX_DEPTH:
            raise UnsupportedSchema(f"the schema nests deeper than {MAX_DEPTH} levels")
        for keyword in ("$dynamicRef", "$recursiveRef"):
            if keyword in node:
                raise UnsupportedSchema(f"{keyword} is not supported by the value generator")

        if depth and isinstance(node.get("$id"), str):  # an embedded resource: the base URI of the refs below
            resolver = resolver.in_subresource(self.spec.create_resource(node))

        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._inline(
                node,
                ref,
                resolver,
                path,
                preferable=preferable,
                closable=closable,
                depth=depth,
                name=name,
                positive=positive,
            )

        out: dict[str, Any] = {}
        kids = {"resolver": resolver, "path": path, "depth": depth + 1, "positive": positive}
        own_object = any(k in node for k in ("properties", "required", "patternProperties"))
        for key, value in node.items():
            if key in _DROPPED or key.startswith("x-"):
                continue
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = {
                    member: self.walk(sub, preferable=preferable, closable=True, name=member, **kids)
                    for member, sub in value.items()
                }
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                # Merged members must stay open: closing one would forbid the others' properties.
                member_closable = key != "allOf" and not own_object
                out[key] = [
                    self.walk(sub, preferable=preferable, closable=member_closable, **kids) for sub in value
                ]
            elif key in ("not", "if"):
                out[key] = self.walk(value, preferable=False, closable=False, **{**kids, "positive": False})
            elif key in _ONE_SCHEMA:
                out[key] = self.walk(value, preferable=preferable, closable=True, **kids)
            elif key == "items":
                if isinstance(value, list):  # draft-07 tuple form
                    out[key] = [self.walk(sub, preferable=preferable, closable=True, **kids) for sub in value]
                elif self.modern and isinstance(node.get("prefixItems"), list):
                    out["additionalItems"] = self.walk(value, preferable=preferable, closable=True, **kids)
                else:  # an array's items are named after it: `tags`, `emails`
                    out[key] = self.walk(value, preferable=preferable, closable=True, name=name, **kids)
            elif key == "prefixItems" and self.modern and isinstance(value, list):
                out["items"] = [self.walk(sub, preferable=preferable, closable=True, **kids) for sub in value]
            elif key == "dependentRequired" and isinstance(value, Mapping):
                out.setdefault("dependencies", {}).update(value)
            elif key in ("dependentSchemas", "dependencies") and isinstance(value, Mapping):
                deps = out.setdefault("dependencies", {})
                for name, sub in value.items():
                    deps[name] = (
                        sub
                        if isinstance(sub, list)
                        else self.walk(sub, preferable=False, closable=False, **kids)
                    )
            else:
                out[key] = value
        if self.modern and isinstance(node.get("prefixItems"), list) and "items" not in node:
            out.setdefault("additionalItems", True)

        if positive and closable:
            self._sendable(node, out)
        if self.close and closable:
            _close(node, out)
        if self.prefer and preferable:
            chosen = _preferred(node, out, name)
            if chosen is not None:
                return {"enum": chosen}
        return out

    def _sendable(self, original: Mapping[str, Any], out: dict[str, Any]) -> None:
        """Fill in what the original leaves free with values every peer reads (see the module docstring)."""
        if "enum" in out or "const" in out:
            return
        if "type" not in out and not _COMPOSED.intersection(out):
            out["type"] = _infer_type(out)
        _bound(out)
        declared = out.get("type")
        types = (
            {declared}
            if isinstance(declared, str)
            else set(declared)
            if isinstance(declared, list)
            else set()
        )
        if "array" in types and not {"items", "prefixItems"}.intersection(original):
            out.setdefault("items", _free())
        if "object" in types and not _OPENS_OBJECT.intersection(original):
            out.setdefault("additionalProperties", _free())

    def _inline(
        self,
        node: Mapping[str, Any],
        ref: str,
        resolver: Any,
        path: tuple[int, ...],
        *,
        preferable: bool,
        closable: bool,
        depth: int,
        name: str | None,
        positive: bool,
    ) -> Any:
        try:
            resolved = resolver.lookup(ref)
        except referencing.exceptions.Unresolvable as exc:
            raise UnsupportedSchema(f"$ref {ref!r} does not resolve inside the schema") from exc
        target = resolved.contents
        if path.count(id(target)) >= MAX_UNROLL:
            return False  # recursion cut off: this branch produces no values
        inner = self.walk(
            target,
            resolved.resolver,
            (*path, id(target)),
            preferable=preferable,
            closable=closable and all(k == "$ref" or k in _DROPPED for k in node),
            depth=depth + 1,
            name=name,
            positive=positive,
        )
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if not self.modern or not any(k not in _DROPPED for k in siblings):
            return inner  # draft-07 ignores a $ref's siblings; annotations alone change nothing
        outer = self.walk(
            siblings,
            resolver,
            path,
            preferable=preferable,
            closable=False,
            depth=depth + 1,
            positive=positive,
        )
        return {"allOf": [outer, inner]}


def _within(schema: dict[str, Any], limit: int) -> None:
    """Bound an unbounded side of a numeric schema by ±limit, unless that contradicts the other side."""
    low, high = schema.get("minimum"), schema.get("maximum")
    for keyword in ("exclusiveMinimum", "exclusiveMaximum"):  # draft-04 booleans mean nothing alone
        if isinstance(schema.get(keyword), bool):
            return
    if low is None and "exclusiveMinimum" not in schema and not (_is_number(high) and high < -limit):
        schema["minimum"] = -limit
    high_floor = schema.get("exclusiveMinimum", low)
    if (
        high is None
        and "exclusiveMaximum" not in schema
        and not (_is_number(high_floor) and high_floor >= limit)
    ):
        schema["maximum"] = limit


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _close(original: Mapping[str, Any], prepared: dict[str, Any]) -> None:
    """`additionalProperties: false` on an object that declares its properties and asks for no
    others, when every required name is declared. Under `allOf`, the members' properties
    together are the declared ones (the members themselves stay open)."""
    parts = [prepared]
    members = prepared.get("allOf")
    if isinstance(members, list):
        if (_OPENS_OBJECT - {"allOf"}).intersection(original):
            return
        parts += members
    elif _OPENS_OBJECT.intersection(original):
        return
    names: set[str] = set()
    required: list[Any] = []
    for part in parts:
        if not isinstance(part, dict):
            return
        properties = part.get("properties", {} if part is prepared and members else None)
        if not isinstance(properties, dict) or (part is not prepared and _OPENS_OBJECT.intersection(part)):
            return
        names.update(properties)
        required += part.get("required", []) if isinstance(part.get("required", []), list) else [None]
    if not names or not all(name in names for name in required):
        return
    if isinstance(members, list):
        prepared["properties"] = {**{name: True for name in sorted(names)}, **prepared.get("properties", {})}
    prepared["additionalProperties"] = False


def _preferred(original: Mapping[str, Any], prepared: dict[str, Any], name: str | None) -> list[Any] | None:
    """The subschema's `examples` and `default` that are valid against it, in that order; without
    them, for a string or number that lists no values of its own, the realistic guesses."""
    candidates: list[Any] = []
    examples = original.get("examples")
    if isinstance(examples, list):
        candidates.extend(examples)
    if "default" in original:
        candidates.append(original["default"])
    if not candidates and not _COMPOSED.intersection(prepared):
        candidates = guesses(name, prepared)
    if not candidates:
        return None
    try:
        validate = compile_schema({"$schema": DRAFT7 + "#", **prepared})
    except SchemaCompileError:
        return None
    chosen: dict[bytes, Any] = {}
    for value in candidates:
        try:
            key = canonical_json(value)  # 1 and true are different JSON values, equal in Python
        except TypeError:
            continue
        if key not in chosen and validate(value) is None:
            chosen[key] = value
    return list(chosen.values()) or None
