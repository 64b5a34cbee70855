"""VALIDATE: decide which loaded tools the generator may use, and say why the others fail.

Every problem becomes a `Diagnostic` naming the source, the tool (wire name), the RFC 6901
pointer from the document root and a rule ID from docs/RULES.md (or an
`MCPGEN-*` rule for checks of our own). All diagnostics are collected before failing;
`SpecValidationError` carries every one of them.

Rules, in the order they are checked per tool:

    SCHEMA-11, MCPGEN-LIMITS   bounds first (depth, size, string lengths, totals across tools), so
                               every later walk is cheap; see `Limits`
    MCPGEN-TOOL-SHAPE          field types schema.ts requires (name, title, description, ...;
                               `execution.taskSupport`: "forbidden", "optional" or "required")
    TOOLS-11/13/14             name length and characters: warnings, errors under `strict`
    TOOLS-15                   duplicate names: always errors
    BASE-27/29                 `_meta` key format: warnings, errors under `strict` (data only, never code)
    TOOLS-07/08                inputSchema is an object with `type: "object"` at the root
    SCHEMA-01/02/06            dialect: 2020-12 by default, draft-07 on request, anything else refused
    SCHEMA-05/07               each subschema is valid against its dialect's meta-schema (flattened)
    SCHEMA-07/08/10            every `$ref` resolves inside its schema; other documents are never fetched
    SCHEMA-11                  no `$ref`/`allOf`/... loop that would never terminate
    XHDR-02..08 (-> XHDR-10)   invalid `x-mcp-header` annotations exclude the tool, with a warning each
                               (an error each under `strict`, as every exclusion: MCPGEN-EXCLUDED)
    XHDR-12                    annotated parameters that look secret: warnings, errors under `strict`
    SCHEMA-11                  no `$ref` whose target expands past `Limits.max_expanded` subschemas
    MCPGEN-REGEX               `pattern`/`patternProperties` that is not valid ECMA-262 (`u` flag):
                               the tool is excluded with a warning (an error under `strict`)
    MCPGEN-REGEX-UNENFORCED    a valid pattern the runtime cannot enforce faithfully: a warning, the
                               tool is kept and that pattern is not checked
    MCPGEN-REGEX-BACKTRACK     a pattern that can backtrack catastrophically in a backtracking engine:
                               a warning (mcpgen's runtime matches it in bounded time)
    MCPGEN-JSON                what LOAD noticed (a JSON-RPC envelope, numbers beyond double
                               range): its warnings are reported here, its unusable tools excluded
                               (errors under `strict`)
    MCPGEN-NO-TOOLS            a warning when every tool was excluded
    RES-02/03, PROMPT-02, ...  resources, resource templates and prompts: validate/surfaces.py

With `skip_invalid` (`--skip-invalid`), a tool with errors of its own is excluded instead: each of its
errors becomes a warning saying so, and the other tools go on. Problems of the whole document (too
many tools, totals across tools) still fail.

Nothing from the spec is executed or imported; server-supplied text appears in messages
only through repr().

The checks run in one pass per tool in the order above, each reading what the earlier ones
established (bounds first, so later walks are cheap). This module has the entry point, the bounds
and the tool's own fields; the schema checks are validate/schemas.py (the meta-schema check
validate/metaschema.py), a run's state validate/run.py.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, Final

from mcpgen_runtime.protocol import xheader

from ..errors import Diagnostic, SpecValidationError
from ..refs import (
    Link,
    describe,
    join_pointer,
    link_pointer,
)
from ..spec import LoadedSpec, ValidatedSpec
from .run import DEFAULT_LIMITS, Limits, Run, Tool, clip, shown_name
from .schemas import check_schemas
from .surfaces import check_surfaces

__all__ = ["validate"]

TOOL_NAME_MAX: Final = 128  # TOOLS-11
_TOOL_NAME_CHARS = re.compile(r"[A-Za-z0-9_.-]")  # TOOLS-13
_META_LABEL = re.compile(r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?\Z")  # BASE-27
_META_NAME = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?\Z")  # BASE-29
_SCHEMA_MEMBERS: Final = ("inputSchema", "outputSchema")
TASK_SUPPORT: Final = ("forbidden", "optional", "required")  # a tool's `execution.taskSupport`


# --------------------------------------------------------------------------- entry point


def validate(
    spec: LoadedSpec, *, strict: bool = False, limits: Limits = DEFAULT_LIMITS, skip_invalid: bool = False
) -> ValidatedSpec:
    """Check every tool; return the usable ones or raise SpecValidationError with all diagnostics.

    `skip_invalid`: a tool with errors is excluded and its errors become warnings (`_skip_tool`)."""
    run = Run(spec.source, strict, limits, subschemas_left=limits.max_total_subschemas)
    kept: list[dict[str, Any]] = []
    if len(spec.tools) > limits.max_tools:
        run.add(
            None,
            spec.pointer_prefix,
            "MCPGEN-LIMITS",
            f"{len(spec.tools)} tools listed; at most {limits.max_tools} are supported",
        )
        raise SpecValidationError(run.diagnostics)
    run.diagnostics.extend(spec.notes)  # what LOAD noticed (warnings, each naming its pointer)
    first_by_name: dict[str, str] = {}
    total_values = 0
    for index, data in enumerate(spec.tools):
        pointer = spec.tool_pointer(index)
        if index in spec.unusable:  # LOAD said why (a number no parser here can hold)
            if strict:
                _strict_notes(run, pointer)
            continue
        if not isinstance(data, dict):
            run.add(None, pointer, "MCPGEN-TOOL-SHAPE", f"expected a tool object, found {describe(data)}")
            continue
        name = data.get("name")
        shown = (
            (name if len(name) <= limits.max_identifier else shown_name(name))
            if isinstance(name, str)
            else None
        )
        tool = Tool(index, pointer, data, shown)
        first = len(run.diagnostics)
        bounded, values = _check_bounds(run, tool)
        total_values += values
        if total_values > limits.max_total_values:
            run.add(
                None,
                pointer,
                "MCPGEN-LIMITS",
                f"the tools hold more than {limits.max_total_values} JSON values in total; refusing to go on",
            )
            raise SpecValidationError(run.diagnostics)
        _check_fields(run, tool, first_by_name)
        if bounded:
            check_schemas(run, tool)
            if run.exhausted:
                raise SpecValidationError(run.diagnostics)
        if skip_invalid:
            _skip_tool(run, tool, first)
        if not tool.excluded:
            kept.append(data)
    surfaces = check_surfaces(
        spec.resources,
        spec.resource_templates,
        spec.prompts,
        source=spec.source,
        limits=limits,
        strict=strict,
        skip_invalid=skip_invalid,
    )
    run.diagnostics.extend(surfaces.diagnostics)
    if not any(d.severity == "error" for d in run.diagnostics) and spec.tools and not kept:
        run.add(
            None,
            spec.pointer_prefix,
            "MCPGEN-NO-TOOLS",
            "no usable tools remain; the bindings would be empty",
            "warning",
        )
    if any(d.severity == "error" for d in run.diagnostics):
        raise SpecValidationError(run.diagnostics)
    warnings = sorted(run.diagnostics, key=Diagnostic.sort_key)
    return ValidatedSpec(
        source=spec.source,
        tools=kept,
        digest=spec.digest,
        warnings=warnings,
        resources=surfaces.resources,
        resource_templates=surfaces.resource_templates,
        prompts=surfaces.prompts,
        filters=spec.filters,
    )


def _strict_notes(run: Run, pointer: str) -> None:
    """`strict`: LOAD's warnings about the unusable tool at `pointer` become errors (MCPGEN-EXCLUDED)."""
    run.diagnostics = [
        dataclasses.replace(
            d,
            severity="error",
            message=f"{d.message} (--strict: an excluded tool is an error, MCPGEN-EXCLUDED)",
        )
        if d.severity == "warning" and (d.pointer == pointer or d.pointer.startswith(pointer + "/"))
        else d
        for d in run.diagnostics
    ]


def _skip_tool(run: Run, tool: Tool, first: int) -> None:
    """`--skip-invalid`: the errors found in this tool (diagnostics from `first` on) exclude it and
    are reported as warnings, each with the tool, the pointer and the rule it breaks."""
    found = run.diagnostics[first:]
    if not any(d.severity == "error" for d in found):
        return
    tool.excluded = True
    run.diagnostics[first:] = [
        dataclasses.replace(
            d, severity="warning", message=f"{d.message}; the tool is skipped (--skip-invalid)"
        )
        if d.severity == "error"
        else d
        for d in found
    ]


# --------------------------------------------------------------------------- bounds


def _limit_rule(pointer: str, tool_pointer: str) -> str:
    member = pointer[len(tool_pointer) :].split("/", 2)[1:2]
    return "SCHEMA-11" if member and member[0] in _SCHEMA_MEMBERS else "MCPGEN-LIMITS"


def _check_bounds(run: Run, tool: Tool) -> tuple[bool, int]:
    """Depth, size and string lengths of the whole tool object, walked iteratively.

    Depth counts objects/arrays: a schema's root is level 0, so `max_depth` levels of
    containers may sit below it. Returns (walk completed within the structural bounds, values
    seen). String-length problems are reported but do not stop the walk; depth and size do.
    """
    limits = run.limits
    max_depth = limits.max_depth + 1  # the tool object is level 0, its schemas level 1
    max_key, max_text, max_string = limits.max_identifier, limits.max_description, limits.max_string
    count = 1
    problems: list[tuple[Link, str]] = []
    header_keyword, header_member = False, xheader.KEYWORD
    stack: list[tuple[Any, int, Link]] = [(tool.data, 0, None)]
    pop, push = stack.pop, stack.append
    while stack:
        value, depth, link = pop()
        if depth > max_depth:
            where = link_pointer(link, tool.pointer)
            run.add(
                tool.name,
                where,
                _limit_rule(where, tool.pointer),
                f"nested more than {limits.max_depth} levels deep; deeper schemas are refused "
                "so that validation and code generation stay bounded",
            )
            return False, count
        count += len(value)
        if count > limits.max_values:
            where = link_pointer(link, tool.pointer)
            run.add(
                tool.name,
                tool.pointer,
                _limit_rule(where, tool.pointer),
                f"the tool holds more than {limits.max_values} JSON values "
                f"(limit reached at {where or '/'}); "
                "refusing to process a definition this large",
            )
            return False, count
        depth += 1
        if isinstance(value, dict):
            header_keyword = header_keyword or header_member in value
            if value and len(problems) < 10:
                longest = max(map(len, value))
                if longest > max_key:
                    problems.append((link, f"has a member name of {longest} characters (at most {max_key})"))
            for key, child in value.items():
                if isinstance(child, (dict, list)):
                    push((child, depth, (link, key)))
                elif isinstance(child, str):
                    cap = max_text if key in ("description", "title") else max_string
                    if len(child) > cap and len(problems) < 10:
                        problems.append(
                            (
                                (link, key),
                                f"string of {len(child)} characters is longer than the limit of {cap}",
                            )
                        )
        else:
            for position, child in enumerate(value):
                if isinstance(child, (dict, list)):
                    push((child, depth, (link, str(position))))
                elif isinstance(child, str) and len(child) > max_string and len(problems) < 10:
                    problems.append(
                        (
                            (link, str(position)),
                            f"string of {len(child)} characters is longer than the limit of {max_string}",
                        )
                    )
    for problem_link, problem in problems:
        where = link_pointer(problem_link, tool.pointer)
        run.add(tool.name, where, _limit_rule(where, tool.pointer), problem)
    tool.header_keyword = header_keyword
    return True, count


# --------------------------------------------------------------------------- tool fields


def _check_fields(run: Run, tool: Tool, first_by_name: dict[str, str]) -> None:
    data, ptr = tool.data, tool.pointer
    name = data.get("name")
    name_ptr = ptr + "/name"
    if "name" not in data:
        run.add(None, ptr, "MCPGEN-TOOL-SHAPE", "tool has no `name`; every tool needs a string name")
    elif not isinstance(name, str):
        run.add(None, name_ptr, "MCPGEN-TOOL-SHAPE", f"`name` must be a string, found {describe(name)}")
    elif len(name) > run.limits.max_identifier:
        run.add(
            tool.name,
            name_ptr,
            "MCPGEN-LIMITS",
            f"name has {len(name)} characters; at most {run.limits.max_identifier} are accepted",
        )
    else:
        _check_name(run, tool, name, name_ptr)
        if name in first_by_name:
            run.add(
                tool.name,
                name_ptr,
                "TOOLS-15",
                f"duplicate tool name {name!r}, first listed at {first_by_name[name]}; "
                "tool names must be unique",
            )
        else:
            first_by_name[name] = name_ptr
    for member in ("title", "description"):
        if member in data and not isinstance(data[member], str):
            run.add(
                tool.name,
                f"{ptr}/{member}",
                "MCPGEN-TOOL-SHAPE",
                f"`{member}` must be a string, found {describe(data[member])}",
            )
    if "annotations" in data and not isinstance(data["annotations"], Mapping):
        run.add(
            tool.name,
            ptr + "/annotations",
            "MCPGEN-TOOL-SHAPE",
            f"`annotations` must be an object, found {describe(data['annotations'])}",
        )
    if "icons" in data and not isinstance(data["icons"], list):
        run.add(
            tool.name,
            ptr + "/icons",
            "MCPGEN-TOOL-SHAPE",
            f"`icons` must be an array, found {describe(data['icons'])}",
        )
    if "execution" in data:
        _check_execution(run, tool, data["execution"])
    if "_meta" in data:
        meta = data["_meta"]
        if not isinstance(meta, Mapping):
            run.add(
                tool.name,
                ptr + "/_meta",
                "MCPGEN-TOOL-SHAPE",
                f"`_meta` must be an object, found {describe(meta)}",
            )
        else:
            for key in meta:
                _check_meta_key(run, tool.name, key, join_pointer(ptr + "/_meta", key))


def _check_execution(run: Run, tool: Tool, execution: Any) -> None:
    """`execution.taskSupport` (the tasks extension; 2025-11-25's `ToolExecution`): whether the tool
    may run as a task. The server runtime reads it from tools.json, so a value it cannot act on is
    refused here rather than guessed there."""
    pointer = tool.pointer + "/execution"
    if not isinstance(execution, Mapping):
        run.add(
            tool.name,
            pointer,
            "MCPGEN-TOOL-SHAPE",
            f"`execution` must be an object, found {describe(execution)}",
        )
        return
    if "taskSupport" in execution and execution["taskSupport"] not in TASK_SUPPORT:
        value = execution["taskSupport"]
        shown = repr(clip(value, 40)) if isinstance(value, str) else describe(value)
        run.add(
            tool.name,
            pointer + "/taskSupport",
            "MCPGEN-TOOL-SHAPE",
            f"`taskSupport` must be one of {', '.join(map(repr, TASK_SUPPORT))}, found {shown}",
        )


def _check_name(run: Run, tool: Tool, name: str, pointer: str) -> None:
    shown = tool.name
    if not name:
        run.exclude(
            tool,
            pointer,
            "TOOLS-11",
            "the tool name is empty: no call could name this tool; "
            "the tool is excluded from the generated bindings",
        )
        return
    if not 1 <= len(name) <= TOOL_NAME_MAX:
        run.should(
            shown,
            pointer,
            "TOOLS-11",
            f"tool names should be 1-{TOOL_NAME_MAX} characters long; this one has {len(name)}",
        )
    bad = sorted({c for c in name if not _TOOL_NAME_CHARS.match(c)})
    if bad:
        rule = "TOOLS-14" if any(c.isspace() or c == "," for c in bad) else "TOOLS-13"
        shown_chars = ", ".join(repr(c) for c in bad[:10])
        run.should(
            shown, pointer, rule, f"tool names should use only A-Z a-z 0-9 _ - . ; found {shown_chars}"
        )


def _check_meta_key(run: Run, shown: str | None, key: str, pointer: str) -> None:
    prefix, slash, name = key.rpartition("/")
    if slash:
        labels = prefix.split(".")
        bad = [label for label in labels if not _META_LABEL.match(label)]
        if bad:
            run.should(
                shown,
                pointer,
                "BASE-27",
                f"_meta key {clip(key, 80)!r}: prefix labels must start with a letter and end with a letter "
                f"or digit (letters, digits, hyphens inside); bad label {clip(bad[0], 40)!r}",
            )
            return
    if not _META_NAME.match(name):
        run.should(
            shown,
            pointer,
            "BASE-29",
            f"_meta key {clip(key, 80)!r}: the name must start and end with a letter or digit "
            "(hyphens, underscores, dots inside)",
        )
