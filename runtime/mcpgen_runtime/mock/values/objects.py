"""Object values for hypothesis-jsonschema, drawn with hypothesis's public API only.

hypothesis-jsonschema 0.23.1 draws the members of every object through hypothesis's private
`hypothesis.internal.conjecture.utils.many(...).more()`, which hypothesis 6.170.10 removed. Its
`object_schema` is the only caller; `objects_drawn_publicly()` swaps it, while the mock builds
and searches (maker.py, under its lock), for `object_strategy` below, so `mcpgen mock` runs
beside any current hypothesis. The rest of hypothesis-jsonschema (canonicalising and merging
schemas, strings, numbers, arrays, formats) is used as it is, and draws the members' values.

`object_strategy` keeps the library's rules (tests/runtime/mock/test_objects.py compares the two
where the old hypothesis still has `many.more`): required names first, then optional names
(declared, then pattern or free ones) up to `maxProperties` and at least `minProperties`,
`dependencies` honoured; names the codec cannot carry are left out (a required one makes the
object impossible, which the maker reports).
"""

from __future__ import annotations

import contextlib
import importlib
import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # hypothesis is optional (the [mock] extra): imported when a strategy is built
    from hypothesis import strategies as st

__all__ = ["object_strategy", "objects_drawn_publicly"]

# At most this many optional members beyond the required ones (the library's average size).
EXTRA_NAMES: Final = 5
# What object_strategy uses of hypothesis-jsonschema's module (0.23.1); without them it is not swapped in.
LIBRARY_NAMES: Final = (
    "object_schema",
    "__from_schema",
    "merged_as_strategies",
    "from_js_regex",
    "make_validator",
    "FALSEY",
)


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in name


def object_strategy(
    custom_formats: Any, alphabet: Any, schema: dict[str, Any]
) -> st.SearchStrategy[dict[str, Any]]:
    """hypothesis-jsonschema's `object_schema(custom_formats, alphabet, schema)`, for a canonical `schema`."""
    from hypothesis import assume
    from hypothesis import strategies as st

    library: Any = importlib.import_module("hypothesis_jsonschema._from_schema")
    from_schema: Any = getattr(library, "__from_schema")
    falsey = library.FALSEY
    required: list[str] = list(schema.get("required", []))
    min_size = max(len(required), schema.get("minProperties", 0))
    max_size = schema.get("maxProperties", math.inf)
    if min_size > max_size or not all(_encodable(n) for n in required):
        return st.nothing()
    names = dict(schema.get("propertyNames", {}))
    if names == falsey:
        return st.just({}) if min_size == 0 else st.nothing()
    names["type"] = "string"
    properties: dict[str, Any] = schema.get("properties", {})
    patterns: dict[str, Any] = schema.get("patternProperties", {})
    additional = schema.get("additionalProperties", {})
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error:
            return st.just({}) if min_size == 0 and not required else st.nothing()
    dependencies: dict[str, Any] = schema.get("dependencies", {})
    dep_names = {k: v for k, v in dependencies.items() if isinstance(v, list)}
    dep_schemas = {k: v for k, v in dependencies.items() if k not in dep_names}
    valid_name = library.make_validator(names).is_valid
    known = {n for n in set(dep_names).union(dep_schemas, properties) if valid_name(n) and _encodable(n)}
    optional = sorted(known - set(required))
    free_names = [
        from_schema(names, custom_formats=custom_formats, alphabet=alphabet).filter(_encodable)
        if additional != falsey
        else st.nothing(),
        *(library.from_js_regex(p, alphabet=alphabet).filter(valid_name) for p in sorted(patterns)),
    ]
    free = st.one_of([s for s in free_names if not s.is_empty])

    def value_for(name: str) -> st.SearchStrategy[Any]:
        matching = [patterns[p] for p in sorted(patterns) if re.search(p, name) is not None]
        if name in properties:
            matching.insert(0, properties[name])
        if matching:
            merged: st.SearchStrategy[Any] = library.merged_as_strategies(
                matching, alphabet=alphabet, custom_formats=custom_formats
            )
            return merged
        free_value: st.SearchStrategy[Any] = from_schema(
            additional, custom_formats=custom_formats, alphabet=alphabet
        )
        return free_value

    room = max_size - len(required)
    most = int(min(room, max(min_size - len(required), 0) + EXTRA_NAMES))
    least = max(min_size - len(required), 0)

    @st.composite
    def draw_object(draw: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in required:
            out[name] = draw(value_for(name))
        wanted = draw(st.integers(least, most)) if most >= least else least
        picks = draw(st.permutations(optional))[:wanted] if optional else []  # declared names first
        for name in picks:
            out[name] = draw(value_for(name))
        while len(out) < len(required) + wanted and not free.is_empty:
            name = draw(free.filter(lambda n: n not in out))
            out[name] = draw(value_for(name))
        pending = [n for k in dep_names if k in out for n in dep_names[k] if n not in out]
        while pending:  # a present name's dependencies, until none is missing
            name = pending.pop()
            if name in out:
                continue
            assume(_encodable(name))
            out[name] = draw(value_for(name))
            pending += [n for n in dep_names.get(name, []) if n not in out]
        for name, sub in dep_schemas.items():
            if name in out:
                assume(library.make_validator(sub).is_valid(out))
        assume(min_size <= len(out) <= max_size)
        return out

    return draw_object()


@contextlib.contextmanager
def objects_drawn_publicly() -> Iterator[None]:
    """hypothesis-jsonschema's `object_schema` is `object_strategy` inside the block (not thread-safe:
    maker.py holds its lock around it)."""
    library: Any = importlib.import_module("hypothesis_jsonschema._from_schema")
    if not all(hasattr(library, name) for name in LIBRARY_NAMES):  # another release: leave it as it is
        yield
        return
    saved = library.object_schema
    library.object_schema = object_strategy
    try:
        yield
    finally:
        library.object_schema = saved
