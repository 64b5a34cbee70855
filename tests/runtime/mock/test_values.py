"""Values generated from schemas (mock/values/: maker.py, prepare.py): valid, deterministic, examples first.

Every value is checked here with `compile_schema` on the *original* schema, independently of
the check the maker itself makes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mcpgen_runtime.mock.canonical import derive_seed
from mcpgen_runtime.mock.values import ValueGenerationError, ValueMaker
from mcpgen_runtime.mock.values.prepare import MAX_UNROLL, UnsupportedSchema, prepare
from mcpgen_runtime.schema import compile_schema
from tests.support import PYTHON, ROOT, subprocess_env

SHAPES: list[dict[str, Any]] = json.loads((ROOT / "specs" / "shapes.json").read_text())["tools"]
SEEDS = range(6)


def values(schema: Any, seeds: range = SEEDS) -> list[Any]:
    maker = ValueMaker(schema)
    produced = [maker.make(derive_seed(seed)) for seed in seeds]
    validate = compile_schema(schema)
    for value in produced:
        assert validate(value) is None, (value, validate(value))
    return produced


@pytest.mark.parametrize("tool", [t for t in SHAPES if "outputSchema" in t], ids=lambda t: t["name"])
def test_every_shapes_output_schema_gives_valid_varied_values(tool: dict[str, Any]) -> None:
    produced = values(tool["outputSchema"])
    assert len({json.dumps(v, sort_keys=True) for v in produced}) > 1  # the seed matters


@pytest.mark.parametrize("tool", SHAPES, ids=lambda t: t["name"])
def test_every_shapes_input_schema_gives_valid_values(tool: dict[str, Any]) -> None:
    values(tool["inputSchema"], range(3))


def test_the_same_seed_gives_the_same_value_whatever_was_drawn_before() -> None:
    schema = next(t for t in SHAPES if t["name"] == "discriminated")["outputSchema"]
    first = ValueMaker(schema)
    later = ValueMaker(schema)
    for seed in range(10):
        later.make(derive_seed(seed + 100))
    assert [first.make(derive_seed(s)) for s in SEEDS] == [later.make(derive_seed(s)) for s in SEEDS]


def test_values_do_not_depend_on_the_process_or_its_hash_seed() -> None:
    script = (
        "import json, sys; from mcpgen_runtime.mock.values import ValueMaker; "
        "from mcpgen_runtime.mock.canonical import derive_seed; "
        f"tools = json.load(open({str(ROOT / 'specs' / 'shapes.json')!r}))['tools']; "
        "print(json.dumps([ValueMaker(t['outputSchema']).make(derive_seed(3, t['name'])) "
        "for t in tools if 'outputSchema' in t], sort_keys=True))"
    )
    outputs = {
        subprocess.run(
            [PYTHON, "-c", script],
            env={**subprocess_env(), "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            check=True,
            timeout=120,
        ).stdout
        for hash_seed in ("0", "4242")
    }
    assert len(outputs) == 1


def test_values_do_not_depend_on_the_literals_in_the_users_code(tmp_path: Path) -> None:
    """hypothesis sometimes draws literals from "local" modules that are imported; a mock's answers
    must not change because the process importing it has different code loaded."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "userconstants.py").write_text(
        "NAMES = [" + ", ".join(repr(f"user-literal-{i}") for i in range(300)) + "]\n"
        "NUMBERS = [" + ", ".join(str(100_003 + 7 * i) for i in range(300)) + "]\n"
    )
    script = (
        "import json, sys\n"
        "if sys.argv[1:]: import userconstants\n"
        "from mcpgen_runtime.mock.values import ValueMaker\n"
        "from mcpgen_runtime.mock.canonical import derive_seed\n"
        "schemas = [\n"
        "    {'type': 'array', 'items': {'type': t}, 'minItems': 30, 'maxItems': 30}\n"
        "    for t in ('string', 'integer')\n"
        "]\n"
        "print(json.dumps([ValueMaker(s).make(derive_seed(i)) for i in range(8) for s in schemas]))\n"
    )
    env = {**subprocess_env(), "PYTHONPATH": f"{project}:{subprocess_env()['PYTHONPATH']}"}
    plain, with_literals = (
        subprocess.run(
            [PYTHON, "-c", script, *extra],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        for extra in ((), ("import",))
    )
    assert "user-literal" not in with_literals
    assert plain == with_literals


def test_a_users_hypothesis_profile_does_not_change_the_answer() -> None:
    from hypothesis import settings

    schema = {"type": "array", "items": {"type": "integer"}, "minItems": 2}
    before = [ValueMaker(schema).make(derive_seed(s)) for s in SEEDS]
    settings.register_profile("mcpgen-test-hostile", derandomize=True, max_examples=1, database=None)
    previous = settings.default
    settings.load_profile("mcpgen-test-hostile")
    try:
        after = [ValueMaker(schema).make(derive_seed(s)) for s in SEEDS]
    finally:
        settings.register_profile("mcpgen-test-restore", previous)
        settings.load_profile("mcpgen-test-restore")
    assert before == after


def test_examples_default_and_const_come_first() -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "examples": ["Berlin", "Lagos"]},
            "unit": {"type": "string", "default": "C"},
            "kind": {"const": "forecast"},
            "bad_example": {"type": "integer", "examples": ["not an integer"], "minimum": 5},
        },
        "required": ["city", "unit", "kind", "bad_example"],
    }
    produced = values(schema, range(12))
    assert {v["city"] for v in produced} == {"Berlin", "Lagos"}
    assert {v["unit"] for v in produced} == {"C"}
    assert {v["kind"] for v in produced} == {"forecast"}
    assert all(isinstance(v["bad_example"], int) and v["bad_example"] >= 5 for v in produced)


def test_whole_value_examples_are_used_at_the_root() -> None:
    example = {"temperature": 21.5, "conditions": "sunny"}
    schema = {
        "type": "object",
        "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}},
        "required": ["temperature"],
        "examples": [example],
    }
    assert values(schema) == [example] * len(SEEDS)


def test_objects_carry_only_declared_properties_unless_the_schema_asks_for_more() -> None:
    closed = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}
    assert all(set(v) <= {"a", "b"} for v in values(closed, range(10)))
    merged = {
        "allOf": [
            {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
            {"type": "object", "properties": {"y": {"type": "integer"}}},
        ]
    }
    assert all(set(v) <= {"x", "y"} for v in values(merged, range(10)))
    open_map = {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2}
    assert all(len(v) >= 2 for v in values(open_map))


def test_recursive_refs_are_unrolled_and_cut_off() -> None:
    schema = {
        "$ref": "#/$defs/node",
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "required": ["value"],
            }
        },
    }
    prepared = json.dumps(prepare(schema))
    assert "$ref" not in prepared
    produced = values(schema, range(10))

    def depth(node: dict[str, Any]) -> int:
        return 1 + max((depth(child) for child in node.get("children", [])), default=0)

    assert max(depth(v) for v in produced) <= MAX_UNROLL


def test_2020_12_tuples_and_draft_07_schemas() -> None:
    tuple_schema = {
        "type": "array",
        "prefixItems": [{"type": "string"}, {"type": "integer"}],
        "items": False,
        "minItems": 2,
    }
    assert all(isinstance(a, str) and isinstance(b, int) for a, b in values(tuple_schema))
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "array",
        "items": [{"type": "boolean"}],
        "additionalItems": False,
        "minItems": 1,
    }
    assert all(len(v) == 1 and isinstance(v[0], bool) for v in values(draft7))
    dependent = {
        "type": "object",
        "properties": {"card": {"type": "string"}, "billing": {"type": "string"}},
        "dependentRequired": {"card": ["billing"]},
    }
    values(dependent, range(10))


def test_integers_stay_within_the_safe_range_when_unbounded() -> None:
    assert all(abs(v) <= 2**53 - 1 for v in values({"type": "integer"}, range(20)))
    assert all(
        v >= 2**60 for v in values({"type": "integer", "minimum": 2**60})
    )  # unless the schema says otherwise


def test_an_unsatisfiable_schema_is_a_clear_error() -> None:
    maker = ValueMaker({"type": "string", "minLength": 3, "maxLength": 2})
    with pytest.raises(ValueGenerationError):
        maker.make(1)


def test_dynamic_refs_are_refused_by_prepare() -> None:
    with pytest.raises(UnsupportedSchema, match=r"\$dynamicRef"):
        prepare({"$dynamicRef": "#meta"})
