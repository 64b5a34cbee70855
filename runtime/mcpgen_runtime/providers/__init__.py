"""Provider profiles: which MCP tool input schemas each model provider's function calling takes,
and their faithful lowerings (`lint_tool`). Pure functions over JSON values, standard library only:
`mcpgen lint` and a generated client's provider specs share them. Sources: each profile module's
docstring cites the provider's published documentation.
"""

from __future__ import annotations

from .profiles import PROFILES, Profile, lint_tool
from .walk import Lowered, Problem

__all__ = ["PROFILES", "Lowered", "Problem", "Profile", "lint_tool"]
