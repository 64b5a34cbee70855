"""What every provider profile shares: the findings (`Problem`, `Lowered`), JSON pointers, local
`$ref` resolution with recursion detection, and the lowerings more than one profile applies
(closing an object, an optional property made required and nullable, a `oneOf` of disjoint branches
read as `anyOf`, tool names mapped into a provider's alphabet).

A lowering is *faithful* when every value the lowered schema admits, mapped back (a `null` for a
property that was optional becomes "not sent"), is admitted by the original: closing an object,
requiring a property, dropping an annotation (`default`, `examples`, a `format` the provider does not
know, which JSON Schema 2020-12 treats as an annotation) narrow or keep what a model may produce.
Dropping a validation keyword (`minLength`, `maximum`, ...) widens it, so it is never faithful.
Pure functions over JSON values: no I/O, nothing outside the standard library.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ANNOTATIONS",
    "MAX_NODES",
    "MAX_POINTER",
    "VALIDATION",
    "Lowered",
    "Problem",
    "Walk",
    "is_nullable",
    "map_name",
    "pointer",
    "types_of",
]

# Keywords that say nothing about which values are valid (JSON Schema 2020-12's meta-data,
# content and core-identifier keywords): dropping one never changes what a schema admits.
ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "$schema",
        "$id",
        "$anchor",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
    }
)


# What one tool's walk takes from a server, at most: schemas visited (inlined `$ref`s counted each
# time, so shared definitions inlined again and again cannot blow up) and reference tokens of
# nesting (properties, items, branches and inlined references). A schema past either is refused.
MAX_NODES = 20_000
MAX_POINTER = 256

# The JSON Schema keywords (2020-12 and draft-07) that constrain values beside those the walk
# interprets itself; any other keyword is unknown to a validator, which ignores it (an annotation).
VALIDATION = frozenset(
    {"minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    | {"minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "prefixItems"}
    | {"additionalItems", "unevaluatedItems", "unevaluatedProperties", "minProperties", "maxProperties"}
    | {"patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "dependencies"}
    | {"not", "if", "then", "else", "$dynamicRef", "$recursiveRef"}
)


def pointer(*parts: str | int) -> str:
    """A JSON pointer (RFC 6901) from its reference tokens."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


@dataclass(frozen=True)
class Problem:
    """One keyword or shape a provider refuses, where it is (a JSON pointer into the tool
    definition), and how it is lowered faithfully (`lowering`), or None when it cannot be."""

    pointer: str
    keyword: str
    message: str
    lowering: str | None = None

    @property
    def faithful(self) -> bool:
        return self.lowering is not None


@dataclass(frozen=True)
class Lowered:
    """A tool seen through one profile: its problems, and when every one has a faithful lowering,
    the lowered input schema and the name to give the provider.

    `nullable_optional` lists the pointers (into the lowered schema) of properties that were
    optional and are now required and nullable: a caller maps the model's `null` there back to
    "not sent" before calling the tool.
    """

    tool: str
    profile: str
    problems: tuple[Problem, ...]
    name: str
    schema: dict[str, Any] | None
    nullable_optional: tuple[str, ...] = ()

    @property
    def status(self) -> str:
        """ "as-is" (nothing to change), "lowered" (every problem lowered faithfully) or "never"."""
        if not self.problems:
            return "as-is"
        return "lowered" if self.schema is not None else "never"


def types_of(node: dict[str, Any]) -> list[str]:
    """The `type` keyword as a list (empty when absent or malformed)."""
    declared = node.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [item for item in declared if isinstance(item, str)]
    return []


def is_nullable(node: Any) -> bool:
    """Whether a schema admits null by its own keywords (type, enum, const, or an anyOf/oneOf branch)."""
    if node is True or not isinstance(node, dict):
        return node is True
    if "null" in types_of(node):
        return True
    if "enum" in node and isinstance(node["enum"], list) and None in node["enum"]:
        return True
    if "const" in node and node["const"] is None:
        return True
    branches = [
        branch
        for keyword in ("anyOf", "oneOf")
        if isinstance(node.get(keyword), list)
        for branch in node[keyword]
    ]
    return any(is_nullable(branch) for branch in branches)


def made_nullable(node: dict[str, Any]) -> dict[str, Any]:
    """`node` admitting null as well (the caller knows it did not): one more type, enum value or branch."""
    result = dict(node)
    declared = types_of(node)
    if "enum" in node and isinstance(node["enum"], list):
        result["enum"] = [*node["enum"], None]
    if declared:
        result["type"] = [*declared, "null"]
        return result
    if "anyOf" in node and isinstance(node["anyOf"], list):
        result["anyOf"] = [*node["anyOf"], {"type": "null"}]
        return result
    if "enum" in node:
        return result
    return {"anyOf": [result, {"type": "null"}]}


def disjoint_branches(branches: list[Any]) -> bool:
    """Whether no value can match two of `branches` (so `oneOf` means what `anyOf` means): each
    branch has one distinct `type`, or each is an object whose common property has a distinct `const`."""
    if not branches or not all(isinstance(branch, dict) for branch in branches):
        return False
    single = [types_of(branch) for branch in branches]
    if all(len(kinds) == 1 for kinds in single):
        flat = [kinds[0] for kinds in single]
        numeric = {"integer", "number"}
        if len(set(flat)) == len(flat) and not numeric <= set(flat):
            return True
    properties = [branch.get("properties") for branch in branches]
    if not all(isinstance(props, dict) for props in properties):
        return False
    common = set.intersection(*(set(props) for props in properties if isinstance(props, dict)))
    for name in sorted(common):
        values = []
        for branch, props in zip(branches, properties, strict=True):
            tag = props.get(name) if isinstance(props, dict) else None
            required = branch.get("required")
            if not isinstance(tag, dict) or "const" not in tag:
                break
            if not (isinstance(required, list) and name in required):
                break
            values.append(repr(tag["const"]))
        else:
            if len(set(values)) == len(values):
                return True
    return False


_HASH_CHARS = 8


def map_name(name: str, allowed: re.Pattern[str], *, chars: str, first: str = "", limit: int = 64) -> str:
    """A name the provider accepts for `name`: each character outside `chars` (a character class)
    as `_`, `_` in front when
    the first character must match `first` and does not, cut to `limit` with a digest of the
    original so that two long names stay distinct. `name` itself when it is accepted."""
    if allowed.fullmatch(name):
        return name
    mapped = "".join(ch if re.fullmatch(chars, ch) else "_" for ch in name) or "_"
    if first and not re.fullmatch(first, mapped[0]):
        mapped = "_" + mapped
    if len(mapped) > limit:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:_HASH_CHARS]
        mapped = mapped[: limit - _HASH_CHARS - 1] + "_" + digest
    return mapped


@dataclass
class Walk:
    """One schema walked by one profile: the root (for `$ref`s), the problems found and the
    pointers of properties made nullable. `base` is the schema's pointer in the tool definition."""

    root: dict[str, Any]
    base: str = "/inputSchema"
    problems: list[Problem] = field(default_factory=list)
    nullable_optional: list[str] = field(default_factory=list)

    def report(self, where: str, keyword: str, message: str, lowering: str | None = None) -> None:
        self.problems.append(Problem(self.base + where, keyword, message, lowering))

    def resolve(self, ref: str) -> Any:
        """The local target of `ref` ("#", "#/$defs/x", ...), or None when it is not local or absent."""
        if not ref.startswith("#"):
            return None
        node: Any = self.root
        tokens = ref[1:].split("/")[1:] if ref != "#" else []
        for token in tokens:
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node

    def recursive_refs(self) -> set[str]:
        """The local `$ref`s that reach themselves (a recursive schema). Each target is read once,
        nested at most `MAX_POINTER` levels, so a schema of shared definitions costs its size, not
        the number of its paths."""
        edges: dict[str, list[str]] = {}
        pending = refs_in(self.root)
        while pending and len(edges) < MAX_NODES:
            ref = pending.pop()
            if ref in edges:
                continue
            target = self.resolve(ref)
            edges[ref] = refs_in(target) if target is not None else []
            pending.extend(edges[ref])
        found: set[str] = set()
        for start in edges:
            seen: set[str] = set()
            frontier = list(edges[start])
            while frontier:
                ref = frontier.pop()
                if ref == start:
                    found.add(start)
                    break
                if ref not in seen:
                    seen.add(ref)
                    frontier.extend(edges.get(ref, ()))
        return found


def refs_in(node: Any) -> list[str]:
    """Every `$ref` under `node` but not in its `$defs`/`definitions` (those count where they are used)."""
    out: list[str] = []
    stack: list[tuple[Any, int]] = [(node, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_POINTER:
            continue
        if isinstance(item, dict):
            ref = item.get("$ref")
            if isinstance(ref, str):
                out.append(ref)
            stack.extend(
                (value, depth + 1) for key, value in item.items() if key not in ("$defs", "definitions")
            )
        elif isinstance(item, list):
            stack.extend((value, depth + 1) for value in item)
    return out
