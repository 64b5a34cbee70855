"""SCHEMA-05/07: is one subschema valid against its dialect's meta-schema, and if not, why.

The official meta-schemas validate a schema by recursing into every subschema through
`$dynamicRef` (2020-12) or `{"$ref": "#"}` (draft-07): about 0.7 ms per subschema, and Python
recursion as deep as the schema. Instead, each dialect's meta-schema is flattened once into a
reference-free schema whose subschema positions only require "object or boolean", and the caller
checks every subschema `refs.SchemaIndex` found on its own turn: the same rules, linear time, no
recursion over input.

Almost every subschema is valid, and jsonschema spends most of its time on bookkeeping for
errors it never finds. So the flattened meta-schema is also compiled into a plain predicate
(`_compile`) that answers "certainly valid" for the common case; only a subschema it does not
accept goes through jsonschema, whose errors (and messages) are the ones reported. The predicate
may be stricter than jsonschema (it says "not sure" for anything it does not model) but never
more lenient, so the diagnostics are exactly jsonschema's.

The meta-schemas are read from jsonschema_specifications' files on first use; jsonschema (and the
registry of every draft it resolves with) is imported only for a subschema the predicate does not
accept.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urljoin

from ..refs import DRAFT_07, Dialect, escape_token, resolve_pointer

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError  # type: ignore[import-untyped]

__all__ = ["certainly_valid", "problems", "shallow_meta_schema"]

_MESSAGE_LIMIT: Final = 300  # characters of a message (checks.py clips the same way)

_SHALLOW: Final[Mapping[str, Any]] = {"type": ["object", "boolean"]}
_DRAFT_2020_12_URI: Final = "https://json-schema.org/draft/2020-12/schema"
_DRAFT_07_URI: Final = "http://json-schema.org/draft-07/schema"


def _clip(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --------------------------------------------------------------------------- flattening

Contents = Callable[[str], Any]  # document URI (no fragment) -> the document


def _inline(node: Any, base: str, contents: Contents) -> Any:
    """`node` (part of a bundled meta-schema) with every `$ref` inlined and self-references shallow.

    Recurses over the bundled meta-schemas only: trusted, static and a few levels deep.
    """
    if isinstance(node, list):
        return [_inline(item, base, contents) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("$dynamicRef") == "#meta" or node.get("$ref") == "#":
        return dict(_SHALLOW)
    inlined = {key: _inline(value, base, contents) for key, value in node.items() if key != "$ref"}
    ref = node.get("$ref")
    if isinstance(ref, str):
        document_uri, _, fragment = urljoin(base, ref).partition("#")
        target = resolve_pointer(contents(document_uri), fragment)
        inlined["allOf"] = [*inlined.get("allOf", []), _inline(target, document_uri, contents)]
    return inlined


def _shipped_documents() -> Contents | None:
    """The 2020-12 and draft-07 meta-schema documents jsonschema_specifications ships, read from its
    files by `$id`. Importing it builds a `referencing` registry of every draft's schemas, about
    0.15 s of CPU for the few documents flattened here (jsonschema itself needs that registry only
    for a subschema the fast predicate does not accept). None when its files are not found (a
    zipped install, another layout): then its registry is used."""
    spec = importlib.util.find_spec("jsonschema_specifications")  # finds it without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    schemas = Path(next(iter(spec.submodule_search_locations))) / "schemas"
    documents: dict[str, Any] = {}
    try:
        vocabularies = sorted((schemas / "draft202012" / "vocabularies").iterdir())
        for path in [
            schemas / "draft7" / "metaschema.json",
            schemas / "draft202012" / "metaschema.json",
            *vocabularies,
        ]:
            document = json.loads(path.read_text(encoding="utf-8"))
            documents[document["$id"].rstrip("#")] = document
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return documents.__getitem__


def _flatten(dialect: Dialect, contents: Contents) -> dict[str, Any]:
    if dialect == DRAFT_07:
        document = contents(_DRAFT_07_URI)
        return {
            "type": ["object", "boolean"],
            "properties": _inline(document["properties"], _DRAFT_07_URI, contents),
        }
    root = contents(_DRAFT_2020_12_URI)
    properties: dict[str, Any] = {}
    for part in root["allOf"]:  # the vocabularies: meta/core, meta/applicator, ...
        vocabulary_uri = urljoin(_DRAFT_2020_12_URI, part["$ref"])
        properties.update(_inline(contents(vocabulary_uri)["properties"], vocabulary_uri, contents))
    properties.update(
        _inline(root["properties"], _DRAFT_2020_12_URI, contents)
    )  # legacy: definitions, dependencies
    return {"type": ["object", "boolean"], "properties": properties}


def _registry_contents() -> Contents:
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]

    return REGISTRY.contents  # type: ignore[no-any-return]


@functools.cache
def shallow_meta_schema(dialect: Dialect) -> dict[str, Any]:
    """The dialect's meta-schema without references; subschema positions only need "object or boolean"."""
    contents = _shipped_documents()
    if contents is not None:
        try:
            return _flatten(dialect, contents)
        except KeyError:  # a document it did not ship as a file
            pass
    return _flatten(dialect, _registry_contents())


@functools.cache
def _validator(dialect: Dialect) -> Any:
    import referencing
    import referencing.exceptions
    from jsonschema import Draft7Validator, Draft202012Validator  # type: ignore[import-untyped]
    from jsonschema_specifications import REGISTRY

    def refuse(uri: str) -> referencing.Resource[Any]:
        raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]  # SCHEMA-08: never fetch

    local_only = REGISTRY.combine(referencing.Registry(retrieve=refuse))  # type: ignore[call-arg]
    cls = Draft7Validator if dialect == DRAFT_07 else Draft202012Validator
    # No format_checker: `format` is an annotation, as `_compile` assumes.
    return cls(shallow_meta_schema(dialect), registry=local_only)


# --------------------------------------------------------------------------- the fast predicate

Check = Callable[[Any], bool]


def _never(_instance: Any) -> bool:
    return False  # "not sure": jsonschema decides


def _always(_instance: Any) -> bool:
    return True


# The Python types of the JSON types, as jsonschema checks them for draft-07 and 2020-12
# (jsonschema/_types.py): bool is only "boolean"; an integral float is "not sure" for "integer".
_PY_TYPES: Final[Mapping[str, tuple[type, ...]]] = {
    "array": (list,),
    "boolean": (bool,),
    "integer": (int,),
    "null": (type(None),),
    "number": (int, float),
    "object": (dict,),
    "string": (str,),
}
# Keywords that never make an instance invalid here (`format` is not asserted: see `_validator`).
_ANNOTATIONS: Final = frozenset({"$comment", "default", "deprecated", "format", "title", "description"})


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _all(checks: list[Check]) -> Check:
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]

    # loops: all() and any() over a generator cost more than most checks
    def every(x: Any) -> bool:
        for check in checks:  # noqa: SIM110
            if not check(x):
                return False
        return True

    return every


def _any(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def some(x: Any) -> bool:
        for check in checks:  # noqa: SIM110
            if check(x):
                return True
        return False

    return some


def _type(types: Any) -> Check:
    names = [types] if isinstance(types, str) else types
    if not isinstance(names, list) or not all(isinstance(name, str) and name in _PY_TYPES for name in names):
        return _never
    accepted = tuple(py_type for name in names for py_type in _PY_TYPES[name])
    if "boolean" in names:
        return lambda x: isinstance(x, accepted)
    return lambda x: isinstance(x, accepted) and not isinstance(x, bool)


def _enum(values: Any) -> Check:
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        return _never
    allowed = frozenset(values)
    return lambda x: isinstance(x, str) and x in allowed


def _unique_strings(x: Any) -> bool:
    return not isinstance(x, list) or (all(isinstance(item, str) for item in x) and len(set(x)) == len(x))


def _properties(by_name: Mapping[str, Check]) -> Check:
    def check(x: Any) -> bool:
        if isinstance(x, dict):
            for name, value in x.items():
                each = by_name.get(name)
                if each is not None and not each(value):
                    return False
        return True

    return check


def _keyword(keyword: str, value: Any, schema: Mapping[str, Any]) -> Check:
    """The predicate for one keyword of a meta-schema subschema (`_never` for anything unmodelled)."""
    if keyword == "type":
        return _type(value)
    if keyword == "enum":
        return _enum(value)
    if keyword in ("allOf", "anyOf") and isinstance(value, list) and value:
        checks = [_compile(sub) for sub in value]
        return _all(checks) if keyword == "allOf" else _any(checks)
    if keyword == "properties" and isinstance(value, dict):
        return _properties({name: _compile(sub) for name, sub in value.items()})
    if keyword == "additionalProperties" and not {"properties", "patternProperties"} & schema.keys():
        each = _compile(value)  # no siblings: it applies to every member
        return lambda x: not isinstance(x, dict) or all(map(each, x.values()))
    if keyword == "propertyNames":
        each = _compile(value)
        return lambda x: not isinstance(x, dict) or all(map(each, x))
    if keyword == "items" and isinstance(value, (dict, bool)) and "prefixItems" not in schema:
        each = _compile(value)
        return lambda x: not isinstance(x, list) or all(map(each, x))
    if keyword == "minItems" and isinstance(value, int):
        return lambda x: not isinstance(x, list) or len(x) >= value
    if keyword == "uniqueItems" and isinstance(value, bool):
        return _unique_strings if value else _always
    if keyword == "minimum" and _is_number(value):
        return lambda x: not _is_number(x) or x >= value
    if keyword == "exclusiveMinimum" and _is_number(value):
        return lambda x: not _is_number(x) or x > value
    if keyword == "pattern" and isinstance(value, str):
        search = re.compile(value).search  # jsonschema uses re.search too
        return lambda x: not isinstance(x, str) or search(x) is not None
    return _never


def _compile(schema: Any) -> Check:
    """A predicate that is True only for instances `schema` accepts (False: invalid or not sure)."""
    if schema is True:
        return _always
    if not isinstance(schema, dict):
        return _never
    return _all([_keyword(k, v, schema) for k, v in schema.items() if k not in _ANNOTATIONS])


@functools.cache
def certainly_valid(dialect: Dialect) -> Check:
    """True only for subschemas valid against the dialect's meta-schema (False: invalid or not sure)."""
    return _compile(shallow_meta_schema(dialect))


# --------------------------------------------------------------------------- problems


def _error_message(error: ValidationError) -> str:
    message = str(error.message)
    if error.context:
        alternatives = sorted({str(sub.message) for sub in error.context})
        message += " (" + "; ".join(_clip(a, 120) for a in alternatives[:4]) + ")"
    return _clip(message)


def problems(dialect: Dialect, subschema: Any) -> Iterator[tuple[str, str]]:
    """(pointer relative to the subschema, message) for every way `subschema` breaks the dialect's
    (shallow) meta-schema, in jsonschema's order; nothing for a valid one."""
    if certainly_valid(dialect)(subschema):
        return
    from jsonschema.exceptions import best_match

    for error in _validator(dialect).iter_errors(subschema):
        best = best_match([error]) or error
        where = "".join("/" + escape_token(part) for part in best.absolute_path)
        yield where, f"not a valid {dialect} schema: {_error_message(best)}"
