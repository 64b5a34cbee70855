"""One place that turns JSON text into Python values and back (orjson: the hot path)."""

from __future__ import annotations

from typing import Any

import orjson

JSONDecodeError = orjson.JSONDecodeError


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON; non-str keys and NaN are errors, as JSON requires."""
    return orjson.dumps(value)


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    return orjson.loads(data)
