"""Python names for server-supplied text: one identifier function, deterministic collision rules.

Wire names (tool names, property names, `$defs` keys) are never copied into source: every
name is rebuilt from an ASCII allow-list

    NFKD, ASCII only -> words -> snake_case / PascalCase -> reserved words get "_" -> prefix when
    empty or starting with a digit

and the result is checked again by `pysource.ident` before it reaches a template. Two wire names
that map to one Python name are told apart by a numeric suffix assigned in a fixed order (see
`assign_names`), so the output never depends on the order of the input.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import keyword
import operator
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from .reserved import RUNTIME_FALLBACK_NAMES, basemodel_member_names, runtime_member_names

__all__ = [
    "BUILTIN_NAMES",
    "CLIENT_ATTRIBUTE_NAMES",
    "GENERATED_MODULE_NAMES",
    "KEYWORDS",
    "MAX_IDENTIFIER",
    "RUNTIME_FALLBACK_NAMES",
    "SOFT_KEYWORDS",
    "Style",
    "assign_names",
    "cap_length",
    "class_bases",
    "field_names",
    "field_reserved_names",
    "identifier",
    "method_names",
    "method_reserved_names",
    "runtime_member_names",
    "words",
]

Style = Literal["snake", "pascal"]

KEYWORDS: frozenset[str] = frozenset(keyword.kwlist)
SOFT_KEYWORDS: frozenset[str] = frozenset(keyword.softkwlist) | {
    "_",
    "case",
    "match",
    "type",
}  # `type`: 3.12+
BUILTIN_NAMES: frozenset[str] = frozenset(dir(builtins))

# Module-level names of the generated client.py / base.py / handlers.py (methods live in the class
# scope, where a method named like a module-level name would shadow it in later annotations).
GENERATED_MODULE_NAMES: frozenset[str] = frozenset(
    {
        "Any",
        "AsyncClient",
        "ClassVar",
        "Client",
        "RUNTIME_API_VERSION",
        "Server",
        "ServerBase",
        "ToolBinding",
        "ToolContext",
        "ToolResult",
        "ToolReturn",
        "ToolServer",
        "PackageTools",
        "load_package_tools",
        "models",
        "serve_main",
        "self",
        "cls",
    }
)

# Attributes of every generated client besides its tool methods: the typed task namespaces
# (`client.start.<tool>`, `client.resume.<tool>`), the runtime's `client.tasks` (issue 34), its
# drift check and its provider specs (issue 35: `check_drift`, `tool_specs`), its skills (issue 37).
CLIENT_ATTRIBUTE_NAMES: frozenset[str] = frozenset(
    {"start", "resume", "tasks", "check_drift", "tool_specs"}
    | {"list_skills", "list_skills_page", "get_skill", "load_skill"}
)

MAX_IDENTIFIER = 80  # longer names are cut and given a digest suffix (still unique, still readable)

# Builtins that generated annotations use: a field named like one would shadow it in the class body.
_ANNOTATION_BUILTINS: frozenset[str] = frozenset({"bool", "dict", "float", "int", "list", "str", "tuple"})
# pydantic warns about fields in these namespaces (and about shadowing any BaseModel member).
_PYDANTIC_PROTECTED_PREFIXES = ("model_validate", "model_dump")


@functools.cache
def field_reserved_names() -> frozenset[str]:
    """Field names a generated model may not use as they are (`model_config`, `json`, `copy`, `str`, ...)."""
    return basemodel_member_names() | _ANNOTATION_BUILTINS | frozenset({"root"})


_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])[0-9]*|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+[a-z]*")
_SEPARATOR = re.compile(r"[^A-Za-z0-9]+")


def words(text: str) -> list[str]:
    """ASCII words of `text`: `getUser-v2.list` -> [get, User, v2, list]; `über` -> [uber]."""
    folded = text  # ASCII text is its own NFKD form
    if not text.isascii():
        folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    out: list[str] = []
    for chunk in _SEPARATOR.split(folded):
        out.extend(_WORD.findall(chunk))
    return out


def cap_length(name: str, *, style: Style = "snake") -> str:
    """`name` itself when short enough, else its first characters plus a digest of the whole name."""
    if len(name) <= MAX_IDENTIFIER:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    if style == "snake":
        return name[: MAX_IDENTIFIER - 9] + "_" + digest
    return name[: MAX_IDENTIFIER - 8] + digest.upper()


@functools.lru_cache(maxsize=65536)  # a name is made in several styles (a tool's class and method)
def _words(text: str) -> tuple[str, ...]:
    return tuple(words(text))


@functools.lru_cache(maxsize=65536)  # the same property and tool names recur across a spec's schemas
def _unreserved_identifier(text: str, style: Style, prefix: str | None) -> str:
    parts = _words(text)
    if style == "snake":
        name = "_".join(parts).lower()
        lead = prefix if prefix is not None else "tool"
        if not name:
            name = lead
        elif name[0].isdigit():
            name = f"{lead}_{name}"
    else:
        name = "".join([part.capitalize() for part in parts])  # ASCII words: first letter upper
        lead = prefix if prefix is not None else "Tool"
        if not name:
            name = lead
        elif name[0].isdigit():
            name = f"{lead}{name}"
    return cap_length(name, style=style)


def identifier(
    text: str,
    *,
    style: Style = "snake",
    reserved: Iterable[str] = (),
    prefix: str | None = None,
    soft_keywords: bool = True,
) -> str:
    """A valid, non-reserved ASCII identifier derived from `text` (deterministic, never empty).

    `reserved` names get a trailing `_` (like `class_`); a result that would be empty or start
    with a digit gets `prefix` (default `tool` / `Tool`) in front. Soft keywords (`match`, `type`,
    ...) are reserved too unless `soft_keywords` is False (they are valid attribute names). Names
    longer than MAX_IDENTIFIER are cut (`cap_length`).
    """
    name = _unreserved_identifier(text, style, prefix)
    reserved_set = reserved if isinstance(reserved, (set, frozenset)) else frozenset(reserved)
    soft = SOFT_KEYWORDS if soft_keywords else frozenset()
    while name in KEYWORDS or name in soft or name in reserved_set:
        name += "_"
    if not (
        name.isascii() and name.isidentifier()
    ):  # pragma: no cover - the allow-list makes this impossible
        raise ValueError(f"cannot derive an identifier from {text!r}")
    return name


def assign_names(
    wire_names: Iterable[str],
    make: Callable[[str], str],
    *,
    suffix: Callable[[str, int], str] | None = None,
    taken: Iterable[str] = (),
    rank: Callable[[str, str], tuple[bool, ...]] | None = None,
) -> dict[str, str]:
    """Map each distinct wire name to a distinct Python name; independent of input order.

    1. every wire name whose `make(wire)` no other wire name shares keeps it;
    2. in each group sharing one base, members are ordered by `rank(wire, base)` (default: the one
       equal to the base first), then by wire name; the first keeps the base, the others get
       `suffix(base, 2)`, `suffix(base, 3)`, ... skipping names already used (`get_user`,
       `get-user` -> `get_user_2`, `getUser` -> `get_user_3`).
    """
    rank = rank or (lambda wire, base: (wire != base,))
    suffix = suffix or (lambda base, n: f"{base}_{n}")
    bases = {wire: make(wire) for wire in sorted(set(wire_names))}
    taken = taken if isinstance(taken, (set, frozenset)) else frozenset(taken)
    distinct = set(bases.values())
    if len(distinct) == len(bases) and taken.isdisjoint(distinct):
        # the common case: every wire name keeps its base (in the order step 1 gives them)
        return dict(sorted(bases.items(), key=operator.itemgetter(1)))
    used: set[str] = set(taken)
    groups: dict[str, list[str]] = {}
    for wire, base in bases.items():
        groups.setdefault(base, []).append(wire)
    result: dict[str, str] = {}
    for base in sorted(groups):
        members = groups[base]
        if len(members) == 1 and base not in used:
            result[members[0]] = base
            used.add(base)
    for base in sorted(groups):
        members = groups[base]
        if len(members) == 1 and members[0] in result:
            continue
        ordered = sorted(members, key=lambda wire: (*rank(wire, base), wire))
        number = 1
        for wire in ordered:
            candidate = base
            while candidate in used:
                number += 1
                candidate = suffix(base, number)
            result[wire] = candidate
            used.add(candidate)
    return result


def method_reserved_names(extra: Iterable[str] = ()) -> frozenset[str]:
    """Names a generated tool method may not take (the same set for clients and servers)."""
    return (
        KEYWORDS
        | SOFT_KEYWORDS
        | BUILTIN_NAMES
        | runtime_member_names()
        | GENERATED_MODULE_NAMES
        | CLIENT_ATTRIBUTE_NAMES
        | frozenset(extra)
    )


def method_names(wire_names: Iterable[str], extra_reserved: Iterable[str] = ()) -> Mapping[str, str]:
    """Wire name -> snake_case method name, unique and clear of every reserved name."""
    reserved = method_reserved_names(extra_reserved)
    return assign_names(
        wire_names, lambda wire: identifier(wire, style="snake", reserved=reserved), taken=reserved
    )


def class_bases(wire_names: Iterable[str]) -> Mapping[str, str]:
    """Wire name -> PascalCase stem for model class names (`get-weather.v2` -> `GetWeatherV2`)."""
    # numbered like the methods: `get_user` -> GetUser, `get-user` -> GetUser2, `getUser` -> GetUser3
    return assign_names(
        wire_names,
        lambda wire: identifier(wire, style="pascal"),
        suffix=lambda base, n: f"{base}{n}",
        rank=lambda wire, base: (wire != base, identifier(wire, style="snake") != wire),
    )


@functools.lru_cache(maxsize=4096)  # the same property names recur across a catalog's tools
def _field_identifier(wire: str) -> str:
    name = identifier(wire, style="snake", prefix="field", soft_keywords=False)
    if name.startswith(_PYDANTIC_PROTECTED_PREFIXES):  # a suffix cannot leave a protected namespace
        name = "field_" + name
    reserved = field_reserved_names()
    while name in reserved:
        name += "_"
    return name


def field_names(wire_names: Iterable[str]) -> Mapping[str, str]:
    """Property wire name -> model field name, unique within one model and independent of order.

    snake_case from the allow-list; keywords, BaseModel members (`model_config`, `json`, ...) and
    builtin type names used in annotations (`str`, `list`, ...) get a trailing `_`; `_meta` becomes
    `meta`, `über` `uber`, `2fa` `field_2fa`; `get-user` / `getUser` / `get_user` share `get_user`
    by the `assign_names` rules. The wire name is always kept as the field's alias. (The order of
    the mapping is not part of the answer.)
    """
    names = {wire: _field_identifier(wire) for wire in wire_names}  # never a reserved name
    if len(set(names.values())) == len(names):
        return names  # the common case: every wire name keeps its own (as `assign_names` would say)
    return assign_names(names, _field_identifier, taken=field_reserved_names())
