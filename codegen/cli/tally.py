"""How many tools a generator command generated and excluded: its last line (MCPGEN-EXCLUDED).

A tool left out of the bindings (an invalid pattern, a bad x-mcp-header) is a warning without
`--strict`; a CI log shows its end, so every generator command ends by counting them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import McpgenError

if TYPE_CHECKING:
    from ..spec import LoadedSpec
    from .config import TargetConfig

__all__ = ["Tally", "excluded_counts", "tools_line", "tools_on_disk"]


def tools_line(source: str, generated: int, excluded: int) -> str:
    """The last line of `client`/`server` for one package."""
    line = f"{source}: {generated} tool(s) generated, {excluded} excluded"
    if excluded:
        line += " (the warnings above say why; --strict makes an exclusion an error)"
    return line


@dataclasses.dataclass
class Tally:
    """Tools generated and excluded over several packages (`generate`, `client --all`)."""

    generated: int = 0
    excluded: int = 0

    def __iadd__(self, counts: tuple[int, int]) -> Tally:
        self.generated += counts[0]
        self.excluded += counts[1]
        return self

    def line(self, packages: str) -> str:
        line = f"{self.generated} tool(s) generated, {self.excluded} excluded ({packages})"
        if self.excluded:
            line += "; `mcpgen validate` says why, and --strict (strict = true) makes an exclusion an error"
        return line


def excluded_counts(
    loaded: Mapping[Path, LoadedSpec | McpgenError], target: TargetConfig, tools: Sequence[object]
) -> tuple[int, int]:
    """(generated, excluded) for a target whose package holds `tools` of its loaded source."""
    spec = loaded.get(target.source_path)
    listed = len(tools) if spec is None or isinstance(spec, McpgenError) else len(spec.tools)
    return len(tools), listed - len(tools)


def tools_on_disk(target: TargetConfig) -> list[object]:
    """The tools of a fresh target's package: its tools.json, which the manifest vouches for."""
    try:
        document = json.loads((target.output / target.package / "tools.json").read_bytes())
    except (OSError, ValueError):
        return []
    tools = document.get("tools") if isinstance(document, dict) else None
    return tools if isinstance(tools, list) else []
