"""A `SKILL.md`'s frontmatter checked by the Agent Skills rules (agentskills.io) before a server serves
it; read as JSON by `mcpgen_runtime.frontmatter` (the one reading both sides of the extension share).

Rules checked (each failure names the rule): `name` 1-64 characters of lowercase letters, digits
and hyphens, no leading, trailing or consecutive hyphen; `description` 1-1024 characters.
"""

from __future__ import annotations

import re
from typing import Any, Final

from ....frontmatter import MAX_FRONTMATTER_BYTES, read_frontmatter

__all__ = ["MAX_DESCRIPTION", "MAX_FRONTMATTER_BYTES", "MAX_NAME", "name_problem", "parse_frontmatter"]

MAX_NAME: Final = 64
MAX_DESCRIPTION: Final = 1024

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def name_problem(name: Any) -> str | None:
    """Why `name` is not a skill name (None: it is one)."""
    if not isinstance(name, str) or not name:
        return "frontmatter needs a non-empty string `name`"
    if len(name) > MAX_NAME:
        return f"`name` is {len(name)} characters; at most {MAX_NAME}"
    if _NAME.fullmatch(name) is None:
        return (
            f"`name` {name[:80]!r} must be lowercase letters, digits and hyphens, "
            "with no leading, trailing or consecutive hyphen"
        )
    return None


def parse_frontmatter(data: bytes) -> dict[str, Any]:
    """The frontmatter of a SKILL.md's bytes as a JSON object, `name` and `description` checked;
    ValueError saying which rule it breaks."""
    document = read_frontmatter(data)
    if (problem := name_problem(document.get("name"))) is not None:
        raise ValueError(problem)
    description = document.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("frontmatter needs a non-empty string `description`")
    if len(description) > MAX_DESCRIPTION:
        raise ValueError(f"`description` is {len(description)} characters; at most {MAX_DESCRIPTION}")
    return document
