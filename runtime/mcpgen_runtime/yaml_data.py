"""YAML as data: PyYAML's safe loader, without aliases and, where the data is JSON (cassettes, a
skill's frontmatter), without timestamps. The mock's files (cassettes, `--responses`), the
frontmatter of the skills a server serves (server/core/skills/frontmatter.py) and of those a client
loads (skills.py) are read with it; PyYAML comes with the `server` and `skills` extras (and `mock`,
which includes `server`). Imported only by code that reads YAML.

An alias (`*name`) repeats the node its anchor (`&name`) marks; nested, a few of them make a
1 KB file stand for billions of values, which whatever walks the data then expands (a 755-byte
cassette exhausted 2 GiB). The loader refuses the first alias, at the line it is on, before
anything is built from the file. Cassettes are written without anchors (`dump_cassette`), so
every cassette mcpgen wrote still loads.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.events import AliasEvent
from yaml.nodes import Node

__all__ = ["JsonLoader", "SafeDataLoader", "load_data"]


class SafeDataLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses aliases."""

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise ComposerError(
                None,
                None,
                f"alias *{event.anchor} refused: aliases can expand a small file into an enormous "
                "value; write the repeated value out",
                event.start_mark,
            )
        return super().compose_node(parent, index)


class JsonLoader(SafeDataLoader):
    """YAML as JSON-shaped data: no timestamps (`2025-11-25` stays a string), no aliases."""


JsonLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_data(raw: bytes | str, loader: type[SafeDataLoader] = SafeDataLoader, name: str = "") -> Any:
    """The one document in `raw`; `yaml.YAMLError` (its line in file `name`) when it is not YAML
    or uses an alias."""
    reader = loader(raw)
    if name:
        reader.name = name  # the marks of errors name the file, not "<byte string>"
    try:
        return reader.get_single_data()
    finally:
        reader.dispose()
