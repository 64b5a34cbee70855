"""Pinned tool definitions: the one canonical form and digest of a tool, and drift against it.

A generated client keeps a digest of each tool it was generated for (tools.json's `pins`); the
generator writes them with `digest` and the client compares the server's listing with `check`, so
both sides always agree on what counts. What is pinned is what means the same in every era:
`name`, `title`, `description`, `inputSchema`, `outputSchema`, `annotations`. Never `_meta`,
`execution` or anything else a server may add. The canonical form: those fields, a null or absent
field alike, `annotations: {}` as none, an integral float as its integer (a server written in
another language sends `1` for `1.0`), keys sorted, no whitespace, ASCII.

A legacy server lists a tool whose output is not an object without `outputSchema` (those revisions
type it as an object: protocol/legacy/serving.py), so in the legacy era that absence is no change.

What a server lists is bounded before it gets here (the response size, the page count); a report
still names at most `MAX_POINTERS` changes per tool, and its message at most `MAX_NAMED` tools.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "MAX_NAMED",
    "MAX_POINTERS",
    "PINNED_FIELDS",
    "DriftReport",
    "ToolDrift",
    "canonical",
    "check",
    "digest",
    "pin_all",
    "pinned",
]

PINNED_FIELDS: Final = ("name", "title", "description", "inputSchema", "outputSchema", "annotations")
MAX_POINTERS: Final = 20  # changes named per tool; the rest are counted
MAX_NAMED: Final = 20  # tools named in a report's message; the rest are counted
_NAME_CHARS: Final = 60  # a tool name as a message shows it


def _plain(value: Any) -> Any:
    """`value` with every integral float as its integer (JSON does not tell 1 from 1.0)."""
    if type(value) is float:
        return int(value) if value.is_integer() else value
    if type(value) is dict:
        return {key: _plain(item) for key, item in value.items()}
    if type(value) is list:
        return [_plain(item) for item in value]
    return value


def pinned(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The pinned fields of a tool definition, in canonical form (see the module docstring)."""
    out: dict[str, Any] = {}
    for field in PINNED_FIELDS:
        value = definition.get(field)
        if value is None or (field == "annotations" and value == {}):
            continue
        out[field] = _plain(value)
    return out


def canonical(definition: Mapping[str, Any]) -> bytes:
    """The canonical JSON of a tool's pinned fields: what `digest` hashes. The standard library's
    encoder (ASCII, keys sorted, no whitespace): schemas may hold integers past 64 bits."""
    return json.dumps(pinned(definition), sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def digest(definition: Mapping[str, Any]) -> str:
    """`sha256:` and the hex SHA-256 of `canonical(definition)`: a tool's pin."""
    return "sha256:" + hashlib.sha256(canonical(definition)).hexdigest()


def pin_all(definitions: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Tool name -> pin, for the generator's tools.json."""
    return {str(definition["name"]): digest(definition) for definition in definitions}


@dataclass(frozen=True, slots=True)
class ToolDrift:
    """One pinned tool that changed (`pointers`: where, at most MAX_POINTERS; `more`: how many
    others) or that the server no longer lists (`missing`)."""

    tool: str
    pointers: tuple[str, ...] = ()
    more: int = 0
    missing: bool = False

    def describe(self) -> str:
        name = repr(self.tool[:_NAME_CHARS] + ("…" if len(self.tool) > _NAME_CHARS else ""))
        if self.missing:
            return f"{name}: no longer listed by the server"
        where = ", ".join(pointer or "/" for pointer in self.pointers)
        return f"{name}: changed at {where}" + (f" and {self.more} more" if self.more else "")


@dataclass(frozen=True, slots=True)
class DriftReport:
    """What `check` found: each pinned tool that changed or went missing (empty: no drift), and
    how many pinned tools were compared."""

    drifts: tuple[ToolDrift, ...]
    pinned: int

    def __bool__(self) -> bool:
        return bool(self.drifts)

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(drift.tool for drift in self.drifts)

    def describe(self) -> str:
        if not self.drifts:
            return f"no drift: the server's definitions of the {self.pinned} pinned tools are unchanged"
        lines = [drift.describe() for drift in self.drifts[:MAX_NAMED]]
        if len(self.drifts) > MAX_NAMED:
            lines.append(f"and {len(self.drifts) - MAX_NAMED} more tools")
        return f"{len(self.drifts)} of {self.pinned} pinned tools drifted: " + "; ".join(lines)


def check(
    pins: Mapping[str, str],
    definition_of: Callable[[str], Mapping[str, Any] | None],
    listed: Iterable[Mapping[str, Any]],
    *,
    legacy: bool = False,
) -> DriftReport:
    """Compare the server's `listed` definitions with `pins`; `definition_of(name)` is the pinned
    definition (for the pointers of a change). Tools without a pin are ignored; `legacy`: the
    listing came from a legacy server (no `outputSchema` where it is not an object)."""
    by_name = {definition.get("name"): definition for definition in listed if definition.get("name") in pins}
    drifts: list[ToolDrift] = []
    for name, pin in pins.items():
        current = by_name.get(name)
        if current is None:
            drifts.append(ToolDrift(name, missing=True))
            continue
        original = definition_of(name)
        if legacy and "outputSchema" not in current and original is not None:
            schema = original.get("outputSchema")
            if schema is not None and not (type(schema) is dict and schema.get("type") == "object"):
                current = {**current, "outputSchema": schema}  # what a legacy server leaves out
        if digest(current) == pin:
            continue
        pointers = _changes(pinned(original), pinned(current)) if original is not None else [""]
        drifts.append(ToolDrift(name, tuple(pointers[:MAX_POINTERS]), max(len(pointers) - MAX_POINTERS, 0)))
    return DriftReport(tuple(drifts), len(pins))


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _same_scalar(a: Any, b: Any) -> bool:
    if type(a) is bool or type(b) is bool:  # True == 1 in Python, not in JSON
        return a is b
    return bool(a == b)


def _changes(old: Any, new: Any) -> list[str]:
    """The JSON pointers where `new` differs from `old` (an added, removed or changed member or
    item; a container of another kind at its own pointer); walked without recursion."""
    out: list[str] = []
    stack: list[tuple[str, Any, Any]] = [("", old, new)]
    while stack:
        pointer, a, b = stack.pop()
        if type(a) is dict and type(b) is dict:
            for key in sorted(set(a) | set(b), reverse=True):  # popped in key order
                here = f"{pointer}/{_escape(key)}"
                if key not in a or key not in b:
                    stack.append((here, a.get(key, _MISSING), b.get(key, _MISSING)))
                else:
                    stack.append((here, a[key], b[key]))
        elif type(a) is list and type(b) is list:
            for index in reversed(range(max(len(a), len(b)))):
                stack.append(
                    (
                        f"{pointer}/{index}",
                        a[index] if index < len(a) else _MISSING,
                        b[index] if index < len(b) else _MISSING,
                    )
                )
        elif type(a) in (dict, list) or type(b) in (dict, list) or not _same_scalar(a, b):
            out.append(pointer)
    return out


_MISSING: Final = object()
