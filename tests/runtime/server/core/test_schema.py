"""mcpgen_runtime.schema: dialects, local-only `$ref`s, error pointers, and the fast path's fidelity."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator, Draft202012Validator

from mcpgen_runtime.schema import (
    DRAFT7,
    DRAFT202012,
    SchemaCompileError,
    SchemaDialectError,
    SchemaIssue,
    compile_schema,
    dialect_of,
    fast_predicate,
)
from tests.support import SHARED, needs_shared

ROOT = Path(__file__).resolve().parents[4]
SPEC_DIR = SHARED / "spec"


@pytest.mark.parametrize(
    ("declared", "dialect"),
    [
        (None, DRAFT202012),  # SCHEMA-01
        ("https://json-schema.org/draft/2020-12/schema", DRAFT202012),
        ("https://json-schema.org/draft/2020-12/schema#", DRAFT202012),
        ("http://json-schema.org/draft-07/schema#", DRAFT7),
        ("http://json-schema.org/draft-07/schema", DRAFT7),
    ],
)
def test_dialects_schema01_schema03(declared: str | None, dialect: str) -> None:
    schema = {"type": "object"} if declared is None else {"$schema": declared, "type": "object"}
    assert dialect_of(schema) == dialect


@pytest.mark.parametrize(
    "declared", ["http://json-schema.org/draft-04/schema#", "https://json-schema.org/draft/2019-09/schema", 7]
)
def test_unsupported_dialect_schema06(declared: Any) -> None:
    with pytest.raises(SchemaDialectError, match=r"unsupported JSON Schema dialect|must be a string"):
        compile_schema({"$schema": declared, "type": "object"})


def test_dialect_semantics_differ_schema05() -> None:
    """2020-12 `prefixItems` vs draft-07 tuple `items`: each schema is read in its own dialect."""
    tuple_07 = compile_schema(
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "items": [{"type": "string"}],
            "additionalItems": False,
        }
    )
    assert tuple_07(["a"]) is None and tuple_07([1]) is not None and tuple_07(["a", "b"]) is not None
    prefix_2020 = compile_schema({"prefixItems": [{"type": "string"}], "items": False})
    assert prefix_2020(["a"]) is None and prefix_2020(["a", "b"]) is not None


def test_invalid_schema_schema07() -> None:
    with pytest.raises(SchemaCompileError, match="invalid 2020-12 schema at /properties/a/type"):
        compile_schema({"type": "object", "properties": {"a": {"type": "strin"}}})


@pytest.mark.parametrize(
    "ref",
    [
        "https://example.com/schemas/user.json",
        "http://127.0.0.1:1/x#/y",
        "other.json",
        "#/$defs/missing",
        "#nowhere",
    ],
)
def test_unresolvable_refs_fail_at_compile_schema08_schema10(ref: str) -> None:
    with pytest.raises(SchemaCompileError, match=r"\$ref"):
        compile_schema({"type": "object", "properties": {"p": {"$ref": ref}}, "$defs": {"d": {}}})


def test_local_refs_anchors_and_embedded_ids_resolve() -> None:
    validate = compile_schema(
        {
            "$defs": {
                "addr": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                },
                "inner": {
                    "$id": "https://x.example/inner",
                    "$defs": {"n": {"type": "integer"}},
                    "$ref": "#/$defs/n",
                },
            },
            "type": "object",
            "properties": {
                "a": {"$ref": "#addressDef"},
                "b": {"$ref": "#/$defs/addr"},
                "c": {"$ref": "https://x.example/inner"},
                "meta": {"$ref": "https://json-schema.org/draft/2020-12/schema"},  # bundled, never fetched
            },
        }
    )
    assert validate({"a": {"city": "Oslo"}, "b": {}, "c": 3, "meta": {"type": "string"}}) is None
    assert validate({"a": {"city": 1}}) == SchemaIssue("/a/city", "1 is not of type 'string'")
    assert validate({"c": "x"}) is not None
    assert validate({"meta": {"type": 12}}) is not None


def test_conformance_fixture_schema_validates() -> None:
    """The json_schema_2020_12_tool fixture ($defs, $anchor, allOf/anyOf, if/then/else) compiles and works."""
    tools = json.loads(needs_shared("spec", "conformance-tools.json").read_text())["tools"]
    schema = next(t for t in tools if t["name"] == "json_schema_2020_12_tool")["inputSchema"]
    validate = compile_schema(schema)
    assert validate({"name": "x", "email": "x@example.com", "address": {"city": "Oslo"}}) is None
    assert validate({"contactMethod": "phone", "phone": "123"}) is None
    assert validate({"contactMethod": "phone", "email": "x@example.com"}) is not None  # if/then
    assert validate({"name": "x"}) is not None  # anyOf of required
    assert validate({"email": "e", "address": {"city": 1}}) == SchemaIssue(
        "/address/city", "1 is not of type 'string'"
    )
    assert validate({"email": "e", "unknown_extra": 1}) is not None  # additionalProperties: false


def test_issue_pointer_escapes_and_message_is_bounded() -> None:
    validate = compile_schema({"type": "object", "properties": {"a/b~c": {"type": "integer"}}})
    issue = validate({"a/b~c": "x" * 1000})
    assert issue is not None and issue.pointer == "/a~1b~0c"
    assert len(issue.message) <= 300 and issue.describe().startswith("at /a~1b~0c: ")
    assert compile_schema({"required": ["x"]})({}) == SchemaIssue("", "'x' is a required property")


def test_most_relevant_error_inside_any_of() -> None:
    validate = compile_schema(
        {"anyOf": [{"type": "string"}, {"type": "object", "properties": {"q": {"type": "integer"}}}]}
    )
    assert validate({"q": "x"}) == SchemaIssue("/q", "'x' is not of type 'integer'")


def test_format_is_an_annotation() -> None:
    assert compile_schema({"type": "string", "format": "email"})("not an email") is None


# ---- the fast path agrees with jsonschema ---------------------------------------------------------

SCALARS: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    1.5,
    -0.5,
    2**53,
    "",
    "a",
    "abc",
    "us-west1",
    "é" * 3,
    "2024-01-01",
]
VALUES: list[Any] = [
    *SCALARS,
    [],
    [1],
    ["a", "b"],
    [1, "a"],
    [None],
    {},
    {"a": 1},
    {"a": "x", "b": [1]},
    {"kind": "x"},
    [[1]],
    [{"a": 1}],
]

HAND_SCHEMAS: list[dict[str, Any]] = [
    {"type": ["string", "null"]},
    {"type": "integer"},
    {"type": "number", "minimum": 0, "exclusiveMaximum": 2},
    {"type": "number", "exclusiveMinimum": 0, "maximum": 1.5},
    {"enum": ["a", "abc", 1, None, True]},
    {"enum": [0, False]},
    {"const": 1},
    {"const": "a"},
    {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^[a-z]+$"},
    {"pattern": "b"},
    {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 2},
    {"items": False},
    {"items": {"type": ["string", "integer"]}},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "array"}}, "required": ["a"]},
    {"type": "object", "additionalProperties": False},
    {"type": "object", "properties": {"a": True}, "additionalProperties": {"type": "string"}},
    {"properties": {"a": False}},
    {"propertyNames": {"maxLength": 1}, "minProperties": 1, "maxProperties": 1},
    {"dependentRequired": {"a": ["b"]}},
    {"allOf": [{"type": "object"}, {"required": ["a"]}]},
    {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 1}]},
    {"oneOf": [{"type": "number"}, {"type": "integer"}]},
    {"not": {"type": ["string", "array"]}},
    {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "array"}},
    {"if": {"properties": {"kind": {"const": "x"}}}, "then": {"required": ["a"]}},
    {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "title": "t",
        "x-mcp-header": "H",
        "description": "annotations are ignored",
    },
    {"type": ["object"], "properties": {"a": {"type": "number"}}, "required": ["a"], "minProperties": 1},
    {"type": ["object", "null"], "properties": {"a": {"type": "string"}}},
    {
        "type": "object",
        "properties": {"a": {"type": "number"}},
        "allOf": [{"required": ["a"]}],
        "dependentRequired": {"a": ["b"]},
    },
    True,
    False,
]


# Real tool lists from ../shared, when it is beside the checkout (developer machines and CI): a clone
# without it runs the repository's own specs and reports the rest as skipped (test_shared_specs_present).
SHARED_SPECS = (SPEC_DIR / "conformance-tools.json", SHARED / "realworld" / "github-tools.json")
COMMON_SPECS = (ROOT / "specs" / "weather.json", *(path for path in SHARED_SPECS if path.is_file()))
# Every shape the generator supports, including keywords the fast path leaves to jsonschema.
ALL_SPECS = (*COMMON_SPECS, ROOT / "specs" / "shapes.json")


def test_shared_specs_present() -> None:
    """The parametrized tests below cover the ../shared tool lists too (skipped, with the reason,
    without them)."""
    for path in SHARED_SPECS:
        needs_shared(*path.relative_to(SHARED).parts)
    assert all(path in COMMON_SPECS for path in SHARED_SPECS)


def _spec_schemas(paths: tuple[Path, ...] = ALL_SPECS) -> list[Any]:
    schemas: list[Any] = []
    for path in paths:
        for tool in json.loads(path.read_text())["tools"]:
            schemas.append(tool["inputSchema"])
            if "outputSchema" in tool:
                schemas.append(tool["outputSchema"])
    return schemas


def _instances_for(schema: Any) -> list[Any]:
    """Pool values, plus objects built from the schema's own property names."""
    instances = list(VALUES)
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        names = list(schema["properties"])[:4]
        for name in names:
            instances.extend({name: value} for value in VALUES)
        for size in (2, len(names)):
            for combo in itertools.combinations(names, min(size, len(names))):
                for value in SCALARS:
                    instances.append(dict.fromkeys(combo, value))
        instances.append({**dict.fromkeys(names, "x"), "extra": 1})
    return instances


@pytest.mark.parametrize("schema", HAND_SCHEMAS + _spec_schemas())
def test_fast_path_agrees_with_jsonschema(schema: Any) -> None:
    """The fast predicate never accepts what jsonschema rejects (nor the reverse, here)."""
    dialect = DRAFT202012 if isinstance(schema, bool) else dialect_of(schema)
    reference = (Draft7Validator if dialect == DRAFT7 else Draft202012Validator)(schema)
    validate = compile_schema(schema)
    fast = fast_predicate(schema)
    for instance in _instances_for(schema):
        expected = reference.is_valid(instance)
        assert (validate(instance) is None) == expected, (schema, instance)
        if fast is not None:
            assert fast(instance) == expected, (schema, instance)


def test_fast_path_covers_the_common_schemas() -> None:
    for schema in HAND_SCHEMAS + _spec_schemas(COMMON_SPECS):
        uses_ref = "$ref" in json.dumps(schema)
        assert (fast_predicate(schema) is None) == uses_ref, schema
