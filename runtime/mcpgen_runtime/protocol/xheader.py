"""`x-mcp-header` rules (XHDR-02..08) and mirroring of annotated arguments into `Mcp-Param-*` headers.

One implementation serves three callers: the generator rejects bad definitions before
emitting code, the client drops bad tools from live listings (XHDR-10) and builds headers
(XHDR-18), the server checks received headers against the body (XHDR-22..25).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .headers import PARAM_PREFIX, TOKEN, param_value_text

KEYWORD = "x-mcp-header"
_ALLOWED_TYPES = frozenset({"string", "integer", "boolean"})
MAX_SAFE_INTEGER = 2**53 - 1
# Keywords whose subschemas may hold annotations that are *not* statically reachable (XHDR-08).
_SUBSCHEMA_KEYWORDS = (
    "items",
    "prefixItems",
    "additionalItems",
    "contains",
    "unevaluatedItems",
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "dependentSchemas",
    "$defs",
    "definitions",
    "dependencies",
)


@dataclass(frozen=True, slots=True)
class HeaderParam:
    """One annotated parameter: the header it goes in and where its value sits in `arguments`."""

    header: str  # e.g. "Mcp-Param-Region"
    path: tuple[str, ...]  # property names from the root of arguments
    type: str  # "string" | "integer" | "boolean"


@dataclass(frozen=True, slots=True)
class Violation:
    pointer: str  # RFC 6901 pointer into the inputSchema
    rule: str  # requirement ID, e.g. "XHDR-06"
    message: str


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _declared_type(schema: Mapping[str, Any]) -> str | None:
    """The single primitive type a property declares, allowing a `null` alternative."""
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        non_null = [t for t in declared if t != "null"]
        if len(non_null) == 1 and isinstance(non_null[0], str):
            return non_null[0]
    return None


def _walk_unreachable(schema: Any, pointer: str, depth: int = 0) -> Iterator[str]:
    """Pointers of every x-mcp-header below `schema`, which is itself off the properties chain."""
    stack: list[tuple[Any, str]] = [(schema, pointer)]
    while stack:
        node, ptr = stack.pop()
        if isinstance(node, dict):
            if KEYWORD in node:
                yield ptr + "/" + KEYWORD
            for key, child in node.items():
                if isinstance(child, (dict, list)):
                    stack.append((child, f"{ptr}/{_escape(str(key))}"))
        elif isinstance(node, list):
            for index, child in enumerate(node):
                stack.append((child, f"{ptr}/{index}"))


def analyze(input_schema: Mapping[str, Any]) -> tuple[list[HeaderParam], list[Violation]]:
    """Find every annotation in an inputSchema; return the usable ones and the broken rules."""
    params: list[HeaderParam] = []
    violations: list[Violation] = []
    seen: dict[str, str] = {}  # lower-case header name -> pointer of first use
    if KEYWORD in input_schema:  # the root is the arguments object, not a parameter (XHDR-08)
        violations.append(
            Violation(
                "/" + KEYWORD,
                "XHDR-08",
                "x-mcp-header on the root inputSchema names no "
                "parameter; it is only allowed on properties reachable through `properties`",
            )
        )
    # Walk the statically reachable chain: root -> properties -> properties ...
    stack: list[tuple[Mapping[str, Any], str, tuple[str, ...]]] = [(input_schema, "", ())]
    while stack:
        node, pointer, path = stack.pop()
        for keyword in _SUBSCHEMA_KEYWORDS:
            if keyword in node:
                for bad in _walk_unreachable(node[keyword], f"{pointer}/{keyword}"):
                    violations.append(
                        Violation(
                            bad,
                            "XHDR-08",
                            "x-mcp-header is only allowed on properties reachable "
                            "from the root through `properties` alone",
                        )
                    )
        properties = node.get("properties")
        if not isinstance(properties, Mapping):
            continue
        for name, prop in properties.items():
            prop_pointer = f"{pointer}/properties/{_escape(name)}"
            if not isinstance(prop, Mapping):
                continue
            if KEYWORD in prop:
                violation = _check_annotation(prop, prop_pointer, seen)
                if violation is not None:
                    violations.append(violation)
                else:
                    header = prop[KEYWORD]
                    seen[header.lower()] = prop_pointer
                    params.append(
                        HeaderParam(PARAM_PREFIX + header, (*path, name), _declared_type(prop) or "")
                    )
            stack.append((prop, prop_pointer, (*path, name)))
    params.sort(key=lambda p: p.path)
    violations.sort(key=lambda v: v.pointer)
    return params, violations


def _check_annotation(prop: Mapping[str, Any], pointer: str, seen: dict[str, str]) -> Violation | None:
    where = pointer + "/" + KEYWORD
    header = prop[KEYWORD]
    if not isinstance(header, str) or header == "":
        return Violation(where, "XHDR-02", "x-mcp-header must be a non-empty string")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in header):
        return Violation(where, "XHDR-04", f"x-mcp-header {header!r} contains control characters")
    if not TOKEN.match(header):
        return Violation(where, "XHDR-03", f"x-mcp-header {header!r} is not an HTTP token (RFC 9110 tchar)")
    declared = _declared_type(prop)
    if declared not in _ALLOWED_TYPES:
        return Violation(
            pointer + "/type",
            "XHDR-06",
            f"x-mcp-header {header!r} annotates a property of type {prop.get('type')!r}; "
            "only string, integer or boolean are allowed",
        )
    if header.lower() in seen:
        return Violation(
            where,
            "XHDR-05",
            f"x-mcp-header {header!r} duplicates the one at {seen[header.lower()]} (case-insensitive)",
        )
    return None


def extract(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The argument value at `path`, or None when any step is absent (XHDR-09)."""
    value: Any = arguments
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
        if value is None:
            return None
    return value


def request_headers(
    params: tuple[HeaderParam, ...] | list[HeaderParam], arguments: Mapping[str, Any]
) -> Iterator[tuple[str, str]]:
    """(header, raw text) for every annotated argument present; the caller encodes the text."""
    for param in params:
        text = param_value_text(extract(arguments, param.path))
        if text is not None:
            yield param.header, text
