"""Which wire names the generated code spells differently, and why: one warning per renamed tool
method or method parameter, so `mcpgen validate` / `generate` never rename in silence.

A name is *renamed* when the Python name differs from the plain transliteration of the wire name
(`getUser` -> `get_user` is the plain one; `close` -> `close_` is a rename): a keyword, an attribute
of the runtime base class the generated class inherits, a builtin, a pydantic `BaseModel` member,
or a clash with another name of the same scope. The names are computed by the same functions the
model stage uses (`naming.method_names`, `naming.field_names`, the parameter rule of build.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import Diagnostic
from ..spec import LoadedSpec, ValidatedSpec
from . import naming
from .build import _param_name

__all__ = ["RULE", "rename_warnings"]

RULE = "MCPGEN-RENAMED"


def rename_warnings(loaded: LoadedSpec, spec: ValidatedSpec) -> list[Diagnostic]:
    """A warning per tool or top-level input property whose Python name is not its plain one."""
    pointers = {
        tool.get("name"): loaded.tool_pointer(index)
        for index, tool in enumerate(loaded.tools)
        if isinstance(tool, Mapping)
    }
    wire_names = [str(tool["name"]) for tool in spec.tools]
    methods = naming.method_names(wire_names)
    by_plain: dict[str, list[str]] = {}  # plain name -> the wire names that map to it, in order
    for wire in wire_names:
        by_plain.setdefault(_plain(wire, None), []).append(wire)
    out: list[Diagnostic] = []

    def warn(tool: str, pointer: str, what: str, wire: str, python: str, why: str) -> None:
        message = f"{what} {wire!r} is {python!r} in Python: {why} (the wire name is sent unchanged)"
        out.append(Diagnostic(spec.source, tool, pointer, RULE, message, "warning"))

    for tool in spec.tools:
        name = str(tool["name"])
        at = pointers.get(name, "")
        why = _method_reason(name, methods[name], by_plain)
        if why is not None:
            warn(name, f"{at}/name", "tool", name, methods[name], why)
        for wire, python, why in _param_renames(tool.get("inputSchema")):
            warn(name, f"{at}/inputSchema/properties/{_escape(wire)}", "parameter", wire, python, why)
    return out


def _method_reason(wire: str, final: str, by_plain: Mapping[str, Sequence[str]]) -> str | None:
    plain = _plain(wire, None)
    if final == plain:
        return None
    reasons = []
    if plain in naming.KEYWORDS or plain in naming.SOFT_KEYWORDS:
        reasons.append(f"{plain!r} is a Python keyword")
    elif plain in naming.runtime_member_names():
        reasons.append(f"{plain!r} is an attribute of the runtime's Client / ToolServer")
    elif plain in naming.GENERATED_MODULE_NAMES:
        reasons.append(f"{plain!r} is a name the generated modules use")
    elif plain in naming.BUILTIN_NAMES:
        reasons.append(f"{plain!r} is a Python builtin")
    others = sorted(other for other in by_plain.get(plain, ()) if other != wire)
    if others:
        reasons.append(f"{', '.join(map(repr, others))} also maps to {plain!r}")
    elif not reasons or final != naming.identifier(wire, reserved=naming.method_reserved_names()):
        reasons.append("the name it would take is already used")
    return "; ".join(reasons)


def _param_renames(schema: Any) -> list[tuple[str, str, str]]:
    """(wire, Python parameter, why) for the top-level properties of an object input schema."""
    if not isinstance(schema, Mapping) or not isinstance(schema.get("properties"), Mapping):
        return []
    wires = [str(key) for key in schema["properties"]]
    required = schema.get("required")
    if isinstance(required, list):
        wires += [str(key) for key in required if isinstance(key, str) and key not in wires]
    fields = naming.field_names(wires)
    used: set[str] = set()
    params = {wire: _param_name(fields[wire], used) for wire in wires}
    plain = {wire: _plain(wire, "field") for wire in wires}
    out = []
    for wire in wires:
        if params[wire] == plain[wire]:
            continue
        base = plain[wire]
        if base in naming.KEYWORDS:
            why = f"{base!r} is a Python keyword"
        elif base == "self":
            why = "'self' is the method's own parameter"
        elif base in naming.field_reserved_names():
            why = f"{base!r} is a member of pydantic's BaseModel or a type the models use"
        elif base.startswith(("model_validate", "model_dump")):
            why = "pydantic reserves names starting model_validate / model_dump"
        else:
            others = sorted(other for other in wires if other != wire and plain[other] == base)
            why = (
                f"{', '.join(map(repr, others))} also maps to {base!r}"
                if others
                else "the name it would take is already used"
            )
        out.append((wire, params[wire], why))
    return out


def _plain(wire: str, prefix: str | None) -> str:
    """The plain transliteration (`getUser` -> `get_user`), before any reserved name or clash."""
    return naming._unreserved_identifier(wire, "snake", prefix)


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")
