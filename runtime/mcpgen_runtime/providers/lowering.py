"""The one schema walk every profile runs: each node's keywords checked against a profile's `Rules`,
lowered where a faithful lowering exists (walk.py says what faithful means), reported where not.

A profile is data (`Rules`: which keywords it keeps, whether objects must be closed and every
property required, how it takes `$ref`, `type` lists and `oneOf`) plus the few checks of its own its
module adds (limits, names). `lower_schema` returns the lowered schema, or None when some problem
has no faithful lowering; the problems are in the `Walk` either way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .walk import (
    ANNOTATIONS,
    MAX_NODES,
    MAX_POINTER,
    VALIDATION,
    Walk,
    disjoint_branches,
    is_nullable,
    made_nullable,
    pointer,
    types_of,
)

__all__ = ["Rules", "lower_schema"]

# The keywords this walk interprets itself (every profile): the rest are checked against `Rules.keeps`.
_STRUCTURE = frozenset(
    {"type", "properties", "required", "additionalProperties", "items", "anyOf", "oneOf", "allOf"}
    | {"enum", "const", "$ref", "$defs", "definitions", "format", "pattern"}
)
_PRIMITIVES = (str, int, float, bool, type(None))
# The keywords that apply to values of one type (a `type` list split into `anyOf` branches keeps each
# with its type's keywords).
_APPLIES = {
    "object": frozenset({"properties", "required", "additionalProperties", "minProperties", "maxProperties"}),
    "array": frozenset({"items", "minItems", "maxItems"}),
    "string": frozenset({"pattern", "format", "minLength", "maxLength"}),
    "number": frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"}
    ),
    "integer": frozenset(
        {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "format"}
    ),
}
_NUMBER = {"number": "integer"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "?")


@dataclass(frozen=True)
class Rules:
    """What one provider's function-calling subset takes.

    keeps: validation keywords kept as they are (beside the structure this walk interprets);
    annotations: annotation keywords kept (others are dropped, faithfully);
    formats: `format` values kept (None: any); others are dropped (an annotation);
    closed: every object must say `additionalProperties: false`;
    all_required: every property must be in `required` (optional ones become required + nullable);
    refs: "keep" (local `$ref` and `$defs` as they are) or "inline" (each `$ref` replaced by its target);
    recursion: whether a recursive `$ref` is accepted (with refs="keep");
    type_list: how a `type` list is taken: "keep"; "anyOf" (one branch per type, each with the
        keywords that apply to it); "nullable" (OpenAPI: `null` as `nullable: true`, the rest as "anyOf");
    ref_siblings: whether a `$ref` may have keywords beside it (annotations beside it are dropped);
    root_combinators: whether the root may be an `anyOf`/`oneOf`/`allOf`;
    all_of: whether `allOf` is kept (else a single branch is merged into its node);
    enum_values: which enum and const values are taken ("primitive", "string" or "any");
    needs_type: every schema must have a `type` (or `$ref`, `anyOf`, `enum`, `const`);
    pattern_ok: whether a `pattern` is accepted (None: all);
    property_name: the pattern property names must match (None: any).
    """

    name: str
    title: str
    keeps: frozenset[str]
    annotations: frozenset[str]
    formats: frozenset[str] | None = None
    closed: bool = False
    all_required: bool = False
    refs: str = "keep"
    recursion: bool = True
    type_list: str = "keep"
    ref_siblings: bool = True
    root_combinators: bool = False
    all_of: bool = False
    enum_values: str = "any"
    needs_type: bool = False
    pattern_ok: Callable[[str], bool] | None = None
    property_name: re.Pattern[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def lower_schema(schema: Any, rules: Rules, walk: Walk) -> dict[str, Any] | None:
    """`schema` (a tool's inputSchema) lowered for `rules`; None when some problem cannot be lowered."""
    if not isinstance(schema, dict):
        walk.report("", "type", "the input schema is not an object schema")
        return None
    root = dict(schema)
    declared = types_of(root)
    if not declared and "properties" in root:
        root["type"] = "object"
        walk.report("", "type", "the root has properties but no type", 'add "type": "object"')
    elif declared != ["object"]:
        walk.report(
            "", "type", f"{rules.title} takes an object at the root, not {declared or 'an untyped schema'}"
        )
        return None
    if not rules.root_combinators:
        for keyword in ("anyOf", "oneOf", "allOf"):
            if keyword in root:
                walk.report(pointer(keyword), keyword, f"{rules.title} refuses `{keyword}` at the root")
                return None
    recursive = walk.recursive_refs()
    lowered = _Lowerer(rules, walk, recursive).node(root, (), depth=0, in_ref=())
    if any(not problem.faithful for problem in walk.problems) or not isinstance(lowered, dict):
        return None
    return lowered


class _Lowerer:
    def __init__(self, rules: Rules, walk: Walk, recursive: set[str]) -> None:
        self.rules = rules
        self.walk = walk
        self.recursive = recursive
        self.visited = 0
        self.too_large = False

    def refuse(self, path: tuple[str | int, ...], keyword: str, message: str) -> None:
        self.walk.report(pointer(*path), keyword, message)

    def lower(self, path: tuple[str | int, ...], keyword: str, message: str, how: str) -> None:
        self.walk.report(pointer(*path), keyword, message, how)

    def node(self, node: Any, path: tuple[str | int, ...], *, depth: int, in_ref: tuple[str, ...]) -> Any:
        rules = self.rules
        self.visited += 1
        if self.visited > MAX_NODES or len(path) + len(in_ref) > MAX_POINTER:
            if not self.too_large:
                self.too_large = True
                self.walk.report(
                    "",
                    "$ref",
                    f"larger than mcpgen lints ({MAX_NODES} schemas or {MAX_POINTER} levels)",
                )
            return {}
        if node is True or node == {}:
            if rules.needs_type:
                self.refuse(path, "type", f"{rules.title} needs a type here (any value is not expressible)")
            elif node is True:
                self.lower(path, "true", "the schema `true`", "`{}` (the same: any value)")
            return {}
        if node is False or not isinstance(node, dict):
            self.refuse(path, "type", f"{rules.title} cannot express the schema {str(node)[:40]!r}")
            return {}
        node = self._merge_single_all_of(node, path)
        out: dict[str, Any] = {}
        for key, value in node.items():
            here = (*path, key)
            if key in _STRUCTURE:
                continue
            if key in rules.keeps or key in rules.annotations:
                out[key] = value
            elif key in ANNOTATIONS:
                self.lower(here, key, f"{rules.title} does not take `{key}`", f"drop `{key}` (an annotation)")
            elif key not in VALIDATION:
                self.lower(
                    here, key, f"`{key}` is not a JSON Schema keyword", "drop it (validators ignore it)"
                )
            else:
                self.refuse(
                    here, key, f"`{key}` is not in {rules.title}'s subset (dropping it would admit more)"
                )
        self._ref(node, out, path, depth=depth, in_ref=in_ref)
        self._types(node, out, path)
        self._enum_const(node, out, path)
        self._format_pattern(node, out, path)
        self._combinators(node, out, path, depth=depth, in_ref=in_ref)
        if "items" in node:
            items = node["items"]
            if isinstance(items, list):
                self.refuse(
                    (*path, "items"), "items", f"{rules.title} cannot express tuples (`items` as a list)"
                )
            else:
                out["items"] = self.node(items, (*path, "items"), depth=depth + 1, in_ref=in_ref)
        if "object" in types_of(node) or "properties" in node:
            self._object(node, out, path, depth=depth, in_ref=in_ref)
        for defs in ("$defs", "definitions"):
            if defs in node and isinstance(node[defs], dict) and rules.refs == "keep":
                out[defs] = {
                    name: self.node(sub, (*path, defs, name), depth=depth, in_ref=in_ref)
                    for name, sub in node[defs].items()
                }
            elif defs in node and rules.refs != "keep" and not path:
                self.lower((*path, defs), defs, f"{rules.title} takes no `{defs}`", "inline each `$ref`")
        if rules.needs_type and not (
            {"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const"} & set(node)
        ):
            self.refuse(path, "type", f"{rules.title} needs a type on every schema")
        if "$ref" in out and len(out) > 1 and not rules.ref_siblings:
            out = self._lone_ref(out, path)
        if len(types_of(out)) > 1 and rules.type_list != "keep":
            out = self._split_types(out, path)
        return out

    def _lone_ref(self, out: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
        beside = sorted(set(out) - {"$ref"})
        if set(beside) <= ANNOTATIONS:
            self.lower(
                path, "$ref", f"{self.rules.title} takes nothing beside `$ref`", f"drop {', '.join(beside)}"
            )
            return {"$ref": out["$ref"]}
        self.refuse(path, "$ref", f"{self.rules.title} takes nothing beside `$ref` ({', '.join(beside)})")
        return out

    def _split_types(self, out: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
        declared = types_of(out)
        others = [kind for kind in declared if kind != "null"]
        nullable = self.rules.type_list == "nullable" and "null" in declared
        shared = {key: value for key, value in out.items() if key in ANNOTATIONS}
        if nullable and len(others) == 1:
            self.lower(
                (*path, "type"), "type", "a list of types", f'"type": "{others[0]}" with "nullable": true'
            )
            return {**out, "type": others[0], "nullable": True}
        self.lower((*path, "type"), "type", "a list of types", "`anyOf` with one branch per type")
        branches = []
        for kind in others if nullable else declared:
            branch = {key: value for key, value in out.items() if key in _APPLIES.get(kind, frozenset())}
            if "enum" in out:
                branch["enum"] = [
                    value for value in out["enum"] if _json_type(value) in (kind, _NUMBER.get(kind))
                ]
            branches.append({"type": kind, **branch})
        return {**shared, "anyOf": branches, **({"nullable": True} if nullable else {})}

    def _merge_single_all_of(self, node: dict[str, Any], path: tuple[str | int, ...]) -> dict[str, Any]:
        branches = node.get("allOf")
        if self.rules.all_of or not isinstance(branches, list) or len(branches) != 1:
            return node
        (branch,) = branches
        if not isinstance(branch, dict) or set(branch) & (set(node) - {"allOf"} - ANNOTATIONS):
            return node
        self.lower((*path, "allOf"), "allOf", "a one-branch `allOf`", "merge its branch into the schema")
        merged = {key: value for key, value in node.items() if key != "allOf"}
        merged.update(branch)
        return merged

    def _ref(self, node: dict[str, Any], out: dict[str, Any], path: tuple[str | int, ...], **kw: Any) -> None:
        ref = node.get("$ref")
        if ref is None:
            return
        here = (*path, "$ref")
        target = self.walk.resolve(ref) if isinstance(ref, str) else None
        if target is None:
            self.refuse(
                here, "$ref", f"`$ref` {ref!r} is not a local reference {self.rules.title} can follow"
            )
            return
        if ref in self.recursive and (self.rules.refs != "keep" or not self.rules.recursion):
            self.refuse(here, "$ref", f"{self.rules.title} refuses recursive schemas (`$ref` {ref!r})")
            return
        if self.rules.refs == "keep":
            out["$ref"] = ref
            return
        if ref in kw["in_ref"]:
            return
        self.lower(here, "$ref", f"{self.rules.title} takes no `$ref`", f"inline {ref}")
        inlined = self.node(target, path, depth=kw["depth"], in_ref=(*kw["in_ref"], ref))
        for key, value in inlined.items():
            out.setdefault(key, value)

    def _types(self, node: dict[str, Any], out: dict[str, Any], path: tuple[str | int, ...]) -> None:
        if "type" in node:
            declared = types_of(node)
            out["type"] = declared[0] if len(declared) == 1 else declared

    def _enum_const(self, node: dict[str, Any], out: dict[str, Any], path: tuple[str | int, ...]) -> None:
        for keyword in ("enum", "const"):
            if keyword not in node:
                continue
            values = node[keyword] if keyword == "enum" else [node[keyword]]
            here = (*path, keyword)
            if not isinstance(values, list) or not self._values_ok(values):
                self.refuse(
                    here, keyword, f"{self.rules.title} takes only {self.rules.enum_values} {keyword} values"
                )
                continue
            if keyword == "enum" or "const" in self.rules.keeps:
                out[keyword] = values if keyword == "enum" else node[keyword]
            elif "enum" not in node:
                self.lower(
                    here, "const", f"{self.rules.title} takes no `const`", "an `enum` of that one value"
                )
                out["enum"] = values

    def _values_ok(self, values: list[Any]) -> bool:
        kind = self.rules.enum_values
        if kind == "string":
            return all(isinstance(value, str) for value in values)
        if kind == "primitive":
            return all(isinstance(value, _PRIMITIVES) for value in values)
        return True

    def _format_pattern(self, node: dict[str, Any], out: dict[str, Any], path: tuple[str | int, ...]) -> None:
        rules = self.rules
        if "format" in node:
            if not isinstance(node["format"], str):
                self.refuse((*path, "format"), "format", "`format` is not a string")
            elif rules.formats is None or node["format"] in rules.formats:
                out["format"] = node["format"]
            else:
                self.lower(
                    (*path, "format"),
                    "format",
                    f"{rules.title} does not take `format: {node['format']}`",
                    "drop it (`format` is an annotation)",
                )
        if "pattern" in node:
            pattern = node["pattern"]
            if "pattern" not in rules.keeps or not isinstance(pattern, str):
                self.refuse((*path, "pattern"), "pattern", f"`pattern` is not in {rules.title}'s subset")
            elif rules.pattern_ok is not None and not rules.pattern_ok(pattern):
                self.refuse((*path, "pattern"), "pattern", f"{rules.title} cannot compile this `pattern`")
            else:
                out["pattern"] = pattern

    def _combinators(
        self, node: dict[str, Any], out: dict[str, Any], path: tuple[str | int, ...], **kw: Any
    ) -> None:
        rules = self.rules
        for keyword in ("anyOf", "oneOf", "allOf"):
            branches = node.get(keyword)
            if branches is None:
                continue
            here = (*path, keyword)
            if not isinstance(branches, list):
                self.refuse(here, keyword, f"`{keyword}` is not a list")
                continue
            target = keyword
            if keyword == "oneOf":
                if not disjoint_branches(branches):
                    self.refuse(
                        here, "oneOf", f"{rules.title} takes no `oneOf`, and these branches may overlap"
                    )
                    continue
                self.lower(
                    here, "oneOf", f"{rules.title} takes no `oneOf`", "`anyOf` (the branches are disjoint)"
                )
                target = "anyOf"
            if keyword == "allOf" and not rules.all_of:
                self.refuse(here, "allOf", f"{rules.title} takes no `allOf`")
                continue
            lowered = [self.node(branch, (*here, index), **kw) for index, branch in enumerate(branches)]
            out[target] = [*out.get(target, []), *lowered]

    def _object(
        self, node: dict[str, Any], out: dict[str, Any], path: tuple[str | int, ...], **kw: Any
    ) -> None:
        rules = self.rules
        properties = node.get("properties", {})
        if not isinstance(properties, dict):
            self.refuse((*path, "properties"), "properties", "`properties` is not an object")
            return
        listed = node.get("required")
        required = [name for name in listed if isinstance(name, str)] if isinstance(listed, list) else []
        lowered: dict[str, Any] = {}
        for name, sub in properties.items():
            here = (*path, "properties", name)
            if rules.property_name is not None and not rules.property_name.fullmatch(name):
                self.refuse(here, "properties", f"{rules.title} refuses the property name {name!r}")
            lowered[name] = self.node(sub, here, depth=kw["depth"] + 1, in_ref=kw["in_ref"])
            if rules.all_required and name not in required:
                if is_nullable(sub):
                    self.refuse(
                        here, "required", "optional and already nullable: a `null` could not say 'not sent'"
                    )
                else:
                    self.lower(
                        here, "required", "an optional property", "required and nullable (null = not sent)"
                    )
                    lowered[name] = made_nullable(lowered[name])
                    self.walk.nullable_optional.append(pointer(*here))
        if "properties" in node or rules.closed:
            out["properties"] = lowered  # closed profiles spell out an empty property list
        if rules.all_required:
            out["required"] = list(properties)
        elif "required" in node:
            out["required"] = node["required"]
        self._closed(node, out, path, depth=kw["depth"], in_ref=kw["in_ref"], has_properties=bool(properties))

    def _closed(
        self, node: dict[str, Any], out: dict[str, Any], path: tuple[str | int, ...], **kw: Any
    ) -> None:
        extra = node.get("additionalProperties")
        here = (*path, "additionalProperties")
        if not self.rules.closed:
            if extra is not None:
                out["additionalProperties"] = (
                    extra
                    if isinstance(extra, bool)
                    else self.node(extra, here, depth=kw["depth"] + 1, in_ref=kw["in_ref"])
                )
            return
        if extra is False:
            out["additionalProperties"] = False
        elif isinstance(extra, dict) and extra and not kw["has_properties"]:
            self.refuse(here, "additionalProperties", f"{self.rules.title} cannot express a map (open keys)")
        elif kw["has_properties"] or not path:
            # a tool with no parameters at all is an empty closed object, which is what it means
            self.lower(here, "additionalProperties", "an open object", "additionalProperties: false")
            out["additionalProperties"] = False
        else:
            self.refuse(here, "additionalProperties", f"{self.rules.title} cannot express a free-form object")
