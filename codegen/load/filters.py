"""Tool filters: the tools of a loaded source a command keeps (`--include-tools GLOB`,
`--exclude-tools GLOB`; a target's `include_tools` / `exclude_tools`), chosen before validation.

A tool left out here is not an exclusion: it is never validated, so it cannot fail `--strict`, and
the count lines say how many were filtered apart from how many were excluded. Glob semantics are
`ToolFilter`'s (spec.py): case-sensitive `fnmatch` on the wire name, include first, then exclude.
A glob that matches no tool the source lists is a warning (`MCPGEN-FILTER`), never an error: a
server may add the tool later. Filters that leave none of a source's tools are an error
(`ToolFilterError`), except where an empty side is an answer (`mcpgen diff`).
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Sequence
from typing import Any

from ..errors import Diagnostic, ToolFilterError
from ..spec import LoadedSpec, ToolFilter

__all__ = ["RULE", "Selection", "describe", "select_tools", "unmatched_warnings"]

RULE = "MCPGEN-FILTER"
_NAMES_SHOWN = 10  # tool names a warning lists to help spot a typo
_NAME_SHOWN = 60  # characters of each (server text, shown through repr)


@dataclasses.dataclass(frozen=True)
class Selection:
    """The loaded spec with only the kept tools (positions and LOAD's notes carried over), how many
    the filters left out, and a warning for each glob that matched no tool."""

    spec: LoadedSpec
    filtered: int
    warnings: tuple[Diagnostic, ...]


def select_tools(loaded: LoadedSpec, filters: ToolFilter, *, allow_empty: bool = False) -> Selection:
    """`loaded` with only the tools `filters` keeps. Without filters, `loaded` itself (same object:
    nothing else changes, not even its digest). Raises ToolFilterError when tools were listed and
    none is kept, unless `allow_empty`."""
    if not filters:
        return Selection(loaded, 0, ())
    kept = [index for index, tool in enumerate(loaded.tools) if filters.keeps(_name(tool))]
    warnings = unmatched_warnings(loaded.source, loaded.pointer_prefix, filters, [loaded.tools])
    if loaded.tools and not kept and not allow_empty:
        raise ToolFilterError(
            f"{loaded.source}: the tool filters ({describe(filters)}) leave none of its "
            f"{len(loaded.tools)} tool(s): nothing to generate; it lists {_names(loaded.tools)}"
        )
    dropped = set(range(len(loaded.tools))) - set(kept)
    where = [loaded.tool_pointer(index) for index in sorted(dropped)]
    notes = tuple(
        note
        for note in loaded.notes
        if not any(note.pointer == p or note.pointer.startswith(p + "/") for p in where)
    )
    renumbered = {old: new for new, old in enumerate(kept)}
    spec = dataclasses.replace(
        loaded,
        tools=[loaded.tools[index] for index in kept],
        notes=notes,
        unusable=frozenset(renumbered[index] for index in loaded.unusable if index in renumbered),
        filters=filters,
        positions=tuple(loaded.positions[index] if loaded.positions else index for index in kept),
    )
    return Selection(spec, len(dropped), warnings)


def unmatched_warnings(
    source: str, pointer: str, filters: ToolFilter, tool_lists: Sequence[Sequence[Any]]
) -> tuple[Diagnostic, ...]:
    """A warning for each glob of `filters` that matches no tool of any of `tool_lists` (`mcpgen
    diff` passes both sides)."""
    names = [name for tools in tool_lists for name in map(_name, tools) if isinstance(name, str)]
    listed = [tool for tools in tool_lists for tool in tools]
    warnings = []
    for what, globs in (("include", filters.include), ("exclude", filters.exclude)):
        for glob in globs:
            if not any(fnmatch.fnmatchcase(name, glob) for name in names):
                message = f"{what} glob {glob!r} matches no tool (a typo?); listed: {_names(listed)}"
                warnings.append(Diagnostic(source, None, pointer, RULE, message, "warning"))
    return tuple(warnings)


def describe(filters: ToolFilter) -> str:
    """`include 'get_*'; exclude 'get_secret'`, as messages name the filters."""
    parts = [
        f"{what} {', '.join(map(repr, globs))}"
        for what, globs in (("include", filters.include), ("exclude", filters.exclude))
        if globs
    ]
    return "; ".join(parts)


def _name(tool: object) -> object:
    return tool.get("name") if isinstance(tool, dict) else None


def _names(tools: Sequence[Any]) -> str:
    names = [name for name in map(_name, tools) if isinstance(name, str)]
    if not names:
        return "no named tool"
    shown = ", ".join(repr(name[:_NAME_SHOWN]) for name in names[:_NAMES_SHOWN])
    more = len(names) - _NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")
