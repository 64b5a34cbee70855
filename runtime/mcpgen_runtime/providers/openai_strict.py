"""OpenAI's strict function calling (`"strict": true` on a function tool): the JSON Schema subset of
Structured Outputs, as published in
https://platform.openai.com/docs/guides/structured-outputs#supported-schemas and
https://platform.openai.com/docs/guides/function-calling (strict mode, function names).

- the root is an object, not `anyOf`; every object says `additionalProperties: false` and lists
  every property in `required` (an optional property is emulated as a required one that admits
  `null`; one that is optional and already nullable cannot be lowered: `null` would mean two things);
- types string, number, integer, boolean, object, array, null (a `type` list is fine), `enum`,
  `anyOf`, local `$ref` with `$defs` (recursion allowed); no `allOf`, `not`, `oneOf`, `if`,
  `dependent*`, `patternProperties`, `propertyNames`, `min/maxProperties`, `unevaluated*`,
  `contains`, `uniqueItems`, `prefixItems`, `minLength`, `maxLength`;
- kept constraints: `pattern`, `format` (date-time, time, date, duration, email, hostname, ipv4,
  ipv6, uuid), `multipleOf`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
  `minItems`, `maxItems`;
- limits: 5,000 object properties in all, 10 levels of object nesting, 1,000 enum values in all,
  120,000 characters of property names, definition names, enum and const values, and 15,000
  characters for the values of one string enum of more than 250 values;
- function names match ^[a-zA-Z0-9_-]{1,64}$.
"""

from __future__ import annotations

import re
from typing import Any

from .lowering import Rules
from .walk import Walk, pointer, types_of

__all__ = ["NAME", "RULES", "check_limits"]

NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")

RULES = Rules(
    name="openai-strict",
    title="OpenAI strict mode",
    keeps=frozenset(
        {
            "multipleOf",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minItems",
            "maxItems",
            "pattern",
        }
    ),
    annotations=frozenset({"title", "description"}),
    formats=frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}),
    closed=True,
    all_required=True,
    refs="keep",
    recursion=True,
    needs_type=True,
    ref_siblings=False,
)

MAX_PROPERTIES = 5000
MAX_NESTING = 10
MAX_ENUM_VALUES = 1000
MAX_STRING_CHARS = 120_000
LARGE_ENUM = 250
MAX_LARGE_ENUM_CHARS = 15_000


def check_limits(schema: dict[str, Any], walk: Walk) -> None:
    """The size limits, counted on the lowered schema (no lowering makes a schema smaller)."""
    totals = {"properties": 0, "enum": 0, "chars": 0, "depth": 0}

    def visit(node: Any, path: tuple[str | int, ...], depth: int) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                visit(item, (*path, index), depth)
            return
        if not isinstance(node, dict):
            return
        if "object" in types_of(node):
            depth += 1
            totals["depth"] = max(totals["depth"], depth)
        properties = node.get("properties")
        if isinstance(properties, dict):
            totals["properties"] += len(properties)
            totals["chars"] += sum(len(name) for name in properties)
        for defs in ("$defs", "definitions"):
            if isinstance(node.get(defs), dict):
                totals["chars"] += sum(len(name) for name in node[defs])
        enum = node.get("enum")
        if isinstance(enum, list):
            totals["enum"] += len(enum)
            strings = [value for value in enum if isinstance(value, str)]
            totals["chars"] += sum(map(len, strings))
            if len(enum) > LARGE_ENUM and sum(map(len, strings)) > MAX_LARGE_ENUM_CHARS:
                walk.report(
                    pointer(*path, "enum"),
                    "enum",
                    f"an enum of more than {LARGE_ENUM} values over {MAX_LARGE_ENUM_CHARS} characters",
                )
        if isinstance(node.get("const"), str):
            totals["chars"] += len(node["const"])
        for key, value in node.items():
            if key not in ("enum", "const"):
                visit(value, (*path, key), depth)

    visit(schema, (), 0)
    if totals["depth"] > MAX_NESTING:
        walk.report("", "properties", f"{totals['depth']} levels of object nesting (at most {MAX_NESTING})")
    if totals["properties"] > MAX_PROPERTIES:
        walk.report("", "properties", f"{totals['properties']} object properties (at most {MAX_PROPERTIES})")
    if totals["enum"] > MAX_ENUM_VALUES:
        walk.report("", "enum", f"{totals['enum']} enum values (at most {MAX_ENUM_VALUES})")
    if totals["chars"] > MAX_STRING_CHARS:
        walk.report(
            "", "enum", f"{totals['chars']} characters of names and values (at most {MAX_STRING_CHARS})"
        )
