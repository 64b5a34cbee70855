"""One tool member schema (inputSchema or outputSchema) as the model builder reads it.

`open_document` checks the schema is an object, resolves every same-document `$ref` /
`$dynamicRef` once (`refs.SchemaIndex`: the builder then follows plain pointers), and plans a class
stem for each root `$defs` / `definitions` entry (`classnames.def_class_stems`). `SchemaDoc.node`
finds the subschema at a pointer; `Budget` bounds the work of a whole package.

Cost is bounded (SCHEMA-11): nesting depth, subschemas per member, subschema visits per package
and a wall-clock budget raise UnsupportedSchemaError with the tool and pointer instead of running
away.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..errors import UnsupportedSchemaError
from ..refs import DRAFT_2020_12, SchemaIndex, SchemaLimitError, dialect_of
from .classnames import def_class_stems

__all__ = ["MAX_DEPTH", "MAX_SECONDS", "MAX_SUBSCHEMAS", "MAX_VISITS", "Budget", "SchemaDoc", "open_document"]

MAX_DEPTH: Final = 96  # nested schemas followed while building one type (objects, arrays, refs, allOf)
MAX_SUBSCHEMAS: Final = 20_000  # per tool member, as refs.SchemaIndex counts them
MAX_VISITS: Final = 1_000_000  # subschema visits per package
MAX_SECONDS: Final = 120.0  # wall-clock safety net per package


@dataclass
class SchemaDoc:
    """One tool member schema; its refs resolved when it has any."""

    key: int
    wire_name: str
    member: str
    root_class: str
    root: Any
    refs: dict[str, str]  # subschema pointer -> pointer of its `$ref` / `$dynamicRef` target
    def_classes: dict[tuple[str, str], str]  # ("$defs", key) -> planned class stem
    nodes: dict[str, Any] = field(default_factory=dict)  # pointer -> subschema (memo)

    def where(self, pointer: str) -> str:
        return f"tool {self.wire_name!r} {self.member} at {pointer or '/'}"

    def node(self, pointer: str) -> Any:
        """The subschema at `pointer` (pointers come from the builder or from `refs`)."""
        found = self.nodes.get(pointer, _MISSING)
        if found is not _MISSING:
            return found
        if not pointer:
            node: Any = self.root
        else:
            parent_pointer, _, token = pointer.rpartition("/")
            parent = self.nodes.get(parent_pointer, _MISSING)  # usually known: no recursion
            if parent is _MISSING:
                parent = self.node(parent_pointer)
            if "~" in token:
                token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(parent, dict):
                node = parent.get(token, True)
            elif isinstance(parent, list) and token.isdigit() and int(token) < len(parent):
                node = parent[int(token)]
            else:
                node = True
        self.nodes[pointer] = node
        return node


_MISSING: Final = object()


def open_document(key: int, tool: Mapping[str, Any], member: str, root_class: str, stem: str) -> SchemaDoc:
    """`tool[member]` ready to model: refs resolved to pointers, `$defs` stems planned."""
    schema = tool[member]
    wire_name = tool["name"]
    where = f"tool {wire_name!r} {member}"
    if not isinstance(schema, Mapping):
        raise UnsupportedSchemaError(f"{where}: not a JSON object")
    refs: dict[str, str] = {}
    if _has_refs(schema):
        try:
            index = SchemaIndex.build(
                schema, dialect_of(schema) or DRAFT_2020_12, max_subschemas=MAX_SUBSCHEMAS
            )
        except SchemaLimitError as exc:
            raise UnsupportedSchemaError(f"{where}: {exc} (SCHEMA-11)") from exc
        for site in index.refs:
            resolution = index.resolve(site)
            if resolution.target is None:
                raise UnsupportedSchemaError(f"{where} at {site.pointer}: {resolution.problem}")
            refs.setdefault(site.schema_pointer, resolution.target)
    return SchemaDoc(key, wire_name, member, root_class, schema, refs, def_class_stems(schema, stem))


def _has_refs(schema: Any) -> bool:
    """Whether any object inside `schema` has a `$ref` / `$dynamicRef` member (iterative)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "$ref" in node or "$dynamicRef" in node:
                return True
            stack.extend(node.values())  # scalars too: cheaper than filtering them here
        elif isinstance(node, list):
            stack.extend(node)
    return False


class Budget:
    """Subschema visits and wall-clock time spent on one package (SCHEMA-11)."""

    def __init__(self) -> None:
        self.visits = 0
        self.deadline = time.monotonic() + MAX_SECONDS

    def tick(self, doc: SchemaDoc, pointer: str) -> None:
        self.visits += 1
        if self.visits > MAX_VISITS:
            raise UnsupportedSchemaError(
                f"{doc.where(pointer)}: more than {MAX_VISITS} subschema visits "
                "while building models (SCHEMA-11)"
            )
        if not self.visits & 1023 and time.monotonic() > self.deadline:
            raise UnsupportedSchemaError(
                f"{doc.where(pointer)}: building models took longer than {MAX_SECONDS:.0f} s (SCHEMA-11)"
            )
