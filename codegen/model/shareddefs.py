"""Identical root `$defs` entries of several tool schemas become one class.

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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from ..refs import join_pointer
from . import naming
from .schemadoc import SchemaDoc

__all__ = ["SharedDefs", "plan_shared"]

_DEF_KEYWORDS: Final = ("$defs", "definitions")

Entry = tuple[str, str]  # ("$defs" | "definitions", name)


@dataclass
class SharedDefs:
    """Where each non-canonical copy of a shared entry is modelled, and the canonical stems."""

    redirects: dict[tuple[int, str], tuple[SchemaDoc, str]] = field(
        default_factory=dict
    )  # (doc key, entry pointer)
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
    referenced: dict[str, None] = {}  # in order of first reference
    for site, target in doc.refs.items():
        owner = entry_of(target)
        if owner is not None and owner in entries:
            referenced.setdefault(owner)
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

    def label(pointer: str) -> tuple[Entry, str]:
        return entries[pointer], _digest(doc, pointer, digests)

    group_keys = _group_keys(list(referenced), reaches, label)
    return {
        entries[pointer]: (dialect if isinstance(dialect, str) else None, _digest(doc, pointer, digests), key)
        for pointer in referenced
        if (key := group_keys[pointer]) is not None
    }


def _group_keys(
    starts: list[str], reaches: Mapping[str, set[str] | None], label: Callable[[str], tuple[Entry, str]]
) -> dict[str, str | None]:
    """Entry -> a key of everything it reaches (None: something outside the root entries).

    Entries that reach each other (a strongly connected group) reach the same set, so each group
    is keyed once: a hash of its members' labels (path and digest) and of the keys of the groups
    it reaches, which come first in Tarjan's order. Linear in entries and `$ref`s."""
    keys: dict[str, str | None] = {}
    for group, reached in _groups(starts, reaches):
        members = set(group)
        successor_keys = {keys[target] for target in reached if target not in members}
        key: str | None = None
        if None not in successor_keys and all(reaches.get(member, set()) is not None for member in group):
            digest = hashlib.sha256()
            for (keyword, name), member_digest in sorted(label(member) for member in group):
                digest.update(
                    json.dumps([keyword, name, member_digest], ensure_ascii=False).encode(
                        "utf-8", "surrogatepass"
                    )
                )
            for successor_key in sorted(k for k in successor_keys if k is not None):
                digest.update(successor_key.encode())
            key = digest.hexdigest()
        for member in group:
            keys[member] = key
    return keys


def _groups(starts: list[str], reaches: Mapping[str, set[str] | None]) -> list[tuple[list[str], set[str]]]:
    """The strongly connected groups of the `$ref` graph reachable from `starts`, each listed after
    every group it reaches (Tarjan's algorithm with an explicit stack), with the entries its
    members reach."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[tuple[list[str], set[str]]] = []

    def enter(node: str) -> tuple[str, Iterator[str]]:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        return node, iter(sorted(reaches.get(node) or ()))

    for start in starts:
        if start in index:
            continue
        work = [enter(start)]
        while work:
            node, pending = work[-1]
            for target in pending:
                if target not in index:
                    work.append(enter(target))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group: list[str] = []
                    while not group or group[-1] != node:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                    groups.append((group, {t for member in group for t in reaches.get(member) or ()}))
    return groups


def _digest(doc: SchemaDoc, pointer: str, memo: dict[str, str]) -> str:
    digest = memo.get(pointer)
    if digest is None:
        digest = memo[pointer] = canonical_digest(doc.node(pointer))
    return digest


class _Close(str):
    """A closing bracket queued on the walk's stack (never a JSON value: those are plain str)."""


_CLOSE_OBJECT: Final = _Close("}")
_CLOSE_ARRAY: Final = _Close("]")


class _Key(str):
    """An object member name queued on the walk's stack (a plain str there is a JSON string value)."""


# `json.dumps(value, ensure_ascii=False)` without building an encoder per value
_to_json: Final = json.JSONEncoder(ensure_ascii=False).encode


def canonical_digest(value: Any) -> str:
    """sha256 of `value` as canonical JSON (keys sorted), walked with an explicit stack: a schema
    nested as deep as the loader allows cannot exhaust the interpreter's stack here."""
    chunks: list[bytes] = []  # hashed at once: one update per item costs more than the text
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Close):
            chunks.append(item.encode() + b",")
        elif isinstance(item, dict):
            chunks.append(b"{")
            stack.append(_CLOSE_OBJECT)
            for key in sorted(item, reverse=True):
                stack.append(item[key])
                stack.append(_Key(key))
        elif isinstance(item, list):
            chunks.append(b"[")
            stack.append(_CLOSE_ARRAY)
            stack.extend(reversed(item))
        elif isinstance(item, _Key):
            chunks.append(_to_json(str(item)).encode("utf-8", "surrogatepass") + b":")
        else:  # a scalar: self-delimiting JSON text, then a separator
            chunks.append(_to_json(item).encode("utf-8", "surrogatepass") + b",")
    return hashlib.sha256(b"".join(chunks)).hexdigest()
