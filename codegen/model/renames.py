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
from .surfaces import PROMPT_PREFIX, TEMPLATE_PREFIX, SurfaceParam, build_surfaces

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
    out += _surface_renames(loaded, spec, methods.values())
    return out


def _position(entries: Sequence[Any], entry: Any) -> int:
    return next((i for i, candidate in enumerate(entries) if candidate is entry), 0)


def _surface_renames(loaded: LoadedSpec, spec: ValidatedSpec, taken: Any) -> list[Diagnostic]:
    """Resource templates and prompts whose method, or a parameter, is not the plain name."""
    surfaces = build_surfaces(spec, taken=taken)
    out: list[Diagnostic] = []
    reserved = naming.method_reserved_names(taken)

    def warn(pointer: str, what: str, wire: str, python: str, why: str) -> None:
        message = f"{what} {wire!r} is {python!r} in Python: {why} (the wire name is sent unchanged)"
        out.append(Diagnostic(spec.source, None, pointer, RULE, message, "warning"))

    def method(pointer: str, what: str, wire: str, prefix: str, python: str) -> None:
        plain = _plain(f"{prefix} {wire}", None)
        if python == plain:
            return
        if plain in naming.runtime_member_names():
            why = f"{plain!r} is an attribute of the runtime's Client"
        elif plain in reserved:
            why = f"{plain!r} is taken (a tool method, a keyword or builtin, or a generated name)"
        else:
            why = "another resource template or prompt maps to the same name"
        warn(pointer, what, wire, python, why)

    def params(pointer: str, what: str, entries: Sequence[SurfaceParam]) -> None:
        for param in entries:
            plain = _plain(param.wire_name, "arg")
            if param.name == plain:
                continue
            if plain in naming.KEYWORDS:
                why = f"{plain!r} is a Python keyword"
            elif plain == "self":
                why = "'self' is the method's own parameter"
            else:
                why = "the name it would take is already used"
            warn(pointer, what, param.wire_name, param.name, why)

    for template, source in zip(surfaces.templates, spec.resource_templates, strict=True):
        at = f"/resourceTemplates/{_position(loaded.resource_templates, source)}"
        method(f"{at}/name", "resource template", template.wire_name, TEMPLATE_PREFIX, template.method_name)
        params(f"{at}/uriTemplate", "template variable", template.params)
    for prompt, source in zip(surfaces.prompts, spec.prompts, strict=True):
        at = f"/prompts/{_position(loaded.prompts, source)}"
        method(f"{at}/name", "prompt", prompt.wire_name, PROMPT_PREFIX, prompt.method_name)
        params(f"{at}/arguments", "prompt argument", prompt.params)
    return out


def _method_reason(wire: str, final: str, by_plain: Mapping[str, Sequence[str]]) -> str | None:
    plain = _plain(wire, None)
    if final == plain:
        return None
    reasons = []
    if plain in naming.KEYWORDS or plain in naming.SOFT_KEYWORDS:
        reasons.append(f"{plain!r} is a Python keyword")
    elif plain in naming.CLIENT_ATTRIBUTE_NAMES:
        reasons.append(f"{plain!r} is an attribute of every generated Client (`client.{plain}`)")
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
