"""JSON Schema dialects and what a compiled schema answers: `dialect_of` (`$schema`: 2020-12 by default,
draft-07; SCHEMA-01..06), the errors, `SchemaIssue`, and the local-only `$ref` check (SCHEMA-08/10/11)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, cast

import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema_specifications import REGISTRY as _META_SCHEMAS  # type: ignore[import-untyped]
from referencing._core import Resolver  # not re-exported; used for a type only

DRAFT202012 = "https://json-schema.org/draft/2020-12/schema"
DRAFT7 = "http://json-schema.org/draft-07/schema"

# `$schema` spellings seen in the wild: with/without the empty fragment, http or https.
_DIALECTS: dict[str, str] = {
    "https://json-schema.org/draft/2020-12/schema": DRAFT202012,
    "http://json-schema.org/draft/2020-12/schema": DRAFT202012,
    "http://json-schema.org/draft-07/schema": DRAFT7,
    "https://json-schema.org/draft-07/schema": DRAFT7,
}

LABEL = {DRAFT202012: "2020-12", DRAFT7: "draft-07"}
_SPEC_BY_DIALECT = {DRAFT202012: referencing.jsonschema.DRAFT202012, DRAFT7: referencing.jsonschema.DRAFT7}

# SCHEMA-11: bound what one schema may cost to compile (hostile definitions).
MAX_SUBSCHEMAS = 10_000
MESSAGE_LIMIT = 300
MAX_INSTANCE_DEPTH = 100
"""Values nested deeper are refused before jsonschema sees them: it recurses once per level (and
so does the `repr` in its messages), so the limit is ours, not Python's recursion limit."""


class SchemaCompileError(ValueError):
    """The schema cannot be used: invalid for its dialect, or a `$ref` that does not resolve locally."""


class SchemaDialectError(SchemaCompileError):
    """`$schema` names a dialect this runtime does not support (SCHEMA-06)."""


class SchemaIssue(NamedTuple):
    """Why an instance failed: where (RFC 6901 pointer into the instance) and what."""

    pointer: str
    message: str

    def describe(self) -> str:
        return f"at {self.pointer or '/'}: {self.message}"


Validate = Callable[[Any], "SchemaIssue | None"]


def _refuse_retrieval(uri: str) -> referencing.Resource[Any]:
    # SCHEMA-08: never dereference anything outside the document.
    raise referencing.exceptions.NoSuchResource(uri)


_NO_FETCH: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
# Meta-schemas are bundled with jsonschema, so `$ref`s to them resolve without a network.
LOCAL_ONLY: referencing.Registry[Any] = cast("referencing.Registry[Any]", _META_SCHEMAS).combine(_NO_FETCH)


def dialect_of(schema: Mapping[str, Any]) -> str:
    """The dialect URI a schema is written in (2020-12 when `$schema` is absent)."""
    declared = schema.get("$schema")
    if declared is None:
        return DRAFT202012
    if not isinstance(declared, str):
        raise SchemaDialectError(f"$schema must be a string, not {type(declared).__name__}")
    dialect = _DIALECTS.get(declared.rstrip("#"))
    if dialect is None:
        raise SchemaDialectError(
            f"unsupported JSON Schema dialect {declared!r}; "
            f"supported: 2020-12 ({DRAFT202012}) and draft-07 ({DRAFT7})"
        )
    return dialect


def json_pointer(path: Any) -> str:
    """RFC 6901 pointer for a sequence of keys/indexes."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def check_refs(schema: Mapping[str, Any], dialect: str) -> None:
    """Resolve every `$ref`/`$dynamicRef` once, so broken or remote ones fail at startup (SCHEMA-10)."""
    root = _SPEC_BY_DIALECT[dialect].create_resource(schema)
    stack: list[tuple[referencing.Resource[Any], Resolver[Any]]] = [
        (root, LOCAL_ONLY.resolver_with_root(root))
    ]
    seen = 0
    while stack:
        resource, resolver = stack.pop()
        seen += 1
        if seen > MAX_SUBSCHEMAS:
            raise SchemaCompileError(f"schema has more than {MAX_SUBSCHEMAS} subschemas")
        contents = resource.contents
        if isinstance(contents, Mapping):
            for keyword in ("$ref", "$dynamicRef"):
                ref = contents.get(keyword)
                if isinstance(ref, str):
                    try:
                        resolver.lookup(ref)
                    except referencing.exceptions.Unresolvable as exc:
                        why = (
                            "does not resolve within the schema"
                            if ref.startswith("#")
                            else "cannot be resolved inside the schema; external references are never fetched"
                        )
                        raise SchemaCompileError(f"{keyword} {ref!r} {why}") from exc
        for sub in resource.subresources():
            stack.append((sub, resolver.in_subresource(sub)))
