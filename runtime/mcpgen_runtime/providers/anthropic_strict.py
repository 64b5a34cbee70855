"""Anthropic's tool use with `"strict": true`: a tool's `input_schema` in the JSON Schema subset of
Claude's structured outputs, as published in
https://platform.claude.com/docs/en/agents-and-tools/tool-use/strict-tool-use,
https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations and
https://platform.claude.com/docs/en/agents-and-tools/tool-use/define-tools (names, `input_schema`).

- `input_schema` is an object schema (no `anyOf`/`oneOf`/`allOf` at its root); every object says
  `additionalProperties: false`; optional properties are allowed;
- every schema has a type (or `$ref`, `anyOf`, `enum`, `const`), one per schema: a `type` list becomes
  `anyOf` (what the SDK's own `transform_schema` requires);
- all basic types, `enum` of primitive values only, `const`, `anyOf`, `allOf`, local `$ref` with
  `$defs`/`definitions` (no recursive schema, no external reference), `default`, `required`;
  `format` date-time, time, date, duration, email, hostname, uri, ipv4, ipv6, uuid; `minItems` of 0
  or 1; `pattern` without backreferences, lookaround or word boundaries;
- not supported: numeric constraints (`minimum`, `maximum`, `multipleOf`, exclusive bounds), string
  lengths, array constraints beyond `minItems` 0/1 (`maxItems`, `uniqueItems`, `contains`, tuples),
  `not`, conditionals, `patternProperties`, `propertyNames`, `min/maxProperties`;
- complexity: at most 24 optional properties and 16 properties with union types across the strict
  tools of one request (counted here per tool: a tool over them can never be sent strict);
- tool names match ^[a-zA-Z0-9_-]{1,64}$.
"""

from __future__ import annotations

import re
from typing import Any

from .lowering import Rules
from .walk import Walk, pointer, types_of

__all__ = ["NAME", "RULES", "check_limits"]

NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")

# backreferences, lookahead/lookbehind and word boundaries: what the grammar cannot compile
_HARD_PATTERN = re.compile(r"\\[1-9bBk]|\(\?[=!<]")


def _pattern_ok(pattern: str) -> bool:
    return _HARD_PATTERN.search(pattern) is None


RULES = Rules(
    name="anthropic",
    title="Anthropic strict tool use",
    keeps=frozenset({"minItems", "pattern", "const"}),
    annotations=frozenset({"title", "description", "default"}),
    formats=frozenset(
        {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
    ),
    closed=True,
    all_required=False,
    refs="keep",
    recursion=False,
    all_of=True,
    enum_values="primitive",
    needs_type=True,
    type_list="anyOf",
    pattern_ok=_pattern_ok,
)

MAX_OPTIONAL = 24
MAX_UNIONS = 16


def check_limits(schema: dict[str, Any], walk: Walk) -> None:
    """`minItems` above 1, and the optional and union-typed properties of the whole schema."""
    counts = {"optional": 0, "unions": 0}

    def visit(node: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                visit(item, (*path, index))
            return
        if not isinstance(node, dict):
            return
        minimum = node.get("minItems")
        if minimum is not None and minimum not in (0, 1):
            walk.report(pointer(*path, "minItems"), "minItems", f"`minItems: {minimum}` (only 0 or 1)")
        properties = node.get("properties")
        if isinstance(properties, dict):
            listed = node.get("required")
            names = listed if isinstance(listed, list) else ()
            required = {name for name in names if isinstance(name, str)}  # a peer's list may hold anything
            counts["optional"] += sum(name not in required for name in properties)
            counts["unions"] += sum(
                1
                for sub in properties.values()
                if isinstance(sub, dict) and (len(types_of(sub)) > 1 or "anyOf" in sub)
            )
        for key, value in node.items():
            if key not in ("enum", "const", "default"):
                visit(value, (*path, key))

    visit(schema, ())
    if counts["optional"] > MAX_OPTIONAL:
        walk.report(
            "", "required", f"{counts['optional']} optional properties (at most {MAX_OPTIONAL} per request)"
        )
    if counts["unions"] > MAX_UNIONS:
        walk.report(
            "", "anyOf", f"{counts['unions']} properties with union types (at most {MAX_UNIONS} per request)"
        )
