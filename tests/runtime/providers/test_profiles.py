"""Provider profiles (issue 35, item 3): each provider's refusals by JSON pointer, the faithful
lowerings, and that a lowered schema is what its profile takes as it is."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpgen_runtime.providers import PROFILES, lint_tool
from tests.support import ROOT, SHARED


def tool(schema: dict[str, Any], name: str = "t") -> dict[str, Any]:
    return {"name": name, "inputSchema": schema}


def obj(properties: dict[str, Any], required: list[str] | None = None, **more: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        **({"required": required} if required else {}),
        **more,
    }


def problems(profile: str, schema: dict[str, Any]) -> dict[str, bool]:
    """pointer → whether it has a faithful lowering."""
    return {problem.pointer: problem.faithful for problem in lint_tool(profile, tool(schema)).problems}


def test_openai_an_optional_property_becomes_required_and_nullable() -> None:
    result = lint_tool("openai-strict", tool(obj({"a": {"type": "string"}, "b": {"type": "integer"}}, ["a"])))
    assert result.status == "lowered"
    assert result.schema == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": ["integer", "null"]}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert result.nullable_optional == ("/properties/b",)


def test_openai_an_optional_property_already_nullable_cannot_be_lowered() -> None:
    schema = obj({"a": {"type": ["string", "null"]}}, additionalProperties=False)
    assert problems("openai-strict", schema) == {"/inputSchema/properties/a": False}
    assert lint_tool("openai-strict", tool(schema)).status == "never"
    # the same property, required, is taken as it is
    assert lint_tool("openai-strict", tool({**schema, "required": ["a"]})).status == "as-is"


def test_openai_nullable_enum_and_ref_lowerings() -> None:
    schema = obj(
        {"e": {"type": "string", "enum": ["x", "y"]}, "r": {"$ref": "#/$defs/P"}},
        additionalProperties=False,
        **{"$defs": {"P": obj({"q": {"type": "number"}}, ["q"], additionalProperties=False)}},
    )
    result = lint_tool("openai-strict", tool(schema))
    assert result.status == "lowered"
    assert result.schema is not None
    assert result.schema["properties"]["e"] == {"type": ["string", "null"], "enum": ["x", "y", None]}
    assert result.schema["properties"]["r"] == {"anyOf": [{"$ref": "#/$defs/P"}, {"type": "null"}]}


@pytest.mark.parametrize(
    ("profile", "keyword"),
    [
        ("openai-strict", "minLength"),
        ("openai-strict", "uniqueItems"),
        ("anthropic", "minimum"),
        ("anthropic", "maxLength"),
        ("gemini", "exclusiveMinimum"),
        ("gemini", "multipleOf"),
    ],
)
def test_a_validation_keyword_outside_the_subset_has_no_faithful_lowering(profile: str, keyword: str) -> None:
    schema = obj({"a": {"type": "string", keyword: 2}}, ["a"], additionalProperties=False)
    assert problems(profile, schema) == {f"/inputSchema/properties/a/{keyword}": False}


@pytest.mark.parametrize("profile", ["openai-strict", "anthropic", "gemini"])
def test_the_root_must_be_an_object(profile: str) -> None:
    assert lint_tool(profile, tool({"type": "string"})).status == "never"
    rooted = {"anyOf": [obj({"a": {"type": "string"}}), obj({"b": {"type": "string"}})]}
    assert lint_tool(profile, tool(rooted)).status == "never"


def test_annotations_and_unknown_keywords_are_dropped_faithfully() -> None:
    schema = obj(
        {"a": {"type": "string", "default": "x", "examples": ["y"], "x-mcp-header": "A", "format": "uri"}},
        ["a"],
        additionalProperties=False,
    )
    result = lint_tool("openai-strict", tool(schema))
    assert result.status == "lowered"
    assert result.schema is not None
    assert result.schema["properties"]["a"] == {"type": "string"}


def test_a_free_form_object_or_map_cannot_be_closed() -> None:
    schema = obj(
        {"m": {"type": "object", "additionalProperties": {"type": "string"}}},
        ["m"],
        additionalProperties=False,
    )
    assert problems("openai-strict", schema) == {"/inputSchema/properties/m/additionalProperties": False}
    assert problems("anthropic", schema) == {"/inputSchema/properties/m/additionalProperties": False}
    assert lint_tool("gemini", tool(schema)).status == "as-is"


def test_a_tool_without_parameters_is_closed() -> None:
    result = lint_tool("openai-strict", tool({"type": "object"}))
    assert result.status == "lowered"
    assert result.schema == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_one_of_disjoint_branches_is_any_of_overlapping_ones_are_refused() -> None:
    disjoint = obj(
        {"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}, ["v"], additionalProperties=False
    )
    result = lint_tool("openai-strict", tool(disjoint))
    assert result.schema is not None
    assert result.schema["properties"]["v"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}
    overlapping = obj(
        {"v": {"oneOf": [{"type": "integer"}, {"type": "number"}]}}, ["v"], additionalProperties=False
    )
    assert problems("openai-strict", overlapping) == {"/inputSchema/properties/v/oneOf": False}


def test_gemini_inlines_refs_and_turns_type_lists_into_nullable() -> None:
    schema = obj(
        {"p": {"$ref": "#/$defs/P"}, "n": {"type": ["integer", "null"]}, "c": {"const": "only"}},
        **{"$defs": {"P": obj({"q": {"type": "string"}})}},
    )
    result = lint_tool("gemini", tool(schema))
    assert result.status == "lowered", result.problems
    assert result.schema == {
        "type": "object",
        "properties": {
            "p": {"type": "object", "properties": {"q": {"type": "string"}}},
            "n": {"type": "integer", "nullable": True},
            "c": {"enum": ["only"]},
        },
    }


def test_recursive_schemas() -> None:
    schema = obj(
        {"tree": {"$ref": "#/$defs/Node"}},
        ["tree"],
        additionalProperties=False,
        **{
            "$defs": {
                "Node": obj(
                    {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                    ["kids"],
                    additionalProperties=False,
                )
            }
        },
    )
    assert lint_tool("openai-strict", tool(schema)).status == "as-is"
    assert lint_tool("anthropic", tool(schema)).status == "never"
    assert lint_tool("gemini", tool(schema)).status == "never"


def test_gemini_enums_are_strings_and_parameter_names_identifiers() -> None:
    assert problems("gemini", obj({"n": {"type": "integer", "enum": [1, 2]}})) == {
        "/inputSchema/properties/n/enum": False
    }
    assert problems("gemini", obj({"a-b": {"type": "string"}})) == {"/inputSchema/properties/a-b": False}


def test_anthropic_patterns_min_items_and_type_lists() -> None:
    assert problems(
        "anthropic",
        obj({"s": {"type": "string", "pattern": r"^(?=a)\w+$"}}, ["s"], additionalProperties=False),
    ) == {"/inputSchema/properties/s/pattern": False}
    assert problems(
        "anthropic", obj({"a": {"type": "array", "minItems": 2}}, ["a"], additionalProperties=False)
    ) == {"/inputSchema/properties/a/minItems": False}
    result = lint_tool(
        "anthropic",
        tool(obj({"s": {"type": ["string", "null"], "format": "date"}}, additionalProperties=False)),
    )
    assert result.schema is not None
    assert result.schema["properties"]["s"] == {
        "anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]
    }


def test_openai_limits() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(11):
        schema = obj({"x": schema}, ["x"], additionalProperties=False)
    assert problems("openai-strict", schema) == {"/inputSchema": False}
    many = obj(
        {"e": {"type": "string", "enum": [str(n) for n in range(1001)]}}, ["e"], additionalProperties=False
    )
    assert lint_tool("openai-strict", tool(many)).status == "never"


@pytest.mark.parametrize(
    ("profile", "name", "mapped"),
    [
        ("openai-strict", "files.read", "files_read"),
        ("anthropic", "a" * 70, None),
        ("gemini", "9lives", "_9lives"),
        ("gemini", "files.read", "files.read"),
    ],
)
def test_tool_names_outside_the_alphabet_are_mapped(profile: str, name: str, mapped: str | None) -> None:
    result = lint_tool(
        profile,
        {"name": name, "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False}},
    )
    if mapped is not None:
        assert result.name == mapped
    assert PROFILES[profile].name_pattern.fullmatch(result.name)
    assert (result.name == name) == (result.status == "as-is")
    assert all(problem.faithful for problem in result.problems)


def _corpus() -> list[dict[str, Any]]:
    paths = sorted((ROOT / "specs").glob("*.json")) + sorted((SHARED / "realworld").glob("*.json"))
    tools: list[dict[str, Any]] = []
    for path in paths:
        document = json.loads(path.read_text(encoding="utf-8"))
        tools += [item for item in document.get("tools", []) if isinstance(item, dict)]
    return tools


@pytest.mark.parametrize("profile", list(PROFILES))
def test_a_lowered_schema_is_taken_as_it_is(profile: str) -> None:
    """Lowering is complete: run again, the profile finds nothing left to change."""
    lowered = [result for result in (lint_tool(profile, t) for t in _corpus()) if result.schema is not None]
    assert len(lowered) > 50
    for result in lowered:
        again = lint_tool(profile, {"name": result.name, "inputSchema": result.schema})
        assert again.problems == (), (result.tool, again.problems)


@pytest.mark.parametrize("profile", list(PROFILES))
def test_a_deeply_nested_schema_is_refused_within_bounds(profile: str) -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(2000):  # past the interpreter's recursion limit if the walk followed it all
        schema = obj({"x": schema}, ["x"], additionalProperties=False)
    result = lint_tool(profile, tool(schema))
    assert result.status == "never"
    assert any("larger than mcpgen lints" in problem.message for problem in result.problems)


def test_shared_definitions_inlined_again_and_again_cannot_blow_up() -> None:
    """Forty definitions, each referring to the next twice: 2**40 paths, refused in a bounded walk."""
    defs = {
        f"D{n}": obj({"a": {"$ref": f"#/$defs/D{n + 1}"}, "b": {"$ref": f"#/$defs/D{n + 1}"}})
        for n in range(40)
    }
    defs["D40"] = {"type": "string"}
    schema = obj({"root": {"$ref": "#/$defs/D0"}}, **{"$defs": defs})
    result = lint_tool("gemini", tool(schema))
    assert result.status == "never"
    assert any("larger than mcpgen lints" in problem.message for problem in result.problems)
    assert lint_tool("openai-strict", tool(schema)).status == "lowered"  # kept as references


_KEYWORDS = (
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "oneOf",
    "allOf",
    "enum",
)
_KEYS = st.sampled_from(
    [
        *_KEYWORDS,
        "const",
        "$ref",
        "$defs",
        "format",
        "pattern",
        "minimum",
        "minLength",
        "title",
        "default",
        "x-a",
        "a",
    ]
)
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(
        ["string", "integer", "null", "object", "array", "number", "#", "#/$defs/a", "a", "date"]
    ),
)
_SCHEMAS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_SCHEMAS)
def test_any_json_is_linted_without_error_and_its_lowering_is_complete(schema: Any) -> None:
    """Whatever a server sends as inputSchema: findings, never an exception; a lowered schema is final."""
    for profile in PROFILES:
        result = lint_tool(profile, tool(schema))
        if result.schema is not None:
            assert lint_tool(profile, tool(result.schema)).problems == ()
