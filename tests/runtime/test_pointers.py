"""mcpgen_runtime.pointers.first_error: a pydantic error as (JSON pointer into the value, message)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, RootModel, ValidationError

from mcpgen_runtime.pointers import first_error


class Numbers(BaseModel):
    a: int | float
    items: list[int | float] = []


class Point(BaseModel):
    x: int


class Points(RootModel[list[Point]]):
    pass


def _error(model: type[BaseModel], value: Any) -> tuple[str, str]:
    with pytest.raises(ValidationError) as info:
        model.model_validate(value)
    return first_error(info.value, value)


@pytest.mark.parametrize(
    ("model", "value", "pointer"),
    [
        (Numbers, {"a": "two"}, "/a"),  # pydantic's loc is ('a', 'int'): union members are not in the value
        (Numbers, {"a": 1, "items": [1, "x"]}, "/items/1"),
        (Numbers, {}, "/a"),  # missing: where it belongs
        (Points, [{"x": 1}, {"x": "no"}], "/1/x"),
        (Points, "not a list", "/"),  # the value itself
    ],
)
def test_pointer_indexes_into_the_value(model: type[BaseModel], value: Any, pointer: str) -> None:
    assert _error(model, value)[0] == pointer


def test_message_is_the_first_error_and_counts_the_rest() -> None:
    _, message = _error(Numbers, {"a": "two"})
    assert (
        message == "Input should be a valid integer, unable to parse string as an integer (and 1 more)"
    )  # int | float
    assert (
        _error(Points, [{"x": "no"}])[1]
        == "Input should be a valid integer, unable to parse string as an integer"
    )
