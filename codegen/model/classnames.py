"""Every class and alias name models.py defines, planned before any text exists.

`<Stem>Input` / `<Stem>Output` per tool are reserved first (`plan_classes`), then each root
`$defs` / `definitions` entry gets the stem `<Stem><Def>Def` (`def_class_stems`), and a nested class
is named by its path (`path_name`: `<Owner><Property>`, `...Item`, `...Value`, `...Option<N>`). A
clash gets a numeric suffix in the order names are taken (`ClassNames.take`), never a name derived
from input order alone.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..refs import split_pointer
from . import naming

__all__ = ["MODULE_NAMES", "ClassNames", "ClassPlan", "def_class_stems", "path_name", "plan_classes"]

# Module-level names of models.py that a class or alias may not take.
MODULE_NAMES: Final = frozenset(
    {"Annotated", "Any", "BaseModel", "ConfigDict", "Field", "Literal", "RootModel", "TYPE_CHECKING"}
)

# `$defs` keywords whose root entries get a class stem of their own.
_DEF_KEYWORDS: Final = ("$defs", "definitions")


@dataclass(frozen=True, slots=True)
class ClassPlan:
    wire_name: str
    stem: str
    input_class: str
    output_class: str | None


class ClassNames:
    """Allocates the class and alias names of one models module (numeric suffix on a clash)."""

    def __init__(self, taken: set[str] | frozenset[str] = MODULE_NAMES) -> None:
        self.used = set(taken)

    def take(self, wanted: str) -> str:
        wanted = naming.cap_length(wanted, style="pascal")
        name, number = wanted, 1
        while name in self.used:
            number += 1
            name = f"{wanted}{number}"
        self.used.add(name)
        return name


def plan_classes(tools: list[dict[str, Any]], names: ClassNames | None = None) -> list[ClassPlan]:
    """`<Stem>Input` / `<Stem>Output` per tool, reserved before any nested class is named."""
    names = names or ClassNames()
    stems = naming.class_bases(tool["name"] for tool in tools)
    plans = []
    for tool in tools:
        stem = stems[tool["name"]]
        input_class = names.take(f"{stem}Input")
        output_class = names.take(f"{stem}Output") if isinstance(tool.get("outputSchema"), Mapping) else None
        plans.append(
            ClassPlan(wire_name=tool["name"], stem=stem, input_class=input_class, output_class=output_class)
        )
    return plans


def def_class_stems(schema: Mapping[str, Any], stem: str) -> dict[tuple[str, str], str]:
    """("$defs", key) -> `<Stem><Key>Def` for every root `$defs` / `definitions` entry of `schema`."""
    stems: dict[tuple[str, str], str] = {}
    for keyword in _DEF_KEYWORDS:
        members = schema.get(keyword)
        if isinstance(members, Mapping):
            for name in members:
                stems[(keyword, name)] = f"{stem}{naming.identifier(name, style='pascal', prefix='Def')}Def"
    return stems


@functools.lru_cache(maxsize=4096)  # the same property names recur across a spec's schemas
def _member_part(name: str) -> str:
    """The part of a path name for the member `name` of `properties`, `$defs`, ..."""
    return naming.identifier(name, style="pascal", prefix="Field")


def path_name(pointer: str, root_class: str, def_classes: Mapping[tuple[str, str], str]) -> str:
    """A readable class name for the subschema at `pointer`, from its path (not yet unique): the
    root's class (or the `$defs` entry's stem) followed by one part per keyword on the way."""
    tokens = split_pointer(pointer)
    parts: list[str] = []
    if len(tokens) >= 2 and (tokens[0], tokens[1]) in def_classes:
        parts.append(def_classes[(tokens[0], tokens[1])])
        tokens = tokens[2:]
    else:
        parts.append(root_class)
    i = 0
    while i < len(tokens):
        keyword = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if keyword in ("properties", "$defs", "definitions", "dependentSchemas") and nxt is not None:
            parts.append(_member_part(nxt))
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
