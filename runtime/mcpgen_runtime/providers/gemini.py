"""Gemini's function declarations: `FunctionDeclaration.parameters`, a select subset of the OpenAPI
3.0 Schema object, as published in https://ai.google.dev/api/caching#Schema,
https://ai.google.dev/gemini-api/docs/function-calling and
https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/FunctionDeclaration (names).

- fields: `type` (one of STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, NULL: one type, so a
  `type` list becomes `nullable` or `anyOf`), `format`, `title`, `description`, `nullable`, `enum`
  (strings), `properties`, `required`, `items`, `anyOf`, `additionalProperties`, `minItems`,
  `maxItems`, `minLength`, `maxLength`, `pattern`, `minimum`, `maximum`, `minProperties`,
  `maxProperties`, `default`, `propertyOrdering`;
- no `$ref` (each is inlined; a recursive schema cannot be), no `oneOf` (disjoint branches become
  `anyOf`), `allOf` (one branch is merged), `not`, `const` (a string becomes a one-value enum),
  exclusive bounds, `multipleOf`, `uniqueItems`, tuples, `patternProperties`;
- `format`: float, double, int32, int64, enum, date-time (others are dropped: an annotation);
- function names start with a letter or `_` and hold a-z, A-Z, 0-9, `_`, `.`, `:`, `-`, at most 64;
  parameter names match ^[A-Za-z_][A-Za-z0-9_]{0,63}$.
"""

from __future__ import annotations

import re
from typing import Any

from .lowering import Rules
from .walk import Walk

__all__ = ["NAME", "NAME_FIRST", "RULES", "check_limits"]

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
NAME_FIRST = "[A-Za-z_]"

RULES = Rules(
    name="gemini",
    title="Gemini function declarations",
    keeps=frozenset(
        {"minItems", "maxItems", "minLength", "maxLength", "pattern", "minimum", "maximum"}
        | {"minProperties", "maxProperties", "nullable", "propertyOrdering"}
    ),
    annotations=frozenset({"title", "description", "default"}),
    formats=frozenset({"float", "double", "int32", "int64", "enum", "date-time"}),
    closed=False,
    all_required=False,
    refs="inline",
    recursion=False,
    type_list="nullable",
    enum_values="string",
    property_name=re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}"),
)


def check_limits(schema: dict[str, Any], walk: Walk) -> None:
    """Gemini publishes no size limits for declarations."""
