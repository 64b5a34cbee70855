"""`mcpgen diff`'s judgement of two versions of one schema (an input or output schema): what the
change does to the set of valid values, subschema by subschema.

- narrowed: fewer values are valid (a type or enum value removed, a bound tightened, a
  property made required, `additionalProperties` closed, a `pattern` or `format` added);
- widened: more values are valid (the reverse);
- changed: cannot be decided soundly (`not`, `if`/`then`/`else`, a different `pattern`,
  reshuffled `anyOf`/`oneOf`/`allOf`, an unresolvable `$ref`) — reported as possibly breaking,
  never as compatible;
- cosmetic: nothing a validator reads (`description`, `title`, `examples`, `default`, ...);
- removed, renamed, described: a property gone, renamed, or added as optional (judged by meaning).

One recursive judgement over pairs of subschemas, keyword by keyword, `$ref`s followed on both
sides; nothing recurses without a bound or evaluates a pattern: hostile schemas can only make the
answer "changed". Whom each finding breaks is diff/compare.py's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..refs import PointerError, join_pointer, resolve_pointer

__all__ = ["Direction", "Found", "SchemaComparison", "renames", "short"]

Direction = Literal["narrowed", "widened", "changed", "cosmetic", "removed", "renamed", "described"]
# removed / renamed / described: a property that went away, changed its name, or was added as optional.
# Judged by meaning, not by the set of valid values (removing a described property widens that set,
# yet a client that sends or reads it is broken).

_MAX_DEPTH: Final = 64  # schema nesting compared structurally; deeper differences are "changed"
_COSMETIC: Final = frozenset(
    {
        "description",
        "title",
        "examples",
        "default",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$id",
        "$anchor",
        "$schema",
        "markdownDescription",
    }
)
# Keywords compared structurally below; anything else that differs is "changed".
_LOWER_BOUNDS: Final = (
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
    "minContains",
)
_UPPER_BOUNDS: Final = (
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
    "maxContains",
)
# Adding one of these can only narrow, removing it only widen; changing it cannot be judged.
_ADDED_NARROWS: Final = (
    "pattern",
    "format",
    "uniqueItems",
    "multipleOf",
    "propertyNames",
    "contains",
    "not",
    "if",
    "dependentRequired",
    "dependentSchemas",
)
_HANDLED: Final = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "$defs",
        "definitions",
        *_LOWER_BOUNDS,
        *_UPPER_BOUNDS,
        *_ADDED_NARROWS,
        "then",
        "else",
    }
)
_JSON_TYPES: Final = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})


@dataclass(frozen=True, slots=True)
class Found:
    pointer: str
    direction: Direction
    reason: str


class SchemaComparison:
    """Compares two schema documents (an old and a new inputSchema or outputSchema)."""

    def __init__(self, old_root: Any, new_root: Any) -> None:
        self.roots = (old_root, new_root)
        self.found: list[Found] = []
        self._comparing: set[tuple[str, str]] = set()  # (old, new) pointers under comparison: $ref cycles
        self._done: set[tuple[str, str]] = set()  # compared already: a definition used many times, once
        self._digests: dict[int, tuple[Any, bytes]] = {}  # id -> (node, digest of its canonical JSON)

    def run(self) -> list[Found]:
        self.schema(self.roots[0], self.roots[1], "", "", "", 0)
        return self.found

    def note(self, pointer: str, direction: Direction, reason: str) -> None:
        self.found.append(Found(pointer, direction, reason))

    def _deref(self, schema: Any, side: int, where: str) -> tuple[Any, str, bool]:
        """Follow `$ref`s that are local JSON pointers; (schema, its pointer, resolved?)."""
        hops = 0
        while isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str) and len(schema) == 1:
            ref = schema["$ref"]
            if not ref.startswith("#") or hops > 32:
                return schema, where, False
            try:
                target = resolve_pointer(self.roots[side], ref[1:])
            except PointerError:  # unresolvable: cannot decide
                return schema, where, False
            schema, where, hops = target, ref[1:], hops + 1
        return schema, where, True

    def schema(self, old: Any, new: Any, at: str, old_where: str, new_where: str, depth: int) -> None:
        old, old_where, old_ok = self._deref(old, 0, old_where)
        new, new_where, new_ok = self._deref(new, 1, new_where)
        if self._digest(old) == self._digest(new) and not _has_ref(old):
            return  # identical and self-contained (equal `$ref`s may point at different definitions)
        if not (old_ok and new_ok):
            self.note(at, "changed", "a $ref that is not a local JSON pointer changed")
            return
        key = (old_where, new_where)
        if key in self._comparing or key in self._done:
            return  # a recursive schema being compared further up, or a shared definition compared before
        if depth > _MAX_DEPTH:
            self.note(at, "changed", f"schemas nested deeper than {_MAX_DEPTH} levels differ")
            return
        if (
            isinstance(old, bool)
            or isinstance(new, bool)
            or not isinstance(old, Mapping)
            or not isinstance(new, Mapping)
        ):
            self._booleans(old, new, at)
            return
        self._comparing.add(key)
        try:
            self._keywords(old, new, at, old_where, new_where, depth)
        finally:
            self._comparing.discard(key)
            self._done.add(key)

    def _digest(self, node: Any) -> bytes:
        """A digest of `node`'s canonical JSON, each container hashed once (post-order, no recursion):
        comparing every level of a deep schema stays linear."""
        stack: list[tuple[Any, bool]] = [(node, False)]
        while stack:
            item, ready = stack.pop()
            if not isinstance(item, Mapping | list) or self._known(item) is not None:
                continue
            children = list(item.values()) if isinstance(item, Mapping) else item
            if not ready:
                stack.append((item, True))
                stack.extend((child, False) for child in children)
                continue
            h = hashlib.sha256(b"{" if isinstance(item, Mapping) else b"[")
            if isinstance(item, Mapping):
                for key in sorted(item, key=str):
                    h.update(_canonical(str(key)).encode())
                    h.update(self._part(item[key]))
            else:
                for child in item:
                    h.update(self._part(child))
            self._digests[id(item)] = (item, h.digest())
        return self._part(node)

    def _known(self, item: Any) -> bytes | None:
        hit = self._digests.get(id(item))
        return hit[1] if hit is not None and hit[0] is item else None

    def _part(self, item: Any) -> bytes:
        known = self._known(item) if isinstance(item, Mapping | list) else None
        return known if known is not None else hashlib.sha256(_canonical(item).encode()).digest()

    def _booleans(self, old: Any, new: Any, at: str) -> None:
        if _accepts_everything(old) and not _accepts_everything(new):
            self.note(at, "narrowed", "no longer accepts every value")
        elif _accepts_everything(new) and not _accepts_everything(old):
            self.note(at, "widened", "now accepts every value")
        elif new is False:
            self.note(at, "narrowed", "no longer accepts any value")
        elif old is False:
            self.note(at, "widened", "now accepts values (was false)")
        else:
            self.note(at, "changed", "the schema was replaced")

    def _keywords(
        self, old: Mapping[str, Any], new: Mapping[str, Any], at: str, ow: str, nw: str, depth: int
    ) -> None:
        self._types(old, new, at)
        self._values(old, new, at)
        self._bounds(old, new, at)
        for word in _ADDED_NARROWS:
            self._constraint(word, old.get(word), new.get(word), at)
        self._object(old, new, at, ow, nw, depth)
        self._array(old, new, at, ow, nw, depth)
        for word in ("anyOf", "oneOf"):
            self._alternatives(word, old.get(word), new.get(word), at)
        for word in ("allOf", "then", "else"):
            if old.get(word) != new.get(word):
                self.note(join_pointer(at, word), "changed", f"`{word}` changed")
        if "$ref" in old or "$ref" in new:  # beside other keywords (2020-12): compare what each points at
            self.schema(
                {"$ref": old["$ref"]} if "$ref" in old else True,
                {"$ref": new["$ref"]} if "$ref" in new else True,
                join_pointer(at, "$ref"),
                join_pointer(ow, "$ref"),
                join_pointer(nw, "$ref"),
                depth + 1,
            )
        for word in sorted((set(old) | set(new)) - _HANDLED - _COSMETIC):
            if old.get(word) != new.get(word):
                self.note(join_pointer(at, word), "changed", f"`{word}` changed")
        for word in sorted((set(old) | set(new)) & _COSMETIC):
            if old.get(word) != new.get(word):
                self.note(join_pointer(at, word), "cosmetic", f"`{word}` changed")

    def _types(self, old: Mapping[str, Any], new: Mapping[str, Any], at: str) -> None:
        before, after = _type_set(old.get("type")), _type_set(new.get("type"))
        if before == after:
            return
        where = join_pointer(at, "type")
        lost = before - after - ({"integer"} if "number" in after else set())
        gained = after - before - ({"integer"} if "number" in before else set())
        if lost:
            self.note(where, "narrowed", f"type {', '.join(sorted(lost))} no longer accepted")
        if gained:
            self.note(where, "widened", f"type {', '.join(sorted(gained))} now accepted")
        if not lost and not gained:  # only integer <-> number
            direction: Direction = "widened" if "number" in after else "narrowed"
            self.note(where, direction, f"type {_type_text(before)} became {_type_text(after)}")

    def _values(self, old: Mapping[str, Any], new: Mapping[str, Any], at: str) -> None:
        before, after = _value_set(old), _value_set(new)
        if before == after:
            return
        word = "enum" if "enum" in new or "enum" in old else "const"
        where = join_pointer(at, word)
        if before is None:
            self.note(where, "narrowed", f"values restricted to {_values_text(after)}")
        elif after is None:
            self.note(where, "widened", "values no longer restricted to a list")
        else:
            if before - after:
                self.note(where, "narrowed", f"value(s) {_values_text(before - after)} removed")
            if after - before:
                self.note(where, "widened", f"value(s) {_values_text(after - before)} added")

    def _bounds(self, old: Mapping[str, Any], new: Mapping[str, Any], at: str) -> None:
        for words, lower in ((_LOWER_BOUNDS, True), (_UPPER_BOUNDS, False)):
            for word in words:
                a, b = old.get(word), new.get(word)
                if a == b:
                    continue
                where = join_pointer(at, word)
                if not all(value is None or _is_number(value) for value in (a, b)):
                    self.note(where, "changed", f"`{word}` changed")
                elif a is None:
                    self.note(where, "narrowed", f"`{word}` {b} added")
                elif b is None:
                    self.note(where, "widened", f"`{word}` {a} removed")
                elif (b > a) if lower else (b < a):
                    self.note(where, "narrowed", f"`{word}` tightened from {a} to {b}")
                else:
                    self.note(where, "widened", f"`{word}` loosened from {a} to {b}")

    def _constraint(self, word: str, a: Any, b: Any, at: str) -> None:
        if a == b:
            return
        where = join_pointer(at, word)
        if word == "uniqueItems":
            if bool(b) != bool(a):
                self.note(
                    where,
                    "narrowed" if b else "widened",
                    "items must now be unique" if b else "items no longer need to be unique",
                )
        elif a is None:
            self.note(where, "narrowed", f"`{word}` added")
        elif b is None:
            self.note(where, "widened", f"`{word}` removed")
        else:
            self.note(where, "changed", f"`{word}` changed from {short(a)} to {short(b)}")

    def _object(
        self, old: Mapping[str, Any], new: Mapping[str, Any], at: str, ow: str, nw: str, depth: int
    ) -> None:
        before, after = _properties(old), _properties(new)
        required_before = _strings(old.get("required"))
        required_after = _strings(new.get("required"))
        extra_before, extra_after = (
            old.get("additionalProperties", True),
            new.get("additionalProperties", True),
        )
        removed, added = sorted(set(before) - set(after)), sorted(set(after) - set(before))
        renamed = renames(before, after, removed, added)
        for old_name, new_name in renamed:
            removed.remove(old_name)
            added.remove(new_name)
            self.note(
                join_pointer(at, "properties", old_name),
                "renamed",
                f"property `{old_name}` renamed to `{new_name}`",
            )
        for name in removed:
            self.note(join_pointer(at, "properties", name), "removed", f"property `{name}` removed")
        for name in added:
            where = join_pointer(at, "properties", name)
            if name in required_after:
                self.note(where, "narrowed", f"required property `{name}` added")
            else:
                self.note(where, "described", f"optional property `{name}` added")
        for name in sorted(set(before) & set(after)):
            self.schema(
                before[name],
                after[name],
                join_pointer(at, "properties", name),
                join_pointer(ow, "properties", name),
                join_pointer(nw, "properties", name),
                depth + 1,
            )
        for name in sorted(required_after - required_before - set(added)):
            self.note(join_pointer(at, "required"), "narrowed", f"property `{name}` is now required")
        for name in sorted(required_before - required_after - set(removed)):
            if name in after or not after:
                self.note(join_pointer(at, "required"), "widened", f"property `{name}` is now optional")
        if extra_before != extra_after:
            where = join_pointer(at, "additionalProperties")
            if _accepts_everything(extra_before) and extra_after is False:
                self.note(where, "narrowed", "additional properties are no longer allowed")
            elif extra_before is False and _accepts_everything(extra_after):
                self.note(where, "widened", "additional properties are now allowed")
            else:
                self.schema(
                    extra_before,
                    extra_after,
                    where,
                    join_pointer(ow, "additionalProperties"),
                    join_pointer(nw, "additionalProperties"),
                    depth + 1,
                )

    def _array(
        self, old: Mapping[str, Any], new: Mapping[str, Any], at: str, ow: str, nw: str, depth: int
    ) -> None:
        if "items" in old or "items" in new:
            self.schema(
                old.get("items", True),
                new.get("items", True),
                join_pointer(at, "items"),
                join_pointer(ow, "items"),
                join_pointer(nw, "items"),
                depth + 1,
            )
        a, b = old.get("prefixItems"), new.get("prefixItems")
        if a != b:
            if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
                for index, (x, y) in enumerate(zip(a, b, strict=True)):
                    self.schema(
                        x,
                        y,
                        join_pointer(at, "prefixItems", index),
                        join_pointer(ow, "prefixItems", index),
                        join_pointer(nw, "prefixItems", index),
                        depth + 1,
                    )
            else:
                self.note(join_pointer(at, "prefixItems"), "changed", "`prefixItems` changed")

    def _alternatives(self, word: str, a: Any, b: Any, at: str) -> None:
        if a == b:
            return
        where = join_pointer(at, word)
        if not isinstance(a, list) or not isinstance(b, list):
            self.note(
                where,
                "changed",
                f"`{word}` {'added' if a is None else 'removed' if b is None else 'changed'}",
            )
            return
        before, after = {_canonical(x) for x in a}, {_canonical(x) for x in b}
        if before == after:
            return
        if word == "anyOf" and after > before:
            self.note(where, "widened", f"{len(after - before)} alternative(s) added")
        elif word == "anyOf" and after < before:
            self.note(where, "narrowed", f"{len(before - after)} alternative(s) removed")
        else:  # oneOf: an added branch can make a value match twice; changed branches cannot be judged
            self.note(where, "changed", f"`{word}` alternatives changed")


def _properties(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, Mapping) else {}


def _has_ref(schema: Any) -> bool:
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if "$ref" in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _accepts_everything(schema: Any) -> bool:
    return schema is True or schema == {}


def _type_set(value: Any) -> frozenset[str]:
    if isinstance(value, str):
        return frozenset({value}) if value in _JSON_TYPES else frozenset()
    if isinstance(value, list):
        return frozenset(t for t in value if isinstance(t, str) and t in _JSON_TYPES)
    return frozenset(_JSON_TYPES)  # no `type`: every type


def _type_text(types: frozenset[str]) -> str:
    return " | ".join(sorted(types)) if types != _JSON_TYPES else "any"


def _value_set(schema: Mapping[str, Any]) -> frozenset[str] | None:
    if "const" in schema:
        return frozenset({_canonical(schema["const"])})
    values = schema.get("enum")
    return frozenset(_canonical(v) for v in values) if isinstance(values, list) else None


def _values_text(values: Iterable[str] | None) -> str:
    return ", ".join(sorted(values or ()))[:200]


class _Text(str):
    """Punctuation queued by `_canonical` (a marker type, so data strings are never mistaken for it)."""


def _canonical(value: Any) -> str:
    """Canonical JSON text (sorted keys, compact), built without recursion: any depth is safe."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is _Text:
            out.append(item)
        elif isinstance(item, Mapping):
            keys = sorted(item, key=str)
            stack.append(_Text("}"))
            for index in range(len(keys) - 1, -1, -1):
                stack.append(item[keys[index]])
                stack.append(_Text(json.dumps(str(keys[index]), ensure_ascii=False) + ":"))
                if index:
                    stack.append(_Text(","))
            out.append("{")
        elif isinstance(item, list | tuple):
            stack.append(_Text("]"))
            for index in range(len(item) - 1, -1, -1):
                stack.append(item[index])
                if index:
                    stack.append(_Text(","))
            out.append("[")
        else:
            out.append(json.dumps(item, ensure_ascii=False, default=str))
    return "".join(out)


def short(value: Any) -> str:
    text = _canonical(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _strings(value: Any) -> set[str]:
    return {item for item in value if isinstance(item, str)} if isinstance(value, list) else set()


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def renames(
    before: Mapping[str, Any], after: Mapping[str, Any], removed: list[str], added: list[str]
) -> list[tuple[str, str]]:
    """Removed and added properties with the same schema, paired one to one: renames."""
    pairs: list[tuple[str, str]] = []
    free = list(added)
    for name in removed:
        match = next((other for other in free if _canonical(after[other]) == _canonical(before[name])), None)
        if match is not None:
            free.remove(match)
            pairs.append((name, match))
    return pairs
