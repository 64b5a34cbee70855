"""The fast path: schemas that only use the common keywords compiled into plain predicates
(`fast_predicate`). A predicate accepting an instance is the answer; when it rejects, jsonschema
decides and describes the error (compile.py), so the fast path can only make valid instances cheaper."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from ..patterns import ecma_regex
from ..patterns.pattern_match import PatternTimeout
from .dialects import DRAFT202012, dialect_of
from .ecma_keywords import VALIDATOR_BY_DIALECT, never

Predicate = Callable[[Any], bool]
_OBJECT_KEYWORDS: Final = (
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "dependentRequired",
    "minProperties",
    "maxProperties",
)
# Keywords the predicates implement exactly as jsonschema does for validity.
_FAST_KEYWORDS = frozenset(
    {
        "type",
        *_OBJECT_KEYWORDS,
        "items",
        "minItems",
        "maxItems",
        "enum",
        "const",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "format",  # format: annotation only
    }
)


class _Unsupported(Exception):
    pass


def _always(_: Any) -> bool:
    return True


def _is_number(x: Any) -> bool:
    cls = type(x)  # exact JSON types first: the common case costs two identity checks
    return cls is int or cls is float or (isinstance(x, (int, float)) and not isinstance(x, bool))


def _is_integer(x: Any) -> bool:
    # Draft 6+ (so both dialects here): 1.0 is an integer; booleans never are.
    if isinstance(x, bool):
        return False
    return isinstance(x, int) or (isinstance(x, float) and x.is_integer())


_TYPE_TESTS: dict[str, Predicate] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": _is_number,
    "integer": _is_integer,
}


def _scalar_equal(expected: Any, x: Any) -> bool:
    """jsonschema's `equal` for a scalar `expected`: strings by value, booleans never equal numbers."""
    if expected is x:
        return True
    if isinstance(expected, str) or isinstance(x, str):
        return bool(expected == x)
    if isinstance(expected, bool) or isinstance(x, (bool, dict, list)):
        return False
    return bool(expected == x)


def _member_test(values: list[Any]) -> Predicate:
    if not all(v is None or isinstance(v, (str, int, float, bool)) for v in values):
        raise _Unsupported  # structured enum members: leave to jsonschema
    if all(isinstance(v, str) for v in values):
        options = frozenset(values)
        return lambda x: isinstance(x, str) and x in options
    return lambda x: any(_scalar_equal(v, x) for v in values)


def _all(tests: list[Predicate]) -> Predicate:
    # Plain loops and `and`: a generator per call costs more than most of the tests themselves.
    if not tests:
        return _always
    if len(tests) == 1:
        return tests[0]
    if len(tests) == 2:
        first, second = tests
        return lambda x: first(x) and second(x)

    def every(x: Any) -> bool:
        for test in tests:  # noqa: SIM110 - all() would build a generator per call
            if not test(x):
                return False
        return True

    return every


def _any(tests: list[Predicate]) -> Predicate:
    if len(tests) == 1:
        return tests[0]

    def some(x: Any) -> bool:
        for test in tests:  # noqa: SIM110 - any() would build a generator per call
            if test(x):
                return True
        return False

    return some


def _fast(schema: Any, keywords: frozenset[str], depth: int = 0) -> Predicate:
    """A predicate equivalent to `is_valid` for `schema`, or `_Unsupported`."""
    if schema is True:
        return _always
    if schema is False:
        return never
    if not isinstance(schema, Mapping) or depth > 32:
        raise _Unsupported
    # jsonschema ignores keywords it has no validator for (annotations, x-*): so do we.
    if any(key in keywords and key not in _FAST_KEYWORDS for key in schema):
        raise _Unsupported

    def sub(value: Any) -> Predicate:
        return _fast(value, keywords, depth + 1)

    tests: list[Predicate] = []
    # `"type": "object"` folds into the object test (one isinstance instead of two calls).
    only_objects = schema.get("type") == "object" or schema.get("type") == ["object"]
    object_test = _object_test(schema, sub, only_objects)
    if "type" in schema and not (only_objects and object_test is not None):
        names = [schema["type"]] if isinstance(schema["type"], str) else list(schema["type"])
        if not names:
            raise _Unsupported  # `"type": []` is invalid; the metaschema check reports it
        tests.append(_any([_TYPE_TESTS[name] for name in names]))
    if object_test is not None:
        tests.append(object_test)
    if "enum" in schema:
        tests.append(_member_test(list(schema["enum"])))
    if "const" in schema:
        tests.append(_member_test([schema["const"]]))
    tests.extend(_other_tests(schema, sub))
    return _all(tests)


def _object_test(
    schema: Mapping[str, Any], sub: Callable[[Any], Predicate], only_objects: bool
) -> Predicate | None:
    if not any(key in schema for key in _OBJECT_KEYWORDS):
        return None
    properties = tuple(
        (name, sub(value)) for name, value in schema.get("properties", {}).items() if value is not True
    )  # `true` accepts anything: nothing to check
    known = frozenset(schema.get("properties", {}))
    required = tuple(schema.get("required", ()))
    extra = schema.get("additionalProperties", True)
    extra_test: Predicate | None = None if extra is True else sub(extra)
    names_test = sub(schema["propertyNames"]) if "propertyNames" in schema else None
    dependent = tuple((name, tuple(needs)) for name, needs in schema.get("dependentRequired", {}).items())
    low = schema.get("minProperties", 0)
    high = schema.get("maxProperties")
    bounded = low > 0 or high is not None

    def test(x: Any) -> bool:
        if not isinstance(x, dict):
            return not only_objects
        for name in required:
            if name not in x:
                return False
        for name, check in properties:
            if name in x and not check(x[name]):
                return False
        if extra_test is not None:
            for name, value in x.items():
                if name not in known and not extra_test(value):
                    return False
        if names_test is not None:
            for name in x:
                if not names_test(name):
                    return False
        for name, needs in dependent:
            if name in x:
                for need in needs:
                    if need not in x:
                        return False
        return not bounded or (len(x) >= low and (high is None or len(x) <= high))

    return test


def _other_tests(schema: Mapping[str, Any], sub: Callable[[Any], Predicate]) -> list[Predicate]:
    tests: list[Predicate] = []
    if any(key in schema for key in ("items", "minItems", "maxItems")):
        items = schema.get("items", True)
        if isinstance(items, list):
            raise _Unsupported  # draft-07 tuple form
        item_test = None if items is True else sub(items)
        low, high = schema.get("minItems", 0), schema.get("maxItems")

        def array_test(x: Any) -> bool:
            if not isinstance(x, list):
                return True
            if len(x) < low or (high is not None and len(x) > high):
                return False
            if item_test is not None:
                for item in x:
                    if not item_test(item):
                        return False
            return True

        tests.append(array_test)
    if any(key in schema for key in ("minLength", "maxLength", "pattern")):
        min_len, max_len = schema.get("minLength", 0), schema.get("maxLength")
        search = ecma_regex.search_function(schema["pattern"]) if "pattern" in schema else None

        def string_test(x: Any) -> bool:
            if not isinstance(x, str):
                return True
            if len(x) < min_len or (max_len is not None and len(x) > max_len):
                return False
            try:
                return search is None or search(x)
            except PatternTimeout:
                return False  # jsonschema decides, and names the pointer

        tests.append(string_test)
    bounds = [
        (key, schema[key])
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
        if key in schema
    ]
    if bounds:

        def number_test(x: Any) -> bool:
            if not _is_number(x):
                return True
            for key, limit in bounds:
                if key == "minimum":
                    if x < limit:
                        return False
                elif key == "maximum":
                    if x > limit:
                        return False
                elif key == "exclusiveMinimum":
                    if x <= limit:
                        return False
                elif x >= limit:
                    return False
            return True

        tests.append(number_test)
    if "allOf" in schema:
        tests.append(_all([sub(s) for s in schema["allOf"]]))
    if "anyOf" in schema:
        tests.append(_any([sub(s) for s in schema["anyOf"]]))
    if "oneOf" in schema:
        one_of = [sub(s) for s in schema["oneOf"]]
        tests.append(lambda x: sum(1 for t in one_of if t(x)) == 1)
    if "not" in schema:
        negated = sub(schema["not"])
        tests.append(lambda x: not negated(x))
    if "if" in schema:
        condition = sub(schema["if"])
        then = sub(schema["then"]) if "then" in schema else _always
        otherwise = sub(schema["else"]) if "else" in schema else _always
        tests.append(lambda x: then(x) if condition(x) else otherwise(x))
    return tests


def fast_predicate(schema: Mapping[str, Any] | bool) -> Predicate | None:
    """The fast-path predicate for a (valid) schema, or None when it needs jsonschema."""
    dialect = DRAFT202012 if isinstance(schema, bool) else dialect_of(schema)
    try:
        return _fast(schema, frozenset(VALIDATOR_BY_DIALECT[dialect].VALIDATORS))
    except (_Unsupported, ecma_regex.EcmaSyntaxError, TypeError, KeyError):
        return None
