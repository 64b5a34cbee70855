"""Tool definitions as the runtime uses them: parsed once, then looked up by wire name.

Generated packages ship the definitions they were built from as `tools.json` (data, never
code); clients need them for x-mcp-header mirroring, servers for listing and validation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from . import _json
from .protocol import xheader


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    definition: Mapping[str, Any]  # the tool object exactly as listed on the wire
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    header_params: tuple[xheader.HeaderParam, ...]
    required: frozenset[str] = field(default_factory=frozenset)

    @staticmethod
    def from_definition(definition: Mapping[str, Any]) -> ToolSpec:
        input_schema = definition.get("inputSchema")
        if not isinstance(input_schema, Mapping):
            raise ValueError(f"tool {definition.get('name')!r}: inputSchema must be an object")
        output_schema = definition.get("outputSchema")
        params, violations = xheader.analyze(input_schema)
        if violations:
            first = violations[0]
            raise ValueError(
                f"tool {definition.get('name')!r} at {first.pointer}: {first.rule}: {first.message}"
            )
        required = input_schema.get("required", ())
        return ToolSpec(
            name=str(definition["name"]),
            definition=definition,
            input_schema=input_schema,
            output_schema=output_schema if isinstance(output_schema, Mapping) else None,
            header_params=tuple(params),
            required=frozenset(r for r in required if isinstance(r, str))
            if isinstance(required, list)
            else frozenset(),
        )


def tool_table(definitions: Iterable[Mapping[str, Any]]) -> dict[str, ToolSpec]:
    """Wire name -> ToolSpec, in listing order."""
    table: dict[str, ToolSpec] = {}
    for definition in definitions:
        spec = ToolSpec.from_definition(definition)
        if spec.name in table:
            raise ValueError(f"duplicate tool name {spec.name!r}")
        table[spec.name] = spec
    return table


def load_package_tools(package: str, resource: str = "tools.json") -> list[dict[str, Any]]:
    """The tool definitions a generated package was built from."""
    data = resources.files(package).joinpath(resource).read_bytes()
    tools = _json.loads(data)["tools"]
    if not isinstance(tools, list):
        raise ValueError(f"{package}/{resource}: 'tools' is not a list")
    return tools
