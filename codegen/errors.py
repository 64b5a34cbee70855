"""Generator errors and diagnostics.

    McpgenError                 every failure the CLI reports (exit 1), never a traceback
      SpecLoadError             unreadable file or URL, bad JSON (line:col), server error during tools/list
      SpecValidationError       all error diagnostics at once, sorted by (source, tool, pointer)
      ToolFilterError           --include-tools / --exclude-tools leave none of a source's tools
      NameCollisionError        two wire names map to one Python name and no rule can separate them
      UnsupportedSchemaError    valid JSON Schema the generator cannot express: keyword + pointer
      OutputConflictError       would overwrite a user-owned or unmarked file
      InternalGeneratorError    template or formatting failure (a bug): names the template / file

Messages name the source, the tool, the RFC 6901 pointer into the input and the rule:
`specs/weather.json: tool 'get-weather' at /tools/3/inputSchema/properties/days: SCHEMA-07: <what>`.
Server-supplied names are printed with repr() so escapes cannot reach the terminal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    source: str
    tool: str | None  # wire name; None for file-level problems
    pointer: str  # RFC 6901 pointer into the loaded document ("" = whole document)
    rule: str  # rule ID (docs/RULES.md) or mcpgen rule name
    message: str
    severity: Severity = "error"

    def sort_key(self) -> tuple[str, str, str, str]:
        return (self.source, self.tool or "", self.pointer, self.rule)

    def __str__(self) -> str:
        where = (
            f"tool {self.tool!r} at {self.pointer or '/'}"
            if self.tool is not None
            else f"at {self.pointer or '/'}"
        )
        return f"{self.source}: {self.severity}: {where}: {self.rule}: {self.message}"


class McpgenError(Exception):
    """Base of every generator error."""


class SpecLoadError(McpgenError):
    pass


class SpecValidationError(McpgenError):
    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
        errors = [d for d in self.diagnostics if d.severity == "error"]
        super().__init__(f"{len(errors)} error(s):\n" + "\n".join(str(d) for d in errors))


class ToolFilterError(McpgenError):
    pass


class NameCollisionError(McpgenError):
    pass


class UnsupportedSchemaError(McpgenError):
    pass


class OutputConflictError(McpgenError):
    pass


class InternalGeneratorError(McpgenError):
    pass
