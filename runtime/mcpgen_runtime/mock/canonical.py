"""Canonical JSON bytes and the seeds the mock derives from them.

Everything the mock decides "at random" — a generated value, an injected failure, a latency —
is a function of the `--seed` and of canonical JSON of what it is about (tool name,
arguments, call number), so the same inputs give the same answers in any process.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

__all__ = ["canonical_json", "derive_seed", "unit_interval"]


def canonical_json(value: Any) -> bytes:
    """Compact JSON with sorted keys (orjson; raises `TypeError` for what is not JSON)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def derive_seed(*parts: Any) -> int:
    """A 64-bit integer from `parts` (JSON values), the same in every process and on every machine."""
    return int.from_bytes(hashlib.sha256(canonical_json(list(parts))).digest()[:8], "big")


def unit_interval(*parts: Any) -> float:
    """A number in [0, 1) from `parts`, as `derive_seed`."""
    return derive_seed(*parts) / 2**64
