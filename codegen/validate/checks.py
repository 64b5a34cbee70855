"""VALIDATE: decide which loaded tools the generator may use, and say why the others fail.

Every problem becomes a `Diagnostic` naming the source, the tool (wire name), the RFC 6901
pointer from the document root and a rule ID from docs/RULES.md (or an
`MCPGEN-*` rule for checks of our own). All diagnostics are collected before failing;
`SpecValidationError` carries every one of them.

Rules, in the order they are checked per tool:

    SCHEMA-11, MCPGEN-LIMITS   bounds first (depth, size, string lengths, totals across tools), so
                               every later walk is cheap; see `Limits`
    MCPGEN-TOOL-SHAPE          field types schema.ts requires (name, title, description, ...)
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

One module over 600 lines on purpose: the checks run in one pass per tool in the order above, each
reading what the earlier ones established (bounds first, so later walks are cheap); the
meta-schema check is validate/metaschema.py.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mcpgen_runtime.masking import looks_secret
from mcpgen_runtime.patterns import ecma_regex
from mcpgen_runtime.protocol import xheader
from mcpgen_runtime.protocol.headers import PARAM_PREFIX

from ..errors import Diagnostic, Severity, SpecValidationError
from ..refs import (
    DIALECT_URIS,
    DRAFT_2020_12,
    REF_KEYWORDS,
    SUPPORTED_DIALECTS,
    Dialect,
    Link,
    SchemaIndex,
    SchemaLimitError,
    describe,
    dialect_uri_key,
    escape_token,
    join_pointer,
    link_pointer,
)
from ..spec import LoadedSpec, ValidatedSpec
from . import metaschema
from .surfaces import check_surfaces

__all__ = ["DEFAULT_LIMITS", "Limits", "validate"]


@dataclass(frozen=True)
class Limits:
    """Bounds that make hostile input fail fast with a clear error (SCHEMA-11)."""

    max_tools: int = 10_000
    max_depth: int = 64  # nesting of objects/arrays inside a schema (or another tool member)
    max_subschemas: int = 10_000  # per tool, inputSchema and outputSchema together
    max_total_subschemas: int = 100_000  # across all tools (about 10 s of meta-schema checks)
    max_values: int = 250_000  # JSON values per tool
    max_total_values: int = 2_000_000  # JSON values across all tools
    max_identifier: int = 1024  # tool names and object keys (property names, ...), in characters
    max_description: int = 1024 * 1024  # `description` / `title` strings (long prose is legitimate)
    max_string: int = 1024 * 1024  # any other string
    max_schema_errors: int = 100  # meta-schema errors reported per schema before summarising
    # subschemas one schema stands for with every `$ref` followed (recursion counted once): the
    # richest real tool lists stay under 100; definitions referencing each other twice each reach
    # this after 17 levels, and ten more would keep anything that follows references busy for hours
    max_expanded: int = 100_000


DEFAULT_LIMITS: Final = Limits()

TOOL_NAME_MAX: Final = 128  # TOOLS-11
_TOOL_NAME_CHARS = re.compile(r"[A-Za-z0-9_.-]")  # TOOLS-13
_META_LABEL = re.compile(r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?\Z")  # BASE-27
_META_NAME = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?\Z")  # BASE-29
_SCHEMA_MEMBERS: Final = ("inputSchema", "outputSchema")
_MESSAGE_LIMIT: Final = 300


def _clip(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shown_name(name: str) -> str:
    return name if len(name) <= 80 else name[:77] + "..."


@dataclass
class _Run:
    source: str
    strict: bool
    limits: Limits
    diagnostics: list[Diagnostic] = field(default_factory=list)
    subschemas_left: int = 0  # of limits.max_total_subschemas
    exhausted: bool = False  # a limit across all tools was reached: stop

    def add(
        self, tool: str | None, pointer: str, rule: str, message: str, severity: Severity = "error"
    ) -> None:
        self.diagnostics.append(Diagnostic(self.source, tool, pointer, rule, message, severity))

    def should(self, tool: str | None, pointer: str, rule: str, message: str) -> None:
        """A SHOULD / SHOULD NOT of the spec: a warning, or an error under `strict`."""
        self.add(tool, pointer, rule, message, "error" if self.strict else "warning")

    def exclude(self, tool: _Tool, pointer: str, rule: str, message: str) -> None:
        """A problem that leaves `tool` out of the bindings: a warning, or an error under `strict`
        (MCPGEN-EXCLUDED: a tool must not vanish from a strict build unnoticed)."""
        tool.excluded = True
        if self.strict:
            message += " (--strict: an excluded tool is an error, MCPGEN-EXCLUDED)"
        self.should(tool.name, pointer, rule, message)


@dataclass
class _Tool:
    index: int
    pointer: str
    data: dict[str, Any]
    name: str | None  # as shown in diagnostics: the wire name, cut short only beyond max_identifier
    excluded: bool = False
    # whether some object in the tool (JSON as LOAD makes it: objects are dicts) has an `x-mcp-header`
    # member, found by _check_bounds: without one there is nothing for _check_headers to analyse
    header_keyword: bool = True


# --------------------------------------------------------------------------- entry point


def validate(
    spec: LoadedSpec, *, strict: bool = False, limits: Limits = DEFAULT_LIMITS, skip_invalid: bool = False
) -> ValidatedSpec:
    """Check every tool; return the usable ones or raise SpecValidationError with all diagnostics.

    `skip_invalid`: a tool with errors is excluded and its errors become warnings (`_skip_tool`)."""
    run = _Run(spec.source, strict, limits, subschemas_left=limits.max_total_subschemas)
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
            (name if len(name) <= limits.max_identifier else _shown_name(name))
            if isinstance(name, str)
            else None
        )
        tool = _Tool(index, pointer, data, shown)
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
            _check_schemas(run, tool)
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
    )


def _strict_notes(run: _Run, pointer: str) -> None:
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


def _skip_tool(run: _Run, tool: _Tool, first: int) -> None:
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


def _check_bounds(run: _Run, tool: _Tool) -> tuple[bool, int]:
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


def _check_fields(run: _Run, tool: _Tool, first_by_name: dict[str, str]) -> None:
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


def _check_name(run: _Run, tool: _Tool, name: str, pointer: str) -> None:
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


def _check_meta_key(run: _Run, shown: str | None, key: str, pointer: str) -> None:
    prefix, slash, name = key.rpartition("/")
    if slash:
        labels = prefix.split(".")
        bad = [label for label in labels if not _META_LABEL.match(label)]
        if bad:
            run.should(
                shown,
                pointer,
                "BASE-27",
                f"_meta key {_clip(key, 80)!r}: prefix labels must start with a letter and end with a letter "
                f"or digit (letters, digits, hyphens inside); bad label {_clip(bad[0], 40)!r}",
            )
            return
    if not _META_NAME.match(name):
        run.should(
            shown,
            pointer,
            "BASE-29",
            f"_meta key {_clip(key, 80)!r}: the name must start and end with a letter or digit "
            "(hyphens, underscores, dots inside)",
        )


# --------------------------------------------------------------------------- schemas


def _check_schemas(run: _Run, tool: _Tool) -> None:
    data, ptr = tool.data, tool.pointer
    in_ptr = ptr + "/inputSchema"
    tool_budget = run.limits.max_subschemas
    if "inputSchema" not in data:
        run.add(
            tool.name,
            ptr,
            "TOOLS-07",
            'tool has no `inputSchema`; use {"type": "object"} for a tool without parameters',
        )
    else:
        schema = data["inputSchema"]
        if not isinstance(schema, Mapping):
            run.add(
                tool.name,
                in_ptr,
                "TOOLS-07",
                f"inputSchema must be a JSON Schema object, found {describe(schema)}",
            )
        else:
            if schema.get("type") != "object":
                found = describe(schema["type"]) if "type" in schema else "no `type`"
                run.add(
                    tool.name,
                    in_ptr + ("/type" if "type" in schema else ""),
                    "TOOLS-08",
                    f'inputSchema must have "type": "object" at the root (arguments are always an object); '
                    f"found {found}",
                )
            used = _check_schema(run, tool, schema, in_ptr, tool_budget)
            if used is None:
                return  # over a size limit: nothing more is checked for this tool
            tool_budget -= used
            _check_headers(run, tool, schema, in_ptr)
    if "outputSchema" in data:
        out_ptr = ptr + "/outputSchema"
        schema = data["outputSchema"]
        if not isinstance(schema, Mapping):
            run.add(
                tool.name,
                out_ptr,
                "MCPGEN-TOOL-SHAPE",
                f"outputSchema must be a JSON Schema object when present, found {describe(schema)}",
            )
        else:
            _check_schema(run, tool, schema, out_ptr, tool_budget)


def _check_schema(
    run: _Run, tool: _Tool, schema: Mapping[str, Any], pointer: str, tool_budget: int
) -> int | None:
    """Dialect, meta-schema, refs and loops of one schema; the subschemas it used, None over a limit."""
    dialect = _dialect(run, tool, schema, pointer)
    if dialect is None:
        return 0
    total_limited = run.subschemas_left < tool_budget
    try:
        index = SchemaIndex.build(schema, dialect, max_subschemas=min(tool_budget, run.subschemas_left))
    except SchemaLimitError as exc:
        if total_limited:
            run.exhausted = True
            run.add(
                tool.name,
                pointer,
                "MCPGEN-LIMITS",
                f"the tools together hold more than {run.limits.max_total_subschemas} subschemas "
                f"(limit reached at {pointer}{exc.pointer}); refusing to go on",
            )
        else:
            run.add(
                tool.name,
                pointer,
                "SCHEMA-11",
                f"more than {run.limits.max_subschemas} subschemas in this tool (limit reached at "
                f"{pointer}{exc.pointer}); refusing to process a schema this large",
            )
        return None
    run.subschemas_left -= len(index.subschemas)
    for sub_pointer, sub in index.subschemas.items():
        # subschemas are objects (Mappings) or booleans
        if sub_pointer and not isinstance(sub, bool) and "$schema" in sub:
            nested = sub["$schema"]
            key = dialect_uri_key(nested) if isinstance(nested, str) else None
            if DIALECT_URIS.get(key or "") != dialect:
                run.add(
                    tool.name,
                    f"{pointer}{sub_pointer}/$schema",
                    "SCHEMA-06",
                    f"dialect {_clip(repr(nested), 120)} differs from the schema's own ({dialect}); "
                    "one dialect per schema is supported",
                )
    _check_meta_schema(run, tool, index, pointer)
    _check_patterns(run, tool, index, pointer)
    for site in index.refs:
        resolution = index.resolve(site)
        if resolution.problem is None:
            continue
        rule = {"network": "SCHEMA-08", "external": "SCHEMA-10", "local": "SCHEMA-07"}[resolution.kind]
        hint = (
            ""
            if resolution.kind == "local"
            else "; inline the definition under $defs and use '#/$defs/<name>'"
        )
        target = (
            "" if resolution.target_text == site.ref else f" (-> {_clip(repr(resolution.target_text), 200)})"
        )
        run.add(
            tool.name,
            pointer + site.pointer,
            rule,
            f"{site.keyword} {_clip(repr(site.ref), 200)}{target}: {resolution.problem}{hint}",
        )
    cycle = index.in_place_cycle()
    if cycle is not None:
        steps = _loop_steps(index, cycle)
        path = " -> ".join((pointer + p) or "/" for p in [*steps[:8], cycle[-1]])
        offending = next((step for step in steps if step.rsplit("/", 1)[-1] in REF_KEYWORDS), cycle[0])
        run.add(
            tool.name,
            pointer + offending,
            "SCHEMA-11",
            f"subschemas apply each other to the same value in a loop ({_clip(path, 600)}); "
            "validation would never terminate",
        )
    else:
        blowup = index.expansion_over(run.limits.max_expanded)
        if blowup is not None:
            site, expanded = blowup
            amount = f"{expanded:,}" if expanded < 10**15 else f"about 10^{len(str(expanded)) - 1}"
            run.add(
                tool.name,
                pointer + site.pointer,
                "SCHEMA-11",
                f"{site.keyword} {_clip(repr(site.ref), 200)} expands to {amount} subschemas when references "
                f"are followed (at most {run.limits.max_expanded:,}): definitions that reference each other "
                "several times each multiply; refusing a schema whose expansion is this large",
            )
    return len(index.subschemas)


def _check_patterns(run: _Run, tool: _Tool, index: SchemaIndex, pointer: str) -> None:
    """MCPGEN-REGEX: every `pattern` and `patternProperties` name is an ECMA-262 regular expression
    (`u` flag). One that is not would make the runtime refuse the schema, so the tool is excluded with
    a warning naming the pointer; a valid one the runtime cannot enforce faithfully keeps its tool
    and is reported (MCPGEN-REGEX-UNENFORCED): neither side checks that one pattern."""
    for sub_pointer, node in index.subschemas.items():
        if isinstance(node, bool) or ("pattern" not in node and "patternProperties" not in node):
            continue  # the usual subschema, without patterns (the others are Mappings)
        found: list[tuple[str, str]] = []
        if isinstance(node.get("pattern"), str):
            found.append((sub_pointer + "/pattern", node["pattern"]))
        if isinstance(node.get("patternProperties"), Mapping):
            found += [
                (join_pointer(sub_pointer + "/patternProperties", key), key)
                for key in node["patternProperties"]
            ]
        for where, regex in found:
            try:
                translated = ecma_regex.translate(regex)
            except ecma_regex.EcmaSyntaxError as exc:
                run.exclude(
                    tool,
                    pointer + where,
                    "MCPGEN-REGEX",
                    f"{_clip(repr(regex), 120)} is not a valid ECMA-262 regular expression ({exc}); "
                    "the tool is excluded from the generated bindings",
                )
                continue
            if translated.hazard is not None:
                bounded = (
                    "in linear time (RE2)"
                    if translated.engine == "re2"
                    else "within a time budget (the value is refused past it)"
                )
                run.add(
                    tool.name,
                    pointer + where,
                    "MCPGEN-REGEX-BACKTRACK",
                    f"{_clip(repr(regex), 120)} can backtrack catastrophically ({translated.hazard}): "
                    "a backtracking engine (Node's, Python's re, most validators) can take time "
                    f"exponential in the input's length; mcpgen's runtime matches it {bounded}",
                    "warning",
                )
            if translated.reason is not None:
                run.add(
                    tool.name,
                    pointer + where,
                    "MCPGEN-REGEX-UNENFORCED",
                    f"{_clip(repr(regex), 120)} is valid ECMA-262 but is not enforced: {translated.reason}; "
                    "the tool is kept and neither the client nor the server checks this pattern",
                    "warning",
                )


def _loop_steps(index: SchemaIndex, cycle: list[str]) -> list[str]:
    """The keyword leading from each subschema of a loop to the next: the pointer of the `$ref`
    (or `$dynamicRef`) when a reference does it, else of the applicator's subschema (`/allOf/0`)."""
    sites: dict[tuple[str, str], str] = {}
    for site in index.refs:
        target = index.resolve(site).target
        if target is not None:
            sites.setdefault((site.schema_pointer, target), site.pointer)
    return [sites.get((here, there), there) for here, there in itertools.pairwise(cycle)]


def _dialect(run: _Run, tool: _Tool, schema: Mapping[str, Any], pointer: str) -> Dialect | None:
    if "$schema" not in schema:
        return DRAFT_2020_12  # SCHEMA-01
    declared = schema["$schema"]
    if isinstance(declared, str):
        dialect = DIALECT_URIS.get(dialect_uri_key(declared))
        if dialect is not None:
            return dialect
        shown = _clip(repr(declared), 120)
    else:
        shown = describe(declared)
    run.add(
        tool.name,
        pointer + "/$schema",
        "SCHEMA-06",
        f"dialect {shown} is not supported; supported: {SUPPORTED_DIALECTS} "
        "(omit $schema for 2020-12, or use 'http://json-schema.org/draft-07/schema#')",
    )
    return None


def _check_meta_schema(run: _Run, tool: _Tool, index: SchemaIndex, pointer: str) -> None:
    """SCHEMA-05/07: every subschema against its dialect's (shallow) meta-schema; all errors reported."""
    seen: set[tuple[str, str]] = set()
    certainly_valid = metaschema.certainly_valid(index.dialect)
    for sub_pointer, node in index.subschemas.items():
        if isinstance(node, bool) or certainly_valid(node):
            continue  # the common case, decided without jsonschema
        for inner, message in metaschema.problems(index.dialect, node):
            where = sub_pointer + inner
            if (where, message) in seen:
                continue
            if len(seen) >= run.limits.max_schema_errors:
                run.add(
                    tool.name,
                    pointer,
                    "SCHEMA-07",
                    f"more than {run.limits.max_schema_errors} meta-schema errors; the rest are not shown",
                )
                return
            seen.add((where, message))
            run.add(tool.name, pointer + where, "SCHEMA-07", message)


# --------------------------------------------------------------------------- x-mcp-header


def _property_pointer(path: tuple[str, ...]) -> str:
    return "".join("/properties/" + escape_token(name) for name in path)


def _check_headers(run: _Run, tool: _Tool, schema: Mapping[str, Any], pointer: str) -> None:
    """XHDR-02..08 via the runtime's own analysis: a violation excludes the tool (XHDR-10/11)."""
    if not tool.header_keyword:
        return  # no annotation anywhere: no parameter, no violation
    params, violations = xheader.analyze(schema)
    for violation in violations:
        run.exclude(
            tool,
            pointer + violation.pointer,
            violation.rule,
            f"{violation.message}; the tool is excluded from the generated bindings (XHDR-10)",
        )
    if tool.excluded:
        return
    for param in params:
        if looks_secret(param.path[-1]) or looks_secret(param.header.removeprefix(PARAM_PREFIX)):
            run.should(
                tool.name,
                pointer + _property_pointer(param.path) + "/" + xheader.KEYWORD,
                "XHDR-12",
                f"parameter {_clip(repr(param.path[-1]), 80)} looks sensitive but is mirrored into the "
                f"{param.header!r} header, which intermediaries can see; remove its x-mcp-header",
            )
