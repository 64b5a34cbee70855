"""The way back from a model (issue 35, item 4; providers/calls.py): a model's arguments parsed within
bounds, and each `null` that stands for "not sent" taken out, so that every value a lowered schema
admits is, mapped back, a value the tool's own schema admits (what makes the lowering faithful)."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpgen_runtime.mock.canonical import derive_seed
from mcpgen_runtime.mock.values import ValueMaker
from mcpgen_runtime.providers import lint_tool
from mcpgen_runtime.providers.calls import (
    MAX_ARGUMENTS_CHARS,
    MAX_ARGUMENTS_DEPTH,
    ModelCallError,
    declaration,
    parse_arguments,
    reply_message,
    sent_arguments,
)
from tests.support import ROOT, SHARED

NESTED = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "minimum": 1},
        "options": {"$ref": "#/$defs/Options"},
        "stops": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"place": {"type": "string"}, "note": {"type": "string"}},
                "required": ["place"],
            },
        },
        "when": {
            "anyOf": [
                {"type": "object", "properties": {"day": {"type": "string"}, "hour": {"type": "integer"}}},
                {"type": "object", "properties": {"week": {"type": "integer"}}, "required": ["week"]},
            ]
        },
    },
    "required": ["city"],
    "$defs": {
        "Options": {
            "type": "object",
            "properties": {
                "pace": {"type": "string", "enum": ["slow", "fast"]},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        }
    },
}


def lowered(schema: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    result = lint_tool("openai-strict", {"name": "t", "inputSchema": schema})
    assert result.schema is not None, result.problems
    return result.schema, result.nullable_optional


def test_each_null_for_not_sent_is_taken_out_through_refs_items_and_branches() -> None:
    schema, nullable = lowered(NESTED)
    assert set(nullable) == {
        "/properties/days",
        "/properties/options",
        "/properties/stops",
        "/properties/when",
        "/properties/stops/items/properties/note",
        "/properties/when/anyOf/0/properties/day",
        "/properties/when/anyOf/0/properties/hour",
        "/$defs/Options/properties/pace",
        "/$defs/Options/properties/tags",
    }
    model = {
        "city": "Oslo",
        "days": None,
        "options": {"pace": None, "tags": ["a"]},
        "stops": [{"place": "a", "note": None}, {"place": "b", "note": "n"}],
        "when": {"day": "mon", "hour": None},
    }
    jsonschema.validate(model, schema)
    sent = sent_arguments(model, schema, nullable)
    assert sent == {
        "city": "Oslo",
        "options": {"tags": ["a"]},
        "stops": [{"place": "a"}, {"place": "b", "note": "n"}],
        "when": {"day": "mon"},
    }
    jsonschema.validate(sent, NESTED)
    # a null where the tool itself takes null is kept, and nothing else changes
    assert sent_arguments({"city": None}, schema, nullable) == {"city": None}
    assert sent_arguments(model, schema, ()) is model


def _corpus_with_nullable_optional() -> list[tuple[str, dict[str, Any]]]:
    paths = sorted((ROOT / "specs").glob("*.json")) + sorted(SHARED.glob("realworld/*.json"))
    found = []
    for path in paths:
        for tool in json.loads(path.read_text("utf-8")).get("tools", []):
            result = lint_tool("openai-strict", tool)
            if result.schema is not None and result.nullable_optional:
                found.append((f"{path.stem}:{tool['name']}", tool["inputSchema"]))
    return found


CORPUS = _corpus_with_nullable_optional()


def test_every_value_the_lowered_schema_admits_maps_back_into_the_original() -> None:
    """Values drawn from each lowered schema of the corpora (by the mock's value maker, which follows
    recursive references), mapped back, pass the tool's own schema (jsonschema): the property the
    lowering is claimed to have."""
    assert len(CORPUS) >= 15  # specs/ alone; 83 with ../shared's real-world lists
    taken_out = 0
    for where, original in CORPUS:
        schema, nullable = lowered(original)
        validator = jsonschema.validators.validator_for(original)(original)
        maker = ValueMaker(schema)
        for seed in range(4):
            value = maker.make(derive_seed(seed, where))
            assert not list(jsonschema.Draft202012Validator(schema).iter_errors(value)), where
            sent = sent_arguments(value, schema, nullable)
            taken_out += json.dumps(value).count("null") - json.dumps(sent).count("null")
            errors = [error.message for error in validator.iter_errors(sent)]
            assert not errors, (where, value, sent, errors)
    assert taken_out > 10  # many a `null` for "not sent" was drawn and taken out


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "a JSON object, not list"),
        ('"text"', "a JSON object, not str"),
        ("x" * (MAX_ARGUMENTS_CHARS + 1), "longer than"),
        ("[" * 100_000 + "]" * 100_000, "not JSON"),
        (
            json.dumps(json.loads("{" + '"a":{' * MAX_ARGUMENTS_DEPTH + "}" * MAX_ARGUMENTS_DEPTH + "}")),
            "deeper",
        ),
    ],
)
def test_arguments_a_model_gets_wrong_are_refused_within_bounds(arguments: str, message: str) -> None:
    with pytest.raises(ModelCallError, match=message):
        parse_arguments(arguments)


def test_arguments_as_text_as_an_object_or_absent() -> None:
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments({"a": 1}) == {"a": 1}
    assert parse_arguments(None) == parse_arguments("") == {}


@given(
    st.recursive(
        st.none() | st.integers() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    )
)
def test_any_json_is_parsed_or_refused_never_an_unexpected_error(value: Any) -> None:
    try:
        assert parse_arguments(json.dumps(value)) == value
    except ModelCallError:
        assert not isinstance(value, dict)


def test_declarations_and_replies_in_each_providers_shape() -> None:
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    assert declaration("openai", "t", "does t", schema) == {
        "type": "function",
        "name": "t",
        "description": "does t",
        "parameters": schema,
        "strict": True,
    }
    assert declaration("openai-chat", "t", None, schema)["function"] == {
        "name": "t",
        "parameters": schema,
        "strict": True,
    }
    assert declaration("anthropic", "t", "d", schema)["input_schema"] is schema
    assert declaration("gemini", "t", "d", schema) == {"name": "t", "description": "d", "parameters": schema}
    assert reply_message("anthropic", "t", "toolu_1", "boom", is_error=True) == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "boom",
        "is_error": True,
    }
    assert reply_message("gemini", "t", None, "{}", is_error=False, value={"a": 1}) == {
        "function_response": {"name": "t", "response": {"output": {"a": 1}}}
    }
    with pytest.raises(ValueError, match="unknown provider 'mistral'"):
        declaration("mistral", "t", None, schema)
