"""A `SKILL.md`'s YAML frontmatter as JSON, read the same way on both sides of the skills extension:
a server renders it into its `skills/list` entries (server/core/skills/), a client compares a fetched
file's with the entry it holds (skills.py), so the two must agree on every value.

The frontmatter is the `---` delimited block the file starts with (a UTF-8 BOM allowed), at most
`MAX_FRONTMATTER_BYTES`. It is parsed with yaml_data.py's loader (PyYAML's safe loader, no aliases, no
timestamps), made stricter so that the result is exactly what the file says, as JSON: no duplicate or
non-string keys, only JSON values; `yes`/`no`/`on`/`off` stay strings, as in YAML 1.2 (a JavaScript
peer reading the file sees the same values). PyYAML comes with the `server` and `skills` extras.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Final

__all__ = ["MAX_FRONTMATTER_BYTES", "read_frontmatter"]

MAX_FRONTMATTER_BYTES: Final = 64 * 1024

# The block as the harness and the reference clients find it: `---`, the YAML, a `---` line.
_BLOCK = re.compile(r"---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)")
_BOOL_12 = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")


@functools.cache
def _loader() -> type:
    """yaml_data.JsonLoader (no aliases, no timestamps) with YAML 1.2 booleans, refusing duplicate
    and non-string keys."""
    try:
        from .yaml_data import JsonLoader
    except ImportError as exc:  # pragma: no cover - the extras carry PyYAML
        raise ImportError(
            "reading a SKILL.md's frontmatter needs PyYAML: pip install 'mcpgen-runtime[skills]' "
            "(or [server])"
        ) from exc

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


def read_frontmatter(data: bytes) -> dict[str, Any]:
    """The frontmatter at the top of a SKILL.md's bytes as a JSON object; ValueError saying why not
    (ImportError without PyYAML)."""
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

    from .yaml_data import load_data

    try:
        document = load_data(found.group(1), loader)
    except yaml.YAMLError as exc:
        raise ValueError(f"SKILL.md's frontmatter is not valid YAML: {str(exc)[:300]}") from None
    if not isinstance(document, dict):
        raise ValueError("SKILL.md's frontmatter must be a YAML mapping")
    _check_json(document, "")
    return document
