"""MODEL, sharing: identical root `$defs` entries of several tool schemas become one class.

Servers often repeat one definition in many tools (Notion's `richTextRequest` in every page tool).
Built per tool, each copy would be its own class, and a type checker treats two classes with the
same fields as unrelated: a value read from one tool could not be passed to another. So entries
are keyed by what they mean: the dialect, the entry's canonical JSON, and the canonical JSON of
every root `$defs` entry it reaches through `$ref` (by path, since the `$ref` text names it). An
entry that reaches anything else (the schema's root, a property) depends on its own document and
is never shared.

`plan_shared` groups the referenced entries of all documents by that key. A group of two or more
gets one *canonical site*, the first in document order (tools in source order, input before
output), whose class stem loses the tool's name (`<Def>Def` instead of `<Stem><Def>Def`); every
other site is redirected to it (`SharedDefs.redirects`), so the type builder models it once.
Names depend only on the input: the same input gives the same classes and names.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from . import naming
from .refs import join_pointer, split_pointer
from .schemadoc import SchemaDoc

__all__ = ["SharedDefs", "plan_shared"]

_DEF_KEYWORDS: Final = ("$defs", "definitions")

Entry = tuple[str, str]  # ("$defs" | "definitions", name)


@dataclass
class SharedDefs:
    """Where each non-canonical copy of a shared entry is modelled, and the canonical stems."""

    redirects: dict[tuple[int, str], tuple[SchemaDoc, str]] = field(default_factory=dict)  # (doc key, entry pointer)
    stems: list[tuple[SchemaDoc, Entry, str]] = field(default_factory=list)  # canonical site -> its new stem

    def apply_stems(self) -> None:
        """Give every canonical site its tool-independent class stem."""
        for doc, entry, stem in self.stems:
            doc.def_classes[entry] = stem


def plan_shared(docs: Iterable[SchemaDoc]) -> SharedDefs:
    """Group identical referenced `$defs` entries across `docs` (see the module docstring)."""
    groups: dict[tuple[Any, ...], list[tuple[SchemaDoc, Entry]]] = {}
    for doc in docs:
        for entry, key in _entry_keys(doc).items():
            groups.setdefault(key, []).append((doc, entry))
    shared = SharedDefs()
    for sites in groups.values():
        if len(sites) < 2:
            continue
        canonical_doc, canonical = sites[0]
        stem = f"{naming.identifier(canonical[1], style='pascal', prefix='Def')}Def"
        shared.stems.append((canonical_doc, canonical, stem))
        target = (canonical_doc, join_pointer("", *canonical))
        for doc, entry in sites[1:]:
            shared.redirects[(doc.key, join_pointer("", *entry))] = target
    return shared


def entry_of(pointer: str) -> str | None:
    """The pointer of the root `$defs` entry that contains `pointer`, or None."""
    if not pointer.startswith(("/$defs/", "/definitions/")):
        return None
    end = pointer.find("/", pointer.find("/", 1) + 1)
    return pointer if end < 0 else pointer[:end]


def _entry_keys(doc: SchemaDoc) -> dict[Entry, tuple[Any, ...]]:
    """Entry -> sharing key, for every root entry some `$ref` of `doc` reaches and that reaches
    nothing outside the root entries."""
    if not doc.refs or not isinstance(doc.root, Mapping):
        return {}
    entries: dict[str, Entry] = {}
    for keyword in _DEF_KEYWORDS:
        members = doc.root.get(keyword)
        if isinstance(members, Mapping):
            for name in members:
                entries[join_pointer("", keyword, name)] = (keyword, name)
    if not entries:
        return {}
    # entry -> the entries its own `$ref`s reach; None: one of them reaches outside every entry
    reaches: dict[str, set[str] | None] = {}
    referenced: list[str] = []
    for site, target in doc.refs.items():
        owner = entry_of(target)
        if owner is not None and owner in entries and owner not in referenced:
            referenced.append(owner)
        source = entry_of(site)
        if source is None or source not in entries:
            continue
        known = reaches.setdefault(source, set())
        if owner is None or owner not in entries:
            reaches[source] = None
        elif known is not None:
            known.add(owner)
    dialect = doc.root.get("$schema")
    digests: dict[str, str] = {}
    keys: dict[Entry, tuple[Any, ...]] = {}
    for pointer in referenced:
        closure = _closure(pointer, reaches)
        if closure is None:
            continue
        others = tuple(sorted((split_pointer(p)[1], split_pointer(p)[0], _digest(doc, p, digests))
                              for p in closure if p != pointer))
        keys[entries[pointer]] = (dialect if isinstance(dialect, str) else None, _digest(doc, pointer, digests), others)
    return keys


def _closure(start: str, reaches: Mapping[str, set[str] | None]) -> set[str] | None:
    """Every entry `start` reaches through `$ref`s (itself included); None when any of them
    reaches outside the root entries."""
    seen = {start}
    stack = [start]
    while stack:
        targets = reaches.get(stack.pop(), set())
        if targets is None:
            return None
        for target in targets:
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def _digest(doc: SchemaDoc, pointer: str, memo: dict[str, str]) -> str:
    digest = memo.get(pointer)
    if digest is None:
        text = json.dumps(doc.node(pointer), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        digest = memo[pointer] = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return digest
