"""A `SKILL.md`'s YAML frontmatter, read and checked by the Agent Skills rules (agentskills.io).

The frontmatter is the `---` delimited block the file starts with. It is parsed with yaml_data.py's
loader (PyYAML's safe loader; the `server` extra), made stricter so that what a client gets as
`frontmatter` is exactly what the file says, as JSON: no aliases (a few bytes must not expand into
a large document), no duplicate or non-string keys, only JSON values; `yes`/`no`/`on`/`off` and
dates stay strings, as in YAML 1.2 (a JavaScript client reading the file must see the same
values). The block is at most `MAX_FRONTMATTER_BYTES`.

Rules checked (each failure names the rule): `name` 1-64 characters of lowercase letters, digits
and hyphens, no leading, trailing or consecutive hyphen; `description` 1-1024 characters.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Final

__all__ = ["MAX_DESCRIPTION", "MAX_FRONTMATTER_BYTES", "MAX_NAME", "name_problem", "parse_frontmatter"]

MAX_FRONTMATTER_BYTES: Final = 64 * 1024
MAX_NAME: Final = 64
MAX_DESCRIPTION: Final = 1024

_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# The block as the harness and the reference clients find it: `---`, the YAML, a `---` line.
_BLOCK = re.compile(r"---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)")
_BOOL_12 = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")


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


@functools.cache
def _loader() -> type:
    """yaml_data.JsonLoader (no aliases, no timestamps) with YAML 1.2 booleans, refusing duplicate
    and non-string keys."""
    try:
        from ....yaml_data import JsonLoader
    except ImportError:  # pragma: no cover - the server extra carries PyYAML
        raise ValueError("serving skills needs PyYAML: pip install 'mcpgen-runtime[server]'") from None

    class FrontmatterLoader(JsonLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, str):
                    raise ValueError(f"frontmatter keys must be strings, not {key!r:.40}")
                if key in result:
                    raise ValueError(f"frontmatter has the key {key[:40]!r} twice")
                result[key] = self.construct_object(value_node, deep=deep)
            return result

    FrontmatterLoader.yaml_implicit_resolvers = {
        first: kept
        for first, entries in JsonLoader.yaml_implicit_resolvers.items()
        if (kept := [(tag, regexp) for tag, regexp in entries if tag != "tag:yaml.org,2002:bool"])
    }
    FrontmatterLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL_12, list("tTfF"))
    return FrontmatterLoader


def _check_json(value: Any, where: str) -> None:
    if value is None or type(value) in (str, bool, int):
        return
    if type(value) is float:
        if not math.isfinite(value):
            raise ValueError(f"frontmatter {where}: {value} is not a JSON number")
        return
    if type(value) is list:
        for i, item in enumerate(value):
            _check_json(item, f"{where}[{i}]")
        return
    if type(value) is dict:
        for key, item in value.items():
            _check_json(item, f"{where}.{key[:40]}")
        return
    raise ValueError(f"frontmatter {where}: a {type(value).__name__} is not a JSON value")


def parse_frontmatter(data: bytes) -> dict[str, Any]:
    """The frontmatter of a SKILL.md's bytes as a JSON object, `name` and `description` checked;
    ValueError saying which rule it breaks."""
    head = data[: MAX_FRONTMATTER_BYTES + 16]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut by the bound
            raise ValueError("SKILL.md is not UTF-8 text") from None
        text = head[: exc.start].decode("utf-8")
    text = text.removeprefix("\ufeff")
    if not text.startswith("---"):
        raise ValueError("SKILL.md must begin with YAML frontmatter (a `---` line)")
    found = _BLOCK.match(text)
    if found is None:
        raise ValueError(
            f"SKILL.md's frontmatter has no closing `---` line within {MAX_FRONTMATTER_BYTES} bytes"
        )
    loader = _loader()
    import yaml

    from ....yaml_data import load_data

    try:
        document = load_data(found.group(1), loader)
    except yaml.YAMLError as exc:
        raise ValueError(f"SKILL.md's frontmatter is not valid YAML: {str(exc)[:300]}") from None
    if not isinstance(document, dict):
        raise ValueError("SKILL.md's frontmatter must be a YAML mapping")
    _check_json(document, "")
    if (problem := name_problem(document.get("name"))) is not None:
        raise ValueError(problem)
    description = document.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ValueError("frontmatter needs a non-empty string `description`")
    if len(description) > MAX_DESCRIPTION:
        raise ValueError(f"`description` is {len(description)} characters; at most {MAX_DESCRIPTION}")
    return document
