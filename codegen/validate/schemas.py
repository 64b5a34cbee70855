"""The checks of a tool's inputSchema and outputSchema, in the order validate/checks.py documents:
type `object` at the root (TOOLS-07/08), dialect (SCHEMA-01/02/06), meta-schema (SCHEMA-05/07, via
validate/metaschema.py), `$ref`s and loops (SCHEMA-07/08/10/11), `x-mcp-header` (XHDR-02..12),
expansion, and `pattern`s (MCPGEN-REGEX*)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from mcpgen_runtime.masking import looks_secret
from mcpgen_runtime.patterns import ecma_regex
from mcpgen_runtime.protocol import xheader
from mcpgen_runtime.protocol.headers import PARAM_PREFIX

from ..refs import (
    DIALECT_URIS,
    DRAFT_2020_12,
    REF_KEYWORDS,
    SUPPORTED_DIALECTS,
    Dialect,
    SchemaIndex,
    SchemaLimitError,
    describe,
    dialect_uri_key,
    escape_token,
    join_pointer,
)
from . import metaschema
from .run import Run, Tool, clip

__all__ = ["check_schemas"]


def check_schemas(run: Run, tool: Tool) -> None:
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
        if _is_schema_object(
            run, tool, schema, in_ptr, "TOOLS-07", "inputSchema must be a JSON Schema object"
        ):
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
    if "outputSchema" in data:  # other rules than inputSchema's, and no x-mcp-header
        out_ptr = ptr + "/outputSchema"
        schema = data["outputSchema"]
        if _is_schema_object(
            run,
            tool,
            schema,
            out_ptr,
            "MCPGEN-TOOL-SHAPE",
            "outputSchema must be a JSON Schema object when present",
        ):
            _check_schema(run, tool, schema, out_ptr, tool_budget)


def _is_schema_object(run: Run, tool: Tool, schema: Any, pointer: str, rule: str, must: str) -> bool:
    """Whether `schema` is a JSON Schema object (a mapping); if not, `rule` is reported: `must`, and
    what was found instead."""
    if isinstance(schema, Mapping):
        return True
    run.add(tool.name, pointer, rule, f"{must}, found {describe(schema)}")
    return False


def _check_schema(
    run: Run, tool: Tool, schema: Mapping[str, Any], pointer: str, tool_budget: int
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
                    f"dialect {clip(repr(nested), 120)} differs from the schema's own ({dialect}); "
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
            "" if resolution.target_text == site.ref else f" (-> {clip(repr(resolution.target_text), 200)})"
        )
        run.add(
            tool.name,
            pointer + site.pointer,
            rule,
            f"{site.keyword} {clip(repr(site.ref), 200)}{target}: {resolution.problem}{hint}",
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
            f"subschemas apply each other to the same value in a loop ({clip(path, 600)}); "
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
                f"{site.keyword} {clip(repr(site.ref), 200)} expands to {amount} subschemas when references "
                f"are followed (at most {run.limits.max_expanded:,}): definitions that reference each other "
                "several times each multiply; refusing a schema whose expansion is this large",
            )
    return len(index.subschemas)


def _check_patterns(run: Run, tool: Tool, index: SchemaIndex, pointer: str) -> None:
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
                    f"{clip(repr(regex), 120)} is not a valid ECMA-262 regular expression ({exc}); "
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
                    f"{clip(repr(regex), 120)} can backtrack catastrophically ({translated.hazard}): "
                    "a backtracking engine (Node's, Python's re, most validators) can take time "
                    f"exponential in the input's length; mcpgen's runtime matches it {bounded}",
                    "warning",
                )
            if translated.reason is not None:
                run.add(
                    tool.name,
                    pointer + where,
                    "MCPGEN-REGEX-UNENFORCED",
                    f"{clip(repr(regex), 120)} is valid ECMA-262 but is not enforced: {translated.reason}; "
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


def _dialect(run: Run, tool: Tool, schema: Mapping[str, Any], pointer: str) -> Dialect | None:
    if "$schema" not in schema:
        return DRAFT_2020_12  # SCHEMA-01
    declared = schema["$schema"]
    if isinstance(declared, str):
        dialect = DIALECT_URIS.get(dialect_uri_key(declared))
        if dialect is not None:
            return dialect
        shown = clip(repr(declared), 120)
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


def _check_meta_schema(run: Run, tool: Tool, index: SchemaIndex, pointer: str) -> None:
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


def _check_headers(run: Run, tool: Tool, schema: Mapping[str, Any], pointer: str) -> None:
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
                f"parameter {clip(repr(param.path[-1]), 80)} looks sensitive but is mirrored into the "
                f"{param.header!r} header, which intermediaries can see; remove its x-mcp-header",
            )
