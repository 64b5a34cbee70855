"""Generated-method arguments → the wire `arguments` object, without I/O (the client's half of SEC-01).

`wire_arguments` turns what a generated method passes into the JSON it stands for: a parameter
left at `UNSET` is left out, `None` is null, model instances are the fields they were given
(`by_alias`, `exclude_unset`), tuples are arrays; what JSON cannot carry (NaN, a set, a key that
is not a string) is refused with the JSON pointer rather than sent as something else. The caller
(`ClientCore.prepare_arguments`) then checks that object against the tool's inputSchema and
sends it exactly as it is; `model_arguments` is the fallback when the schema cannot be compiled:
the (strict) input model validates what was given and its dump is sent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from ..errors import ToolArgumentsError
from ..pointers import first_error
from ..types import UNSET

__all__ = ["model_arguments", "wire_arguments"]


def wire_arguments(name: str, arguments: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    """The JSON object the arguments of tool `name` stand for (`ToolArgumentsError` when some
    value has no JSON form)."""
    if isinstance(arguments, BaseModel):
        dumped: dict[str, Any] = arguments.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return dumped
    payload: dict[str, Any] = {}
    for key, value in arguments.items():
        if value is UNSET:
            continue
        try:
            payload[key] = value if type(value) in _PLAIN else _json_value(value)
        except _NotJson as exc:
            exc.path.append(key)
            raise ToolArgumentsError(name, exc.message, pointer=exc.pointer()) from None
    return payload


def model_arguments(
    name: str,
    arguments: Mapping[str, Any] | BaseModel,
    input_model: type[BaseModel],
    payload: Mapping[str, Any],
) -> dict[str, Any]:
    """The arguments validated by `input_model` and dumped for the wire (`payload`, their JSON
    form, is where an error's pointer points)."""
    given = (
        arguments
        if isinstance(arguments, BaseModel)
        else {key: value for key, value in arguments.items() if value is not UNSET}
    )
    try:
        model = input_model.model_validate(given)
    except ValidationError as exc:
        pointer, message = first_error(exc, payload)
        raise ToolArgumentsError(name, message, pointer=pointer) from exc
    dumped: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return dumped


class _NotJson(Exception):
    """A value JSON cannot carry; `path` is collected while the walk unwinds (innermost first)."""

    def __init__(self, message: str) -> None:
        self.message = message
        self.path: list[str | int] = []

    def pointer(self) -> str:
        return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in reversed(self.path))


_PLAIN: Final = frozenset({str, int, bool, type(None)})


def _json_value(value: Any) -> Any:
    """An argument value as the JSON data it stands for: models as the fields they were given,
    tuples as arrays; what JSON cannot carry (NaN, a set, a non-string key) is refused rather
    than sent as something else."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise _NotJson(f"{value!r} is not a JSON number")
        return value
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    if isinstance(value, list | tuple):
        items = []
        for index, item in enumerate(value):
            try:
                items.append(_json_value(item))
            except _NotJson as exc:
                exc.path.append(index)
                raise
        return items
    if isinstance(value, dict):
        members: dict[str, Any] = {}
        for name, item in value.items():
            if not isinstance(name, str):
                raise _NotJson(f"object keys must be strings, not {type(name).__name__}")
            try:
                members[name] = _json_value(item)
            except _NotJson as exc:
                exc.path.append(name)
                raise
        return members
    if isinstance(value, str | int):  # str and int subclasses (enum members, ...) are JSON as they are
        return value
    raise _NotJson(f"a {kind.__name__} is not a JSON value")
