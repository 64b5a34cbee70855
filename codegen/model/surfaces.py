"""MODEL for what a server offers beside tools: resources, resource templates and prompts (issue 22).

`build_surfaces(spec, taken=...)` turns the validated wire objects into `SurfacesIR`, with every
Python name decided here (never in a template) by the same rules as tool methods (`naming.py`):

    resource template "Project Files"  file:///{path}{?rev}
        -> method `read_project_files(*, path: str, rev: str | Unset = UNSET)`
    prompt "code_review" (arguments: code required, language optional)
        -> method `prompt_code_review(*, code: str, language: str | Unset = UNSET)`
    resource "README" file:///README.md
        -> constant `README` (a `ResourceIR`; the URI itself is data, never code)

- Method names are `read_<template name>` and `prompt_<prompt name>` in snake_case: the prefix keeps
  them apart from tool methods, and the reserved set (keywords, builtins, every attribute of the
  runtime's Client / AsyncClient / ToolServer such as `read_resource`, the names a generated module
  defines, plus `taken`: the package's tool methods) gives a clashing name a trailing `_` or a
  numeric suffix, exactly as `naming.method_names` does for tools.
- Parameters are keyword-only, `str`-typed (template variables and prompt arguments are strings on
  the wire): required first, in source order, then the optional ones. A template variable is
  required unless it only appears in form-style query expressions (`{?x}`, `{&x}`), where RFC 6570
  leaves an undefined variable out. Names are snake_case, keywords get `_` (`class_`), `self` is
  `self_`, and two wire names that map to one are numbered (`assign_names`).
- Descriptions and titles are carried as data (untrusted text); the templates escape them.

This module is shared by client and server rendering; keep its API small: `build_surfaces`,
`SurfacesIR`, `ResourceIR`, `TemplateIR`, `PromptIR`, `SurfaceParam`, `TEMPLATE_PREFIX`,
`PROMPT_PREFIX`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mcpgen_runtime.uri_template import parse

from ..spec import ValidatedSpec
from . import naming

__all__ = [
    "PROMPT_PREFIX",
    "TEMPLATE_PREFIX",
    "PromptIR",
    "ResourceIR",
    "SurfaceParam",
    "SurfacesIR",
    "TemplateIR",
    "build_surfaces",
    "parameter_names",
]

TEMPLATE_PREFIX: Final = "read"
PROMPT_PREFIX: Final = "prompt"
_QUERY_OPERATORS: Final = frozenset({"?", "&"})
# Names a parameter may not take: the method's own `self`, and what a generated body names.
_PARAM_RESERVED: Final = frozenset({"self", "cls", "UNSET", "Unset", "_m"})


@dataclass(frozen=True, slots=True)
class SurfaceParam:
    """One keyword-only `str` parameter: a template variable or a prompt argument."""

    name: str  # Python parameter name (checked identifier)
    wire_name: str  # the variable / argument name on the wire
    required: bool
    description: str | None = None  # prompt arguments only (untrusted text)


@dataclass(frozen=True, slots=True)
class ResourceIR:
    """A static resource from `resources/list`."""

    uri: str
    wire_name: str  # its `name`
    constant_name: str  # UPPER_SNAKE name for the generated listing
    title: str | None
    description: str | None
    mime_type: str | None


@dataclass(frozen=True, slots=True)
class TemplateIR:
    """A resource template: one typed method that expands `uri_template` and reads the URI."""

    wire_name: str  # its `name`
    uri_template: str
    method_name: str
    params: tuple[SurfaceParam, ...]  # required first (source order), then optional
    title: str | None
    description: str | None
    mime_type: str | None


@dataclass(frozen=True, slots=True)
class PromptIR:
    """A prompt: one typed method that sends `prompts/get` with its arguments."""

    wire_name: str
    method_name: str
    params: tuple[SurfaceParam, ...]  # required first (source order), then optional
    title: str | None
    description: str | None


@dataclass(frozen=True, slots=True)
class SurfacesIR:
    resources: tuple[ResourceIR, ...] = ()
    templates: tuple[TemplateIR, ...] = ()
    prompts: tuple[PromptIR, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.resources or self.templates or self.prompts)

    @property
    def method_names(self) -> tuple[str, ...]:
        return tuple(t.method_name for t in self.templates) + tuple(p.method_name for p in self.prompts)


def _text(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    return value if isinstance(value, str) and value.strip() else None


def parameter_names(wire_names: Iterable[str]) -> Mapping[str, str]:
    """Wire name -> keyword-only parameter name (snake_case, keywords and `self` with `_`)."""
    reserved = naming.KEYWORDS | _PARAM_RESERVED
    return naming.assign_names(
        wire_names,
        lambda wire: naming.identifier(
            wire, style="snake", reserved=reserved, prefix="arg", soft_keywords=False
        ),
        taken=reserved,
    )


def _params(entries: Sequence[tuple[str, bool, str | None]]) -> tuple[SurfaceParam, ...]:
    names = parameter_names(wire for wire, _, _ in entries)
    params = [
        SurfaceParam(names[wire], wire, required, description) for wire, required, description in entries
    ]
    return tuple([p for p in params if p.required] + [p for p in params if not p.required])


def template_params(uri_template: str) -> tuple[SurfaceParam, ...]:
    """A template's variables as parameters. The template is valid (validation excludes the others:
    RES-03); one that is not raises `UriTemplateError` rather than yield a method without them."""
    parsed = parse(uri_template)
    entries = [
        (var.name, not parsed.operators(var.name) <= _QUERY_OPERATORS, None) for var in parsed.variables
    ]
    return _params(entries)


def prompt_params(prompt: Mapping[str, Any]) -> tuple[SurfaceParam, ...]:
    arguments = prompt.get("arguments")
    entries: list[tuple[str, bool, str | None]] = []
    seen: set[str] = set()
    for argument in arguments if isinstance(arguments, list) else ():
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
            continue
        if argument["name"] in seen:
            continue
        seen.add(argument["name"])
        entries.append((argument["name"], argument.get("required") is True, _text(argument, "description")))
    return _params(entries)


def _constant_name(wire: str) -> str:
    return naming.identifier(wire, style="snake", prefix="resource").upper()


def build_surfaces(spec: ValidatedSpec, *, taken: Iterable[str] = ()) -> SurfacesIR:
    """The validated resources, templates and prompts -> `SurfacesIR`.

    `taken`: method names the class already has (the tool methods) — a template or prompt method
    never takes one of them. Templates and prompts are named together, so a template "x" and a
    prompt "x" still get distinct methods (`read_x`, `prompt_x`)."""
    reserved = naming.method_reserved_names(taken)
    template_keys = {f"t{i}": t for i, t in enumerate(spec.resource_templates)}
    prompt_keys = {f"p{i}": p for i, p in enumerate(spec.prompts)}
    plain = {key: f"{TEMPLATE_PREFIX} {t.get('name', '')}" for key, t in template_keys.items()}
    plain |= {key: f"{PROMPT_PREFIX} {p.get('name', '')}" for key, p in prompt_keys.items()}
    # assign_names maps distinct wire texts: key each entry by its index, name it by its text
    by_text: dict[str, list[str]] = {}
    for key, text in plain.items():
        by_text.setdefault(text, []).append(key)
    keyed = {f"{text}\0{n}": key for text, keys in by_text.items() for n, key in enumerate(keys)}
    methods = naming.assign_names(
        keyed,
        lambda wire: naming.identifier(wire.split("\0")[0], style="snake", reserved=reserved),
        taken=reserved,
    )
    method_of = {key: methods[wire] for wire, key in keyed.items()}
    templates = tuple(
        TemplateIR(
            wire_name=str(t.get("name", "")),
            uri_template=str(t["uriTemplate"]),
            method_name=method_of[key],
            params=template_params(str(t["uriTemplate"])),
            title=_text(t, "title"),
            description=_text(t, "description"),
            mime_type=_text(t, "mimeType"),
        )
        for key, t in template_keys.items()
    )
    prompts = tuple(
        PromptIR(
            wire_name=str(p["name"]),
            method_name=method_of[key],
            params=prompt_params(p),
            title=_text(p, "title"),
            description=_text(p, "description"),
        )
        for key, p in prompt_keys.items()
    )
    uri_keys = {f"{r.get('name', '')}\0{i}": r for i, r in enumerate(spec.resources)}
    constants = naming.assign_names(
        uri_keys, lambda wire: _constant_name(wire.split("\0")[0]), taken=naming.GENERATED_MODULE_NAMES
    )
    resources = tuple(
        ResourceIR(
            uri=str(r["uri"]),
            wire_name=str(r.get("name", "")),
            constant_name=constants[key],
            title=_text(r, "title"),
            description=_text(r, "description"),
            mime_type=_text(r, "mimeType"),
        )
        for key, r in uri_keys.items()
    )
    return SurfacesIR(resources, templates, prompts)
