"""tools.json's own encoder writes exactly what `json.dumps(..., indent=2, ensure_ascii=True)` does."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from codegen.errors import InternalGeneratorError
from codegen.render import toolsjson


def _encoded(value: Any) -> str:
    out: list[str] = []
    toolsjson._json_lines(value, out)
    return "".join(out)


def _random_value(rng: random.Random, depth: int = 0) -> Any:
    choice = rng.randint(0, 9 if depth < 5 else 5)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([True, False])
    if choice == 2:
        return rng.randint(-(10**20), 10**20)
    if choice == 3:
        return rng.choice([0.1, -2.5e300, 1e-7, 3.0, 0.0, -0.0])
    if choice == 4:
        return "".join(rng.choice('ab"\\\n\té€😀\x00\u2028') for _ in range(rng.randint(0, 8)))
    if choice == 5:
        return rng.choice([[], {}])
    if choice in (6, 7):
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = ["".join(rng.choice('ké"😀') for _ in range(rng.randint(0, 3))) + str(i) for i in range(4)]
    return {key: _random_value(rng, depth + 1) for key in keys[: rng.randint(0, 4)]}


def test_encoder_writes_what_json_dumps_writes() -> None:
    rng = random.Random(1)
    for _ in range(2000):
        value = _random_value(rng)
        assert _encoded(value) == json.dumps(value, indent=2, ensure_ascii=True, allow_nan=False)


def test_lone_surrogates_become_replacement_characters() -> None:
    assert _encoded({"\ud800": ["x\udfff"]}) == '{\n  "\\ufffd": [\n    "x\\ufffd"\n  ]\n}'


@pytest.mark.parametrize(
    "value", [{"a": float("nan")}, [float("inf")], {1: 2}, {"a": (1,)}, [set()], {"a": {"b": [1, {2: 3}]}}]
)
def test_encoder_refuses_what_is_not_json(value: Any) -> None:
    with pytest.raises(InternalGeneratorError):
        _encoded(value)
