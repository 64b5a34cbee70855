"""The client's constructor options that need more than a type: `clientCapabilities` from the
callbacks given (`declared_capabilities`), and `max_time` (`check_max_time`)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel

if TYPE_CHECKING:
    pass

M = TypeVar("M", bound=BaseModel)

__all__ = ["ElicitationMode", "check_max_time", "declared_capabilities"]

ElicitationMode = Literal["form", "url"]


def declared_capabilities(
    explicit: Mapping[str, Any] | None,
    *,
    elicit: bool,
    sample: bool,
    roots: bool,
    elicitation_modes: Collection[ElicitationMode],
    sampling_tools: bool,
) -> dict[str, Any]:
    """`clientCapabilities` for the callbacks a client has (IN-01, IN-16, IN-22), plus `explicit`
    (which wins: e.g. `{"elicitation": {}}` to be asked without a callback and resume by hand)."""
    modes = list(dict.fromkeys(elicitation_modes))
    if not modes or any(mode not in ("form", "url") for mode in modes):
        raise ValueError(f"elicitation_modes must name 'form' and/or 'url', got {elicitation_modes!r}")
    capabilities: dict[str, Any] = {}
    if elicit:
        capabilities["elicitation"] = {mode: {} for mode in modes}
    if sample:
        capabilities["sampling"] = {"tools": {}} if sampling_tools else {}
    if roots:
        capabilities["roots"] = {}
    capabilities.update(explicit or {})
    return capabilities


def check_max_time(value: float | None) -> float | None:
    """`max_time` as given: None, or a positive finite number of seconds (CANCEL-06: a maximum)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ValueError(f"max_time must be a positive finite number of seconds or None, not {value!r}")
    return float(value)
