"""refs: JSON value helpers shared by the validator, the loader and the model builder."""

from __future__ import annotations

import pytest

from codegen.model import fields as modelfields
from codegen.model import typebuild
from codegen.refs import describe, json_type


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1.0, "integer"),  # JSON Schema 2020-12 types numbers by value: a zero fractional part is an integer
        (-0.0, "integer"),
        (1e300, "integer"),
        (True, "boolean"),  # not "integer", though bool is an int in Python
        (False, "boolean"),
        (1, "integer"),
        (1.5, "number"),
        (float("inf"), "number"),
        (None, "null"),
        ("1", "string"),
        ([], "array"),
        ({}, "object"),
        ({1}, "set"),  # not JSON: the Python type name
    ],
)
def test_json_type(value: object, expected: str) -> None:
    assert json_type(value) == expected


def test_one_json_type_helper() -> None:
    """The model builder and the field rules use the same helper as messages do."""
    assert typebuild.json_type is json_type
    assert modelfields.json_type is json_type
    assert not hasattr(typebuild, "_json_type")


def test_describe_uses_the_json_type() -> None:
    assert describe(1.0) == "an integer 1.0"
    assert describe(1.5) == "a number 1.5"
    assert describe(True) == "a boolean True"
    assert describe(None) == "null"
