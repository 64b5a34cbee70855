"""One validation run's state: the bounds (`Limits`), the diagnostics collected so far, and the tool
being checked; how a message quotes server text (`clip`, `shown_name`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import Diagnostic, Severity

__all__ = ["DEFAULT_LIMITS", "Limits", "Run", "Tool", "clip", "shown_name"]


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

_MESSAGE_LIMIT: Final = 300


def clip(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown_name(name: str) -> str:
    return name if len(name) <= 80 else name[:77] + "..."


@dataclass
class Run:
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

    def exclude(self, tool: Tool, pointer: str, rule: str, message: str) -> None:
        """A problem that leaves `tool` out of the bindings: a warning, or an error under `strict`
        (MCPGEN-EXCLUDED: a tool must not vanish from a strict build unnoticed)."""
        tool.excluded = True
        if self.strict:
            message += " (--strict: an excluded tool is an error, MCPGEN-EXCLUDED)"
        self.should(tool.name, pointer, rule, message)


@dataclass
class Tool:
    index: int
    pointer: str
    data: dict[str, Any]
    name: str | None  # as shown in diagnostics: the wire name, cut short only beyond max_identifier
    excluded: bool = False
    # whether some object in the tool (JSON as LOAD makes it: objects are dicts) has an `x-mcp-header`
    # member, found by _check_bounds: without one there is nothing for _check_headers to analyse
    header_keyword: bool = True
