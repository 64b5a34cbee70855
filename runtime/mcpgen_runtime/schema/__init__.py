"""JSON Schema validators compiled once per schema (SCHEMA-01..11).

Dialects: a schema without `$schema` is 2020-12 (SCHEMA-01/02); `$schema` may also name
draft-07. Anything else is refused with `SchemaDialectError` (SCHEMA-03/06).

`$ref`s are resolved only inside the schema itself (`#/$defs/…`, `$anchor`, embedded
`$id`s) and against the bundled meta-schemas; nothing is ever fetched (SCHEMA-08). Every
`$ref` is resolved once at compile time, so a schema with an unresolvable (e.g. remote)
reference fails loudly instead of validating permissively (SCHEMA-10).

Format assertions are off: 2020-12 treats `format` as an annotation, and checking costs
time on every call.

Patterns (`pattern`, `patternProperties`, and the `additionalProperties`/`unevaluatedProperties`
that depend on them) are ECMA-262 regular expressions (MCPGEN-REGEX): `ecma_regex` translates each
once, so `\\d` is ASCII, `$` is the very end, `(?<name>…)` and `\\p{L}` work; a schema whose
pattern is invalid in ECMA-262 is refused, and a valid pattern without a faithful translation is
not enforced (the generator warns). Matching is bounded (pattern_match.py, MCPGEN-REGEX-BUDGET): the
backtracking patterns of one value share one time budget, and a match that runs out of it refuses
the value with an issue at the pointer of the string (or key) it was matching.

Speed: jsonschema builds a validator object per subschema visit, which costs ~100 µs for
a three-property object. Schemas that only use the common keywords (type, properties,
required, additionalProperties, items, enum/const, bounds, pattern, allOf/anyOf/oneOf/not,
if/then/else) are also compiled into plain predicates. A predicate accepting the instance
is the answer; when it rejects (or the schema uses other keywords), jsonschema decides and
describes the error, so the fast path can only ever make valid instances cheaper.

The package: dialects.py (`$schema`, errors, `$ref` checks) < ecma_keywords.py (the pattern keywords)
< fast_path.py (plain predicates) < compile.py (`compile_schema`).
"""

from __future__ import annotations

from .compile import compile_schema
from .dialects import (
    DRAFT7,
    DRAFT202012,
    SchemaCompileError,
    SchemaDialectError,
    SchemaIssue,
    Validate,
    dialect_of,
    json_pointer,
)
from .fast_path import fast_predicate

__all__ = [
    "DRAFT7",
    "DRAFT202012",
    "SchemaCompileError",
    "SchemaDialectError",
    "SchemaIssue",
    "Validate",
    "compile_schema",
    "dialect_of",
    "fast_predicate",
    "json_pointer",
]
