"""Mock answers are valid, sendable and realistic (issue #21, trap 4).

Valid: against the tool's outputSchema, always. Sendable: orjson serializes them (integers within
±2^53 unless the schema asks for more, finite numbers) and strings carry no control characters.
Realistic: `format`s and well-known property names give plausible values, deterministic per seed;
a guess the schema refuses falls back to the schema-driven value.
"""

from __future__ import annotations

import copy
import json
import math
import re
import unicodedata
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpgen_runtime.mock.canonical import derive_seed
from mcpgen_runtime.mock.values import ValueMaker
from mcpgen_runtime.schema import compile_schema
from tests.support import ROOT, SHARED

WEATHER: dict[str, dict[str, Any]] = {
    t["name"]: t for t in json.loads((ROOT / "specs" / "weather.json").read_text())["tools"]
}


def printable(value: Any) -> bool:
    """No control characters and no lone surrogates in any string of `value` (keys included)."""
    if isinstance(value, str):
        return all(unicodedata.category(c) not in ("Cc", "Cs") for c in value)
    if isinstance(value, list):
        return all(printable(v) for v in value)
    if isinstance(value, dict):
        return all(printable(k) and printable(v) for k, v in value.items())
    return True


def sendable(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        return abs(value) <= 2**53
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(sendable(v) for v in value)
    if isinstance(value, dict):
        return all(sendable(v) for v in value.values())
    return isinstance(value, str)


def answers(schema: Any, seeds: range, *parts: Any) -> list[Any]:
    """What the mock answers for `--seed s` (s in `seeds`), checked valid and serializable."""
    maker = ValueMaker(schema)
    validate = compile_schema(schema)
    produced = []
    for seed in seeds:
        value = maker.make(derive_seed(seed, *parts))
        assert validate(value) is None, (seed, value)
        orjson.dumps(value)  # raises for what cannot be sent
        produced.append(value)
    return produced


# ---- the user's two reports, reproduced ------------------------------------------------------


def test_a_required_member_without_a_schema_is_sendable() -> None:
    """`"required": ["id", "extra"]`, `extra` not in `properties`: it was `Integer exceeds 64-bit
    range` for 2 of 10 seeds."""
    schema = copy.deepcopy(WEATHER["list_users"]["outputSchema"])
    schema["items"]["required"] = ["id", "extra"]
    maker = ValueMaker(schema)
    for call in range(10):  # among these seeds, two gave an integer past 64 bits
        orjson.dumps(maker.make(derive_seed(7, "list_users", {}, call)))
    for value in answers(schema, range(10), "list_users", {}):
        assert sendable(value) and printable(value), value
        assert all("extra" in user for user in value)


def test_the_weather_answers_are_plausible() -> None:
    """Humidity was -3.47e16, conditions held control characters."""
    produced = answers(WEATHER["get_weather_data"]["outputSchema"], range(10), "get_weather_data", {})
    for value in produced:
        assert 0 <= value["humidity"] <= 100, value
        assert -60 <= value["temperature"] <= 60, value
        assert re.fullmatch(r"[A-Za-z][A-Za-z ,-]*", value["conditions"]), value
    assert len({v["conditions"] for v in produced}) > 1  # the seed still matters


def test_users_have_names_and_email_addresses() -> None:
    produced = answers(WEATHER["list_users"]["outputSchema"], range(10), "list_users", {})
    users = [user for value in produced for user in value]
    assert users
    for user in users:
        assert re.fullmatch(r"[a-z0-9._-]+@[a-z0-9-]+(\.[a-z0-9-]+)+", user["email"]), user
        assert re.fullmatch(r"[A-Z][a-z]+( [A-Z][A-Za-z'-]+)*", user["name"]), user
        assert printable(user["id"]) and user["id"].strip(), user


# ---- formats and names ---------------------------------------------------------------------


FORMATS = {
    "email": r"[a-z0-9._-]+@[a-z0-9-]+(\.[a-z0-9-]+)+",
    "uri": r"https://[a-z0-9.-]+(/[A-Za-z0-9._~/-]*)?",
    "date": r"\d{4}-\d{2}-\d{2}",
    "date-time": r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
    "uuid": r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    "ipv4": r"(\d{1,3}\.){3}\d{1,3}",
    "hostname": r"[a-z0-9-]+(\.[a-z0-9-]+)+",
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_formats_give_realistic_values(fmt: str) -> None:
    for value in answers({"type": "string", "format": fmt}, range(6), fmt):
        assert re.fullmatch(FORMATS[fmt], value), value


@pytest.mark.parametrize(
    ("name", "schema", "check"),
    [
        ("email", {"type": "string"}, lambda v: "@" in v),
        ("first_name", {"type": "string"}, lambda v: re.fullmatch(r"[A-Z][a-z]+", v)),
        ("url", {"type": "string"}, lambda v: v.startswith("https://")),
        ("city", {"type": "string"}, lambda v: re.fullmatch(r"[A-Z][A-Za-z .'-]+", v)),
        ("location", {"type": "string"}, lambda v: re.fullmatch(r"[A-Z][A-Za-z .'-]+", v)),
        ("temperature", {"type": "number"}, lambda v: -40 <= v <= 50),
        ("humidity", {"type": "integer"}, lambda v: 0 <= v <= 100),
        ("count", {"type": "integer"}, lambda v: 0 <= v <= 1000),
        ("price", {"type": "number"}, lambda v: 0 < v < 10_000),
        ("created_at", {"type": "string"}, lambda v: re.fullmatch(FORMATS["date-time"], v)),
        ("timestamp", {"type": "integer"}, lambda v: 1_000_000_000 < v < 5_000_000_000),
        ("id", {"type": "integer"}, lambda v: 0 < v < 1_000_000),
    ],
)
def test_property_names_give_realistic_values(name: str, schema: dict[str, Any], check: Any) -> None:
    wrapper = {"type": "object", "properties": {name: schema}, "required": [name]}
    for value in answers(wrapper, range(6), name):
        assert check(value[name]), value


def test_a_guess_the_schema_refuses_falls_back_to_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "email": {"type": "string", "pattern": "^x+$", "maxLength": 4},
            "humidity": {"type": "number", "minimum": 500},
            "name": {"type": "string", "minLength": 200},
        },
        "required": ["email", "humidity", "name"],
    }
    for value in answers(schema, range(4), "fallback"):
        assert re.fullmatch("x{1,4}", value["email"]) and value["humidity"] >= 500
        assert len(value["name"]) >= 200


def test_the_schemas_own_values_come_before_guesses() -> None:
    schema = {
        "type": "object",
        "properties": {
            "email": {"type": "string", "examples": ["ops@weather.test"]},
            "city": {"enum": ["Atlantis"]},
        },
        "required": ["email", "city"],
    }
    assert {(v["email"], v["city"]) for v in answers(schema, range(5), "own")} == {
        ("ops@weather.test", "Atlantis")
    }


def test_the_same_seed_tool_arguments_and_call_number_give_the_same_answer() -> None:
    schema = WEATHER["get_weather_data"]["outputSchema"]
    first = [
        ValueMaker(schema).make(derive_seed(7, "get_weather_data", {"location": "Oslo"}, n)) for n in range(4)
    ]
    again = [
        ValueMaker(schema).make(derive_seed(7, "get_weather_data", {"location": "Oslo"}, n)) for n in range(4)
    ]
    assert first == again


def test_unbounded_numbers_and_free_values_stay_sendable() -> None:
    schemas: list[Any] = [
        True,
        {},
        {"type": "number"},
        {"type": "array", "minItems": 3},
        {"type": "object", "minProperties": 3},
        {"minimum": 1},
        {"type": "string", "minLength": 5},
    ]
    for schema in schemas:
        for value in answers(schema, range(8), "free"):
            assert sendable(value) and printable(value), (schema, value)


# ---- every answer, every shape the repository holds -------------------------------------------


def _output_schemas() -> list[tuple[str, Any]]:
    files = sorted((ROOT / "tests" / "hostile" / "corpus").glob("*.json"))
    files += sorted((ROOT / "specs").glob("*.json"))
    realworld = SHARED / "realworld"
    if realworld.is_dir():
        files += sorted(realworld.glob("*.json"))
    found = []
    for path in files:
        for tool in json.loads(path.read_text()).get("tools", []):
            if isinstance(tool, dict) and "outputSchema" in tool:
                found.append((f"{path.name}:{tool.get('name')}", tool["outputSchema"]))
    return found


OUTPUT_SCHEMAS = _output_schemas()
_MAKERS: dict[str, ValueMaker] = {}


def test_the_corpus_has_output_schemas() -> None:
    assert len(OUTPUT_SCHEMAS) > 20
    if not (SHARED / "realworld").is_dir():
        pytest.skip("../shared/realworld is absent: the real-world tool lists were not checked")


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(case=st.sampled_from(OUTPUT_SCHEMAS), seed=st.integers(0, 2**64 - 1))
def test_every_answer_validates_and_serializes(case: tuple[str, Any], seed: int) -> None:
    name, schema = case
    maker = _MAKERS.get(name)
    if maker is None:
        maker = _MAKERS[name] = ValueMaker(schema)
    value = maker.make(seed)
    assert compile_schema(schema)(value) is None, (name, value)
    orjson.dumps(value)
    assert sendable(value), (name, value)
