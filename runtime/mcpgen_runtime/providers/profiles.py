"""The provider profiles by name and the one entry point: `lint_tool(profile, tool)` → `Lowered`
(a tool's problems under that profile and, when each has a faithful lowering, the lowered input
schema and the name to give the provider). `mcpgen lint` reports it; a client's provider specs
(issue 35, item 4) send it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import anthropic_strict, gemini, openai_strict
from .lowering import Rules, lower_schema
from .walk import Lowered, Problem, Walk, map_name

__all__ = ["PROFILES", "Profile", "lint_tool"]


@dataclass(frozen=True)
class Profile:
    rules: Rules
    name_pattern: re.Pattern[str]
    check_limits: Callable[[dict[str, Any], Walk], None]
    name_chars: str
    name_first: str = ""

    @property
    def name(self) -> str:
        return self.rules.name


PROFILES: Mapping[str, Profile] = {
    profile.name: profile
    for profile in (
        Profile(openai_strict.RULES, openai_strict.NAME, openai_strict.check_limits, "[a-zA-Z0-9_-]"),
        Profile(
            anthropic_strict.RULES, anthropic_strict.NAME, anthropic_strict.check_limits, "[a-zA-Z0-9_-]"
        ),
        Profile(gemini.RULES, gemini.NAME, gemini.check_limits, "[A-Za-z0-9_.:-]", gemini.NAME_FIRST),
    )
}


def lint_tool(profile: Profile | str, tool: Mapping[str, Any]) -> Lowered:
    """`tool` (an MCP tool definition) under `profile`: what it refuses and the faithful lowering."""
    chosen = PROFILES[profile] if isinstance(profile, str) else profile
    name = str(tool.get("name", ""))
    schema = tool.get("inputSchema", {"type": "object"})
    walk = Walk(root=schema if isinstance(schema, dict) else {})
    mapped = map_name(name, chosen.name_pattern, chars=chosen.name_chars, first=chosen.name_first)
    if mapped != name:
        walk.problems.append(
            Problem(
                "/name",
                "name",
                f"{chosen.rules.title} refuses the tool name {name!r}",
                f"send it as {mapped!r} and map it back",
            )
        )
    lowered = lower_schema(schema, chosen.rules, walk)
    if lowered is not None:
        chosen.check_limits(lowered, walk)
        if any(not problem.faithful for problem in walk.problems):
            lowered = None
    return Lowered(
        tool=name,
        profile=chosen.name,
        problems=tuple(walk.problems),
        name=mapped,
        schema=lowered,
        nullable_optional=tuple(walk.nullable_optional),
    )
