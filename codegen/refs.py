"""JSON pointers, schema walks and same-document `$ref` resolution — all iterative.

Nothing here recurses over input data, fetches anything or imports anything named by a
schema: a hostile schema can only make these functions return an error or raise
`SchemaLimitError`, never hit RecursionError or reach the network (SCHEMA-08, SCHEMA-11).

Pointers are RFC 6901 strings *relative to the schema root* ("" is the root); callers
prefix them with the schema's own pointer in the loaded document.

    index = SchemaIndex.build(schema, dialect_of(schema) or DRAFT_2020_12)
    for site in index.refs:
        resolution = index.resolve(site)      # .target (pointer) or .problem
    cycle = index.in_place_cycle()            # $ref/allOf/... loop that never consumes input
    blowup = index.expansion_over(limit)      # a $ref whose target expands past `limit` subschemas
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal
from urllib.parse import unquote, urljoin, urlsplit

Dialect = Literal["2020-12", "draft-07"]
DRAFT_2020_12: Final[Dialect] = "2020-12"
DRAFT_07: Final[Dialect] = "draft-07"

# `$schema` values naming a supported dialect, compared without a trailing "#" (SCHEMA-01..03).
# The same spellings mcpgen_runtime.schema accepts, so generated code compiles what was validated.
DIALECT_URIS: Final[Mapping[str, Dialect]] = {
    "https://json-schema.org/draft/2020-12/schema": DRAFT_2020_12,
    "http://json-schema.org/draft/2020-12/schema": DRAFT_2020_12,
    "http://json-schema.org/draft-07/schema": DRAFT_07,
    "https://json-schema.org/draft-07/schema": DRAFT_07,
}
SUPPORTED_DIALECTS: Final = "2020-12, draft-07"

# Keywords whose value is a map of name -> subschema.
_MAP_KEYWORDS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
)
# Keywords whose value is an array of subschemas.
_LIST_KEYWORDS: Final = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
# Keywords whose value is one subschema.
_SINGLE_KEYWORDS: Final = (
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contentSchema",
)
# Keywords that apply their subschemas to the *same* instance (no input consumed).
_IN_PLACE_LIST: Final = ("allOf", "anyOf", "oneOf")
_IN_PLACE_SINGLE: Final = ("not", "if", "then", "else")
_IN_PLACE_MAP: Final = ("dependentSchemas", "dependencies")
_IN_PLACE: Final = frozenset({*_IN_PLACE_LIST, *_IN_PLACE_SINGLE, *_IN_PLACE_MAP})
REF_KEYWORDS: Final = ("$ref", "$dynamicRef")
_REF_SET: Final = frozenset(REF_KEYWORDS)
_MAP_SET: Final = frozenset(_MAP_KEYWORDS)
_LIST_SET: Final = frozenset(_LIST_KEYWORDS)
_SINGLE_SET: Final = frozenset(_SINGLE_KEYWORDS)
# Every keyword `SchemaIndex._walk` looks at (with `_enter_resource`, `_collect`): a subschema
# without any of them is a leaf.
_INDEXED_KEYWORDS: Final = frozenset(
    {*_MAP_KEYWORDS, *_LIST_KEYWORDS, *_SINGLE_KEYWORDS, *REF_KEYWORDS, "$id", "$anchor", "$dynamicAnchor"}
)


# --------------------------------------------------------------------------- pointers


class PointerError(ValueError):
    """A JSON pointer that is malformed or names nothing in the document."""


def escape_token(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape_token(token: str) -> str:
    if "~" in token:
        index = token.find("~")
        while index != -1:
            if token[index + 1 : index + 2] not in ("0", "1"):
                raise PointerError(f"invalid escape {token[index : index + 2]!r} in pointer token {token!r}")
            index = token.find("~", index + 2)
    return token.replace("~1", "/").replace("~0", "~")


def join_pointer(pointer: str, *tokens: str | int) -> str:
    """`pointer` extended by raw (unescaped) tokens."""
    for token in tokens:  # a loop, not a generator: the model builder joins pointers by the thousand
        text = str(token)
        if "~" in text or "/" in text:
            text = text.replace("~", "~0").replace("/", "~1")
        pointer += "/" + text
    return pointer


def split_pointer(pointer: str) -> list[str]:
    """The unescaped tokens of an RFC 6901 pointer ("" -> [])."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise PointerError(f"JSON pointer {pointer!r} must be empty or start with '/'")
    if "~" not in pointer:
        return pointer[1:].split("/")  # the common case: nothing escaped
    return [unescape_token(token) for token in pointer[1:].split("/")]


def resolve_pointer(document: Any, pointer: str) -> Any:
    """The value `pointer` names inside `document`; PointerError when it names nothing."""
    node = document
    walked = ""
    for token in split_pointer(pointer):
        if isinstance(node, Mapping):
            if token not in node:
                raise PointerError(f"no member {token!r} at {walked or '/'}")
            node = node[token]
        elif isinstance(node, list):
            if not token.isdigit() or (len(token) > 1 and token[0] == "0") or int(token) >= len(node):
                raise PointerError(f"no array element {token!r} at {walked or '/'} (length {len(node)})")
            node = node[int(token)]
        else:
            raise PointerError(f"{walked or '/'} is a {json_type(node)}, it has no member {token!r}")
        walked = join_pointer(walked, token)
    return node


# JSON type names by Python type, in the order they are tested (bool before int: True is an int).
_JSON_TYPE_NAMES: Final = (
    (type(None), "null"),
    (bool, "boolean"),
    (int, "integer"),
    (str, "string"),
    (list, "array"),
    (Mapping, "object"),
)
_EXACT_JSON_TYPES: Final[Mapping[type, str]] = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    str: "string",
    list: "array",
    dict: "object",
}


def json_type(value: Any) -> str:
    """The JSON Schema type name of a Python value produced by a JSON parser.

    A float with a zero fractional part is an "integer": JSON Schema 2020-12 types numbers by value
    ("integer" matches any number with a zero fractional part, Validation §6.1.1), so `1.0` is an
    integer and `1.5` a number. Anything that is not JSON gives its Python type name.
    """
    exact = _EXACT_JSON_TYPES.get(type(value))
    if exact is not None:
        return exact  # what a JSON parser makes (not float: typed by its value)
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    for python_type, name in _JSON_TYPE_NAMES:
        if isinstance(value, python_type):
            return name
    return type(value).__name__


def describe(value: Any, limit: int = 60) -> str:
    """A short, terminal-safe description of a JSON value for messages: `a string 'abc'`."""
    kind = json_type(value)
    if value is None:
        return "null"
    if isinstance(value, (Mapping, list)):
        return (
            f"an {kind} of {len(value)} item(s)" if kind == "array" else f"an {kind} with {len(value)} key(s)"
        )
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    article = "an" if kind[0] in "aeiou" else "a"
    return f"{article} {kind} {text}"


# --------------------------------------------------------------------------- lazy pointers


# A pointer built lazily: (parent link, unescaped token), None at the walk's root. Walks over
# large documents only pay for pointer text when something is reported.
Link = tuple[Any, str] | None


def link_pointer(link: Link, prefix: str = "") -> str:
    tokens: list[str] = []
    while link is not None:
        link, token = link
        tokens.append(token)
    tokens.reverse()
    return prefix + "".join("/" + escape_token(token) for token in tokens)


# --------------------------------------------------------------------------- dialects


def dialect_uri_key(uri: str) -> str:
    return uri[:-1] if uri.endswith("#") else uri


def dialect_of(schema: Any) -> Dialect | None:
    """The dialect a schema root declares: 2020-12 without `$schema`; None when unsupported."""
    if not isinstance(schema, Mapping) or "$schema" not in schema:
        return DRAFT_2020_12
    declared = schema["$schema"]
    if not isinstance(declared, str):
        return None
    return DIALECT_URIS.get(dialect_uri_key(declared))


# --------------------------------------------------------------------------- schema index


# Expanded sizes are counted exactly up to here (a few machine words; 10**7 definitions deep
# would be needed to pass it), so the smallest expansion past a limit is found.
_EXPANSION_CAP: Final = 2**256


class SchemaLimitError(Exception):
    """The schema has more subschemas than the caller allowed (SCHEMA-11)."""

    def __init__(self, pointer: str, limit: int) -> None:
        super().__init__(f"more than {limit} subschemas (limit reached at {pointer or '/'})")
        self.pointer = pointer
        self.limit = limit


@dataclass(frozen=True, slots=True)
class RefSite:
    pointer: str  # of the keyword itself, e.g. "/properties/a/$ref"
    keyword: str  # "$ref" or "$dynamicRef"
    ref: str  # the value as written
    base: str  # base URI in effect ("" when the document has no $id)

    @property
    def schema_pointer(self) -> str:
        return self.pointer.rsplit("/", 1)[0]


RefKind = Literal["local", "network", "external"]


@dataclass(frozen=True, slots=True)
class Resolution:
    site: RefSite
    target: str | None  # pointer of the target schema when resolved
    kind: RefKind  # "network": http(s) URI of another document; "external": any other document
    problem: str | None = None  # why it did not resolve
    target_text: str = ""  # the target as a person reads it (URI, or "#" + pointer / anchor)


def _join(base: str, ref: str) -> str:
    if ref.startswith("#") or ref == "":
        return base.split("#", 1)[0] + ref
    if not base:
        return ref
    joined = urljoin(base, ref)
    # urljoin leaves unknown schemes (urn:) alone; an absolute ref stays absolute either way.
    return joined or ref


def _is_network(uri: str) -> bool:
    return urlsplit(uri).scheme.lower() in ("http", "https", "ftp", "ws", "wss")


@dataclass
class SchemaIndex:
    """Subschemas, resources (`$id`), anchors and reference sites of one schema document."""

    root: Any
    dialect: Dialect
    subschemas: dict[str, Any] = field(default_factory=dict)  # pointer -> schema (object or boolean)
    bases: dict[str, str] = field(default_factory=dict)  # pointer -> base URI in effect
    resources: dict[str, str] = field(default_factory=dict)  # absolute URI (no fragment) -> pointer
    anchors: dict[tuple[str, str], str] = field(default_factory=dict)  # (resource URI, anchor) -> pointer
    refs: list[RefSite] = field(default_factory=list)
    children: dict[str, list[str]] = field(default_factory=dict)  # pointer -> pointers of its subschemas

    @classmethod
    def build(
        cls, root: Any, dialect: Dialect = DRAFT_2020_12, *, max_subschemas: int = 10_000
    ) -> SchemaIndex:
        """Index every subschema reachable through schema keywords, plus the targets of local refs.

        Raises SchemaLimitError once more than `max_subschemas` subschemas have been seen.
        """
        index = cls(root, dialect)
        index.resources[""] = ""
        pending: list[tuple[str, Any, str]] = [("", root, "")]
        checked = 0
        while pending:
            index._walk(pending, max_subschemas)
            # Refs may point at schemas no keyword leads to (`#/components/x`): index those too.
            queued: set[str] = set()
            by_pointer = {pointer: uri for uri, pointer in reversed(index.resources.items())}
            for site in index.refs[checked:]:
                resolution = index.resolve(site)
                target = resolution.target
                if target is not None and target not in index.subschemas and target not in queued:
                    queued.add(target)
                    pending.append(
                        (target, resolve_pointer(root, target), index._base_for(target, by_pointer))
                    )
            checked = len(index.refs)
        return index

    @staticmethod
    def _base_for(pointer: str, by_pointer: Mapping[str, str]) -> str:
        """Base URI of the innermost resource (`$id`) enclosing `pointer`; O(depth)."""
        prefix = pointer
        while True:
            if prefix in by_pointer:
                return by_pointer[prefix]
            if not prefix:
                return ""
            prefix = prefix.rsplit("/", 1)[0]

    def _walk(self, stack: list[tuple[str, Any, str]], max_subschemas: int) -> None:
        subschemas = self.subschemas
        while stack:
            pointer, node, base = stack.pop()
            if pointer in subschemas:
                continue
            if len(subschemas) >= max_subschemas:
                raise SchemaLimitError(pointer, max_subschemas)
            subschemas[pointer] = node
            if not isinstance(node, dict):
                self.bases[pointer] = base
                continue
            children: list[tuple[str, Any]] = []
            if _INDEXED_KEYWORDS.isdisjoint(node):  # a leaf, like most subschemas ({"type": "string", ...})
                self.bases[pointer] = base
            else:
                base = self._enter_resource(node, pointer, base)
                self.bases[pointer] = base
                self._collect(node, pointer, base, children)
            if len(subschemas) + len(stack) + len(children) > max_subschemas:
                raise SchemaLimitError(children[0][0] if children else pointer, max_subschemas)
            if children:
                self.children[pointer] = [child_pointer for child_pointer, _ in children]
                stack.extend((child_pointer, child, base) for child_pointer, child in reversed(children))

    def _collect(
        self, node: dict[str, Any], pointer: str, base: str, children: list[tuple[str, Any]]
    ) -> None:
        """Record the reference sites of `node`; append its subschemas (pointer, schema) to
        `children`."""
        # Most schema objects use one or two of these keywords: each group is skipped at once
        # when the object has none of it (the order of `children` stays the keywords' order).
        if not _REF_SET.isdisjoint(node):
            for keyword in REF_KEYWORDS:
                ref = node.get(keyword)
                if isinstance(ref, str):
                    self.refs.append(RefSite(pointer + "/" + keyword, keyword, ref, base))
        if not _MAP_SET.isdisjoint(node):
            for keyword in _MAP_KEYWORDS:
                members = node.get(keyword)
                if isinstance(members, dict):
                    children.extend(
                        (f"{pointer}/{keyword}/{escape_token(name)}", child)
                        for name, child in members.items()
                        if isinstance(child, (dict, bool))
                    )
        # Repeats the map loop in shape (duplicates): kept apart in this hot walk (names vs positions).
        if not _LIST_SET.isdisjoint(node):
            for keyword in _LIST_KEYWORDS:
                items = node.get(keyword)
                if isinstance(items, list):
                    children.extend(
                        (f"{pointer}/{keyword}/{position}", child)
                        for position, child in enumerate(items)
                        if isinstance(child, (dict, bool))
                    )
        if not _SINGLE_SET.isdisjoint(node):
            for keyword in _SINGLE_KEYWORDS:
                child = node.get(keyword)
                if isinstance(child, (dict, bool)):
                    children.append((f"{pointer}/{keyword}", child))

    def _enter_resource(self, node: dict[str, Any], pointer: str, base: str) -> str:
        """Register `$id` / anchors of `node`; return the base URI for it and its children."""
        resource_id = node.get("$id")
        if isinstance(resource_id, str):
            if resource_id.startswith("#"):
                # draft-07 plain-name fragment id: an anchor in the current resource.
                if len(resource_id) > 1:
                    self.anchors.setdefault((base.split("#", 1)[0], unquote(resource_id[1:])), pointer)
            else:
                base = _join(base, resource_id).split("#", 1)[0]
                self.resources.setdefault(base, pointer)
        for keyword in ("$anchor", "$dynamicAnchor"):
            anchor = node.get(keyword)
            if isinstance(anchor, str) and anchor:
                self.anchors.setdefault((base, anchor), pointer)
        return base

    def resolve(self, site: RefSite) -> Resolution:
        """Where a reference points: a local pointer, or why it cannot be followed."""
        uri = _join(site.base, site.ref)
        document, _, fragment = uri.partition("#")
        if document not in self.resources:
            kind: RefKind = "network" if _is_network(document) else "external"
            problem = (
                "refers to a network URI, which is never fetched"
                if kind == "network"
                else "refers to another document; only same-document references are supported"
            )
            return Resolution(site, None, kind, problem, uri)
        resource_pointer = self.resources[document]
        fragment = unquote(fragment)
        if fragment == "" or fragment.startswith("/"):
            target = resource_pointer + fragment
            shown = "#" + target
            try:
                value = resolve_pointer(self.root, target)
            except PointerError as exc:
                return Resolution(site, None, "local", f"target {shown!r} does not exist: {exc}", shown)
            if not isinstance(value, (Mapping, bool)):
                return Resolution(
                    site, None, "local", f"target {shown!r} is {describe(value)}, not a schema", shown
                )
            return Resolution(site, target, "local", None, shown)
        shown = "#" + fragment
        anchored = self.anchors.get((document, fragment))
        if anchored is None:
            return Resolution(site, None, "local", f"no $anchor named {fragment!r} in this schema", shown)
        return Resolution(site, anchored, "local", None, shown)

    def expansion_over(self, limit: int) -> tuple[RefSite, int] | None:
        """The `$ref` site where following references blows up, or None.

        Each subschema's expanded size is the number of subschemas it stands for when every
        resolved `$ref` is replaced by its target (a reference back into the current path, a
        recursive type, counts once). Definitions that reference each other several times each
        expand exponentially: a handful of them stand for billions of subschemas, and anything that
        follows references (model building, a reader of the generated code) runs away. When the
        root expands past `limit`, returns the reference whose target is the smallest expansion
        past `limit` (where the fan-out becomes too large) and that expansion, or the first
        reference with the root's expansion when no single target is past the limit. Iterative;
        each subschema is sized once (SCHEMA-11).
        """
        if not self.refs and len(self.subschemas) <= limit:
            return None  # without references the root stands for at most every subschema once
        size = self.expanded_sizes(_EXPANSION_CAP)
        if size.get("", 0) <= limit:
            return None
        worst: tuple[RefSite, int] | None = None
        for site in self.refs:
            target = self.resolve(site).target
            expanded = size.get(target, 0) if target is not None else 0
            if expanded > limit and (worst is None or expanded < worst[1]):
                worst = (site, expanded)
        if worst is None:
            first = next((site for site in self.refs if self.resolve(site).target is not None), None)
            return None if first is None else (first, size[""])
        return worst

    def expanded_sizes(self, cap: int) -> dict[str, int]:
        """pointer -> how many subschemas it stands for with references followed (at most `cap`)."""
        targets: dict[str, list[str]] = {}
        for site in self.refs:
            target = self.resolve(site).target
            if target is not None:
                targets.setdefault(site.schema_pointer, []).append(target)
        size: dict[str, int] = {}
        on_path: set[str] = set()
        for start in self.subschemas:
            if start in size:
                continue
            stack: list[tuple[str, Iterator[str]]] = [
                (start, iter([*self.children.get(start, ()), *targets.get(start, ())]))
            ]
            on_path.add(start)
            totals = [1]
            while stack:
                pointer, successors = stack[-1]
                nxt = next(successors, None)
                if nxt is None:
                    stack.pop()
                    on_path.discard(pointer)
                    done = min(totals.pop(), cap)
                    size[pointer] = done
                    if totals:
                        totals[-1] += done
                    continue
                if nxt in size:
                    totals[-1] += size[nxt]
                elif nxt in on_path:
                    totals[-1] += 1  # a recursive reference: one type, referenced again
                else:
                    on_path.add(nxt)
                    stack.append((nxt, iter([*self.children.get(nxt, ()), *targets.get(nxt, ())])))
                    totals.append(1)
        return size

    def in_place_cycle(self) -> list[str] | None:
        """A loop of subschemas applied to the same instance (`{"$ref": "#"}` at the root, …).

        Validation of such a schema never terminates, so it is rejected (SCHEMA-11). Returns the
        pointers along the loop (first repeated at the end), or None.
        """
        if not self.refs:
            return None  # keywords alone only lead to longer pointers: a loop needs a reference
        edges: dict[str, list[str]] = {}
        for pointer, node in self.subschemas.items():
            targets: list[str] = []
            if isinstance(node, dict) and not _IN_PLACE.isdisjoint(node):
                for keyword in _IN_PLACE_LIST:
                    items = node.get(keyword)
                    if isinstance(items, list):
                        targets.extend(
                            join_pointer(pointer, keyword, i)
                            for i, c in enumerate(items)
                            if isinstance(c, (dict, bool))
                        )
                for keyword in _IN_PLACE_SINGLE:
                    if isinstance(node.get(keyword), (dict, bool)):
                        targets.append(join_pointer(pointer, keyword))
                for keyword in _IN_PLACE_MAP:
                    members = node.get(keyword)
                    if isinstance(members, dict):
                        targets.extend(
                            join_pointer(pointer, keyword, k)
                            for k, c in members.items()
                            if isinstance(c, (dict, bool))
                        )
            edges[pointer] = targets
        for site in self.refs:
            resolution = self.resolve(site)
            if resolution.target is not None:
                edges.setdefault(site.schema_pointer, []).append(resolution.target)
        # Iterative three-colour DFS.
        state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
        for start in edges:
            if state.get(start):
                continue
            path: list[str] = [start]
            iterators: list[Iterator[str]] = [iter(edges.get(start, ()))]
            state[start] = 1
            while iterators:
                nxt = next(iterators[-1], None)
                if nxt is None:
                    state[path.pop()] = 2
                    iterators.pop()
                    continue
                mark = state.get(nxt, 0)
                if mark == 1:
                    return [*path[path.index(nxt) :], nxt]
                if mark == 0:
                    state[nxt] = 1
                    path.append(nxt)
                    iterators.append(iter(edges.get(nxt, ())))
        return None
