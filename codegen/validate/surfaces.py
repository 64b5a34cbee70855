"""VALIDATE what a server offers beside tools: resources, resource templates and prompts (issue 22).

Each entry is checked like a tool (docs/RULES.md, groups RES and PROMPT, and mcpgen's own
`MCPGEN-SURFACE-SHAPE` / `MCPGEN-LIMITS`), every problem a `Diagnostic` with the RFC 6901 pointer
of the entry in the loaded document (`/resources/N`, `/resourceTemplates/N`, `/prompts/N`):

    MCPGEN-LIMITS          how many entries, how long names, URIs and descriptions may be
    MCPGEN-SURFACE-SHAPE   field types schema.ts gives (`uri`, `uriTemplate`, `name` strings; `title`,
                           `description`, `mimeType` strings; `arguments` an array of objects; ...)
    RES-02                 a resource URI is an RFC 3986 URI: a scheme, no whitespace or control
                           characters; each resource listed once (its URI identifies it)
    RES-03                 a `uriTemplate` is an RFC 6570 template (the position of the first problem
                           is named); each template listed once
    PROMPT-02              prompt names unique; argument names strings, unique within the prompt,
                           `required` a boolean

An entry with an error is excluded (with `skip_invalid`, its errors become warnings and generation
goes on). Names and descriptions are untrusted text: they reach messages only through repr(), and
generated code only as escaped data (model/surfaces.py derives every identifier).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from mcpgen_runtime.uri_template import UriTemplateError, parse

from ..errors import Diagnostic, Severity
from ..refs import describe


class Limits(Protocol):
    """The bounds of `run.Limits` these checks use."""

    @property
    def max_tools(self) -> int: ...

    @property
    def max_identifier(self) -> int: ...

    @property
    def max_description(self) -> int: ...

    @property
    def max_string(self) -> int: ...


__all__ = ["SurfaceChecks", "check_surfaces"]

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_BAD_URI_CHARS = re.compile(r"[\x00-\x20\x7f]")
_TEXT_MEMBERS: Final = ("title", "description", "mimeType")


@dataclass
class SurfaceChecks:
    """What checking the surfaces found: the usable entries and every diagnostic."""

    resources: list[dict[str, Any]] = field(default_factory=list)
    resource_templates: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


@dataclass
class _Entry:
    checks: SurfaceChecks
    source: str
    pointer: str
    data: Mapping[str, Any]
    what: str  # "resource 'x'"
    strict: bool
    errors: int = 0

    def add(self, pointer: str, rule: str, message: str, severity: Severity = "error") -> None:
        if severity == "error":
            self.errors += 1
        self.checks.diagnostics.append(
            Diagnostic(self.source, None, pointer, rule, f"{self.what}: {message}", severity)
        )

    def should(self, pointer: str, rule: str, message: str) -> None:
        self.add(pointer, rule, message, "error" if self.strict else "warning")


def _clip(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _string(entry: _Entry, member: str, limit: int, *, required: bool) -> str | None:
    pointer = f"{entry.pointer}/{member}"
    if member not in entry.data:
        if required:
            entry.add(
                entry.pointer, "MCPGEN-SURFACE-SHAPE", f"has no `{member}`; it needs a string `{member}`"
            )
        return None
    value = entry.data[member]
    if not isinstance(value, str):
        entry.add(pointer, "MCPGEN-SURFACE-SHAPE", f"`{member}` must be a string, found {describe(value)}")
        return None
    if len(value) > limit:
        entry.add(
            pointer, "MCPGEN-LIMITS", f"`{member}` has {len(value)} characters; at most {limit} are accepted"
        )
        return None
    return value


def _common(entry: _Entry, limits: Limits) -> None:
    for member in _TEXT_MEMBERS:
        _string(entry, member, limits.max_description, required=False)
    for member, kind, expected in (
        ("annotations", "an object", Mapping),
        ("icons", "an array", list),
        ("_meta", "an object", Mapping),
    ):
        if member in entry.data and not isinstance(entry.data[member], expected):
            entry.add(
                f"{entry.pointer}/{member}",
                "MCPGEN-SURFACE-SHAPE",
                f"`{member}` must be {kind}, found {describe(entry.data[member])}",
            )


def _check_uri(entry: _Entry, uri: str) -> None:
    pointer = f"{entry.pointer}/uri"
    if not _SCHEME.match(uri):
        entry.add(pointer, "RES-02", f'URI {_clip(uri)} has no scheme (RFC 3986: scheme ":" ...)')
    elif _BAD_URI_CHARS.search(uri):
        entry.add(pointer, "RES-02", f"URI {_clip(uri)} holds whitespace or control characters")


def _check_template(entry: _Entry, template: str) -> None:
    pointer = f"{entry.pointer}/uriTemplate"
    try:
        parsed = parse(template)
    except UriTemplateError as exc:
        entry.add(pointer, "RES-03", f"{_clip(template)} is not an RFC 6570 URI template: {exc}")
        return
    if not parsed.variables:
        entry.should(pointer, "RES-03", f"{_clip(template)} has no variables; list it as a resource instead")
    head = parsed.parts[0] if parsed.parts and isinstance(parsed.parts[0], str) else ""
    if not _SCHEME.match(head):
        entry.should(pointer, "RES-02", f"{_clip(template)} does not start with a URI scheme")


def _check_arguments(entry: _Entry, limits: Limits) -> None:
    if "arguments" not in entry.data:
        return
    arguments = entry.data["arguments"]
    pointer = f"{entry.pointer}/arguments"
    if not isinstance(arguments, list):
        entry.add(
            pointer, "MCPGEN-SURFACE-SHAPE", f"`arguments` must be an array, found {describe(arguments)}"
        )
        return
    seen: dict[str, str] = {}
    for index, argument in enumerate(arguments):
        at = f"{pointer}/{index}"
        if not isinstance(argument, Mapping):
            entry.add(
                at, "MCPGEN-SURFACE-SHAPE", f"an argument must be an object, found {describe(argument)}"
            )
            continue
        sub = _Entry(entry.checks, entry.source, at, argument, entry.what, entry.strict)
        name = _string(sub, "name", limits.max_identifier, required=True)
        for member in ("title", "description"):
            _string(sub, member, limits.max_description, required=False)
        if "required" in argument and not isinstance(argument["required"], bool):
            sub.add(
                f"{at}/required",
                "MCPGEN-SURFACE-SHAPE",
                f"`required` must be a boolean, found {describe(argument['required'])}",
            )
        entry.errors += sub.errors
        if name is None:
            continue
        if not name:
            entry.add(f"{at}/name", "PROMPT-02", "an argument name is empty")
        elif name in seen:
            entry.add(
                f"{at}/name",
                "PROMPT-02",
                f"argument {_clip(name)} is listed twice (first at {seen[name]}); "
                "argument names must be unique",
            )
        else:
            seen[name] = f"{at}/name"


def _run(
    checks: SurfaceChecks,
    entries: list[dict[str, Any]],
    source: str,
    prefix: str,
    kind: str,
    key_member: str,
    duplicate_rule: str,
    check: Callable[[_Entry, str], None],
    kept: list[dict[str, Any]],
    *,
    strict: bool,
    limits: Limits,
    skip_invalid: bool,
) -> None:
    if len(entries) > limits.max_tools:
        checks.diagnostics.append(
            Diagnostic(
                source,
                None,
                prefix,
                "MCPGEN-LIMITS",
                f"{len(entries)} {kind}s listed; at most {limits.max_tools} are supported",
            )
        )
        return
    first: dict[str, str] = {}
    for index, data in enumerate(entries):
        pointer = f"{prefix}/{index}"
        name = data.get("name") if isinstance(data, Mapping) else None
        what = f"{kind} {_clip(name)}" if isinstance(name, str) else kind
        entry = _Entry(checks, source, pointer, data, what, strict)
        start = len(checks.diagnostics)
        if not isinstance(data, Mapping):
            entry.add(pointer, "MCPGEN-SURFACE-SHAPE", f"expected a {kind} object, found {describe(data)}")
        else:
            limit = limits.max_string if key_member != "name" else limits.max_identifier
            key = _string(entry, key_member, limit, required=True)
            if key_member != "name":
                _string(entry, "name", limits.max_identifier, required=True)
            _common(entry, limits)
            if key is not None:
                check(entry, key)
                if key in first:
                    entry.add(
                        f"{pointer}/{key_member}",
                        duplicate_rule,
                        f"{_clip(key)} is listed twice (first at {first[key]}); each {kind} is listed once",
                    )
                else:
                    first[key] = f"{pointer}/{key_member}"
        if entry.errors and skip_invalid:
            checks.diagnostics[start:] = [
                Diagnostic(
                    d.source,
                    d.tool,
                    d.pointer,
                    d.rule,
                    f"{d.message}; the {kind} is skipped (--skip-invalid)",
                    "warning",
                )
                if d.severity == "error"
                else d
                for d in checks.diagnostics[start:]
            ]
        if not entry.errors:
            kept.append(data)


def check_surfaces(
    resources: list[dict[str, Any]],
    resource_templates: list[dict[str, Any]],
    prompts: list[dict[str, Any]],
    *,
    source: str,
    limits: Limits,
    strict: bool = False,
    skip_invalid: bool = False,
) -> SurfaceChecks:
    """Check every resource, resource template and prompt; keep those without errors."""
    checks = SurfaceChecks()
    options: dict[str, Any] = {"strict": strict, "limits": limits, "skip_invalid": skip_invalid}
    _run(
        checks,
        resources,
        source,
        "/resources",
        "resource",
        "uri",
        "RES-02",
        _check_uri,
        checks.resources,
        **options,
    )
    _run(
        checks,
        resource_templates,
        source,
        "/resourceTemplates",
        "resource template",
        "uriTemplate",
        "RES-03",
        _check_template,
        checks.resource_templates,
        **options,
    )

    def prompt_check(entry: _Entry, name: str) -> None:
        if not name:
            entry.add(
                f"{entry.pointer}/name", "PROMPT-02", "the prompt name is empty: no request could name it"
            )
        _check_arguments(entry, limits)

    _run(
        checks,
        prompts,
        source,
        "/prompts",
        "prompt",
        "name",
        "PROMPT-02",
        prompt_check,
        checks.prompts,
        **options,
    )
    return checks
