"""metaschema: the compiled "certainly valid" predicate never accepts what jsonschema rejects.

validate.py reports jsonschema's own errors for every subschema the predicate does not accept, so
the diagnostics stay jsonschema's exactly as long as the predicate is never more lenient.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from codegen.refs import DRAFT_07, DRAFT_2020_12, Dialect
from codegen.validate import metaschema

DIALECTS: list[Dialect] = [DRAFT_2020_12, DRAFT_07]
SCALARS: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    1.0,
    0.5,
    -0.5,
    2.0,
    float("inf"),
    "",
    "a",
    "#",
    "a#b",
    "#/x",
    "string",
    "object",
    "integer",
    "null",
    "bogus",
    "^a$",
    "[",
    "http://x",
    "A_b",
    "1abc",
    "a\n",
]


def _jsonschema_accepts(dialect: Dialect, node: Any) -> bool:
    return not any(True for _ in metaschema._validator(dialect).iter_errors(node))


def _random_subschema(rng: random.Random, keywords: list[str]) -> dict[str, Any]:
    def value(depth: int) -> Any:
        roll = rng.random()
        if depth > 3 or roll < 0.5:
            return rng.choice(SCALARS)
        if roll < 0.75:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice([*keywords, "a", "b"]): value(depth + 1) for _ in range(rng.randint(0, 3))}

    node: dict[str, Any] = {}
    for _ in range(rng.randint(0, 5)):
        keyword = rng.choice(keywords)
        if keyword == "type" and rng.random() < 0.5:
            node[keyword] = rng.choice([["string", "null"], ["string", "string"], [], "number", ["integer"]])
        elif keyword in ("required", "enum", "examples") and rng.random() < 0.5:
            node[keyword] = rng.choice([["a", "b"], ["a", "a"], [], [1, True], ["a", 1]])
        else:
            node[keyword] = value(0)
    return node


@pytest.mark.parametrize("dialect", DIALECTS)
def test_predicate_is_never_more_lenient_than_jsonschema(dialect: Dialect) -> None:
    keywords = [*sorted(metaschema.shallow_meta_schema(dialect)["properties"]), "x-extension"]
    certainly_valid = metaschema.certainly_valid(dialect)
    rng = random.Random(5)
    accepted = 0
    for _ in range(5000):
        node = _random_subschema(rng, keywords)
        if certainly_valid(node):
            accepted += 1
            assert _jsonschema_accepts(dialect, node), node
    assert accepted > 500  # the fast path is taken, not just sound


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "node",
    [
        {"type": "string", "description": "x", "minLength": 1, "maxLength": 10},
        {"type": ["string", "null"], "enum": ["a", "b"], "default": "a"},
        {"type": "object", "properties": {"a": {}}, "required": ["a"], "additionalProperties": False},
        {"type": "array", "items": {"type": "integer"}, "minItems": 0, "uniqueItems": True},
        {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "t"},
        {"$ref": "#/$defs/x", "$defs": {"x": True}},
    ],
)
def test_common_subschemas_take_the_fast_path(dialect: Dialect, node: dict[str, Any]) -> None:
    assert metaschema.certainly_valid(dialect)(node)
    assert list(metaschema.problems(dialect, node)) == []


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    "node",
    [
        {"type": "strin"},
        {"type": ["string", "string"]},
        {"minLength": -1},
        {"minLength": True},
        {"required": ["a", "a"]},
        {"properties": {"a": 3}},
        {"enum": "a"},
        {"multipleOf": 0},
    ],
)
def test_invalid_subschemas_get_jsonschemas_errors(dialect: Dialect, node: dict[str, Any]) -> None:
    assert not metaschema.certainly_valid(dialect)(node)
    found = list(metaschema.problems(dialect, node))
    assert found and all(message.startswith(f"not a valid {dialect} schema: ") for _where, message in found)
    assert len(found) == sum(1 for _ in metaschema._validator(dialect).iter_errors(node))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_meta_schema_read_from_files_is_the_registrys(dialect: Dialect) -> None:
    """The documents read from jsonschema_specifications' files (no `referencing` import) flatten
    to what its registry gives."""
    shipped = metaschema._shipped_documents()
    assert shipped is not None
    from_files = metaschema._flatten(dialect, shipped)
    assert from_files == metaschema._flatten(dialect, metaschema._registry_contents())
    assert metaschema.shallow_meta_schema(dialect) == from_files
