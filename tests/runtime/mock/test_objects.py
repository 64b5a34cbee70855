"""The mock's own object strategy (mock/values/objects.py) against hypothesis-jsonschema's (#21, trap 8).

hypothesis-jsonschema draws objects through hypothesis's private `many.more()` (gone since
hypothesis 6.170.10); the mock draws them with public API instead. Differential: on every object
shape the repository holds, both give values valid against the schema and cover the same
optional members, where the installed hypothesis still has `many.more` to run the library's.
And the mock never touches `many.more`: with it removed, answers are still made.
"""

from __future__ import annotations

import contextlib
import json
import types
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from hypothesis.internal.conjecture import utils as conjecture_utils

from mcpgen_runtime.mock.canonical import derive_seed
from mcpgen_runtime.mock.values import ValueMaker
from mcpgen_runtime.mock.values.objects import objects_drawn_publicly
from mcpgen_runtime.mock.values.prepare import prepare
from mcpgen_runtime.schema import compile_schema
from tests.support import ROOT

SHAPES: list[dict[str, Any]] = json.loads((ROOT / "specs" / "shapes.json").read_text())["tools"]
OBJECTS: list[tuple[str, Any]] = [
    (f"{t['name']}:{side}", t[side])
    for t in SHAPES
    for side in ("inputSchema", "outputSchema")
    if isinstance(t.get(side), dict) and t[side].get("type") == "object"
] + [
    ("open-map", {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2}),
    ("patterns", {"type": "object", "patternProperties": {"^x-": {"type": "string"}}, "minProperties": 1}),
    (
        "dependencies",
        {
            "type": "object",
            "properties": {
                "card": {"type": "string"},
                "billing": {"type": "string"},
                "note": {"type": "string"},
            },
            "dependencies": {"card": ["billing"]},
        },
    ),
    (
        "bounded",
        {"type": "object", "properties": {k: {"type": "boolean"} for k in "abcdef"}, "maxProperties": 2},
    ),
]
DRAWS = 40
HAS_MANY_MORE = callable(getattr(conjecture_utils.many, "more", None))


def _sample(schema: Any, *, ours: bool) -> list[Any]:
    from hypothesis_jsonschema import from_schema

    prepared = prepare(schema, prefer_examples=False, close_objects=True)
    validate = compile_schema(schema)
    found: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @settings(
            max_examples=DRAWS,
            database=None,
            derandomize=True,
            phases=[Phase.generate],
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(from_schema(prepared, allow_x00=False, codec="utf-8"))
        def collect(value: Any) -> None:
            found.append(value)

        with (
            objects_drawn_publicly() if ours else contextlib.nullcontext(),
            contextlib.suppress(Unsatisfiable),
        ):
            collect()  # Unsatisfiable: every draw rejected, no value at all
    return [v for v in found if validate(v) is None]


def _members(values: list[Any]) -> set[str]:
    return {key for value in values if isinstance(value, dict) for key in value}


@pytest.mark.skipif(
    not HAS_MANY_MORE, reason="this hypothesis has no `many.more`: the library's objects cannot run"
)
@pytest.mark.parametrize(("name", "schema"), OBJECTS, ids=[n for n, _ in OBJECTS])
def test_the_same_validity_and_coverage_as_hypothesis_jsonschema(name: str, schema: Any) -> None:
    theirs, ours = _sample(schema, ours=False), _sample(schema, ours=True)
    assert ours or not theirs  # valid values wherever the library finds some
    assert len(ours) >= len(theirs) // 2
    declared = set(schema.get("properties", {}))
    assert _members(theirs) & declared <= _members(ours)  # every declared member the library drew, ours drew


def test_no_answer_needs_many_more(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on hypothesis >= 6.170.10, where `many.more` does not exist: hypothesis-jsonschema sees
    a `many` that fails when used (hypothesis itself keeps its own, which older releases need)."""
    from hypothesis_jsonschema import _from_schema as library

    class Removed:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise AssertionError("the private many() API was used")

    monkeypatch.setattr(library, "cu", types.SimpleNamespace(many=Removed))
    weather = {t["name"]: t for t in json.loads((ROOT / "specs" / "weather.json").read_text())["tools"]}
    for name in ("get_weather_data", "list_users"):
        schema = weather[name]["outputSchema"]
        validate = compile_schema(schema)
        for seed in range(5):
            assert validate(ValueMaker(schema).make(derive_seed(seed, name))) is None
    for name, schema in OBJECTS:
        assert compile_schema(schema)(ValueMaker(schema).make(derive_seed(1, name))) is None, name


def test_the_objects_swap_is_undone_after_use() -> None:
    from hypothesis_jsonschema import _from_schema as library

    before = library.object_schema
    ValueMaker({"type": "object", "properties": {"a": {"type": "integer"}}}).make(3)
    assert library.object_schema is before


def test_a_hypothesis_jsonschema_without_the_replaced_function_is_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hypothesis_jsonschema import _from_schema as library

    monkeypatch.delattr(library, "merged_as_strategies")
    before = library.object_schema
    with objects_drawn_publicly():
        assert library.object_schema is before
