"""JSON Schema validators compiled once per schema (SCHEMA-01..11).

Dialects: a schema without `$schema` is 2020-12 (SCHEMA-01/02); `$schema` may also name
draft-07. Anything else is refused with `SchemaDialectError` (SCHEMA-03/06).

`$ref`s are resolved only inside the schema itself (`#/$defs/…`, `$anchor`, embedded
`$id`s) and against the bundled meta-schemas; nothing is ever fetched (SCHEMA-08). Every
`$ref` is resolved once at compile time, so a schema with an unresolvable (e.g. remote)
reference fails loudly instead of validating permissively (SCHEMA-10).

Format assertions are off: 2020-12 treats `format` as an annotation, and checking costs
time on every call.

Patterns (`pattern`, `patternProperties`, and the `additionalProperties`/`unevaluatedProperties`
that depend on them) are ECMA-262 regular expressions (MCPGEN-REGEX): `ecma_regex` translates each
once, so `\\d` is ASCII, `$` is the very end, `(?<name>…)` and `\\p{L}` work; a schema whose
pattern is invalid in ECMA-262 is refused, and a valid pattern without a faithful translation is
not enforced (the generator warns). Matching is bounded (pattern_match.py, MCPGEN-REGEX-BUDGET): the
backtracking patterns of one value share one time budget, and a match that runs out of it refuses
the value with an issue at the pointer of the string (or key) it was matching.

Speed: jsonschema builds a validator object per subschema visit, which costs ~100 µs for
a three-property object. Schemas that only use the common keywords (type, properties,
required, additionalProperties, items, enum/const, bounds, pattern, allOf/anyOf/oneOf/not,
if/then/else) are also compiled into plain predicates. A predicate accepting the instance
is the answer; when it rejects (or the schema uses other keywords), jsonschema decides and
describes the error, so the fast path can only ever make valid instances cheaper.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from typing import Any, NamedTuple, cast

import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema import (  # type: ignore[import-untyped]
    Draft7Validator,
    Draft202012Validator,
    FormatChecker,
    validators,
)
from jsonschema.exceptions import (  # type: ignore[import-untyped]
    SchemaError,
    ValidationError,
    best_match,
)
from jsonschema_specifications import REGISTRY as _META_SCHEMAS  # type: ignore[import-untyped]
from referencing._core import Resolver  # not re-exported; used for a type only

from .patterns import ecma_regex, pattern_match
from .patterns.pattern_match import PatternTimeout

__all__ = [
    "DRAFT7",
    "DRAFT202012",
    "SchemaCompileError",
    "SchemaDialectError",
    "SchemaIssue",
    "Validate",
    "compile_schema",
    "dialect_of",
    "json_pointer",
]

DRAFT202012 = "https://json-schema.org/draft/2020-12/schema"
DRAFT7 = "http://json-schema.org/draft-07/schema"

# `$schema` spellings seen in the wild: with/without the empty fragment, http or https.
_DIALECTS: dict[str, str] = {
    "https://json-schema.org/draft/2020-12/schema": DRAFT202012,
    "http://json-schema.org/draft/2020-12/schema": DRAFT202012,
    "http://json-schema.org/draft-07/schema": DRAFT7,
    "https://json-schema.org/draft-07/schema": DRAFT7,
}


# ---- ECMA-262 patterns (MCPGEN-REGEX) ------------------------------------------------------


def _pattern(
    validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "string"):
        return
    search = ecma_regex.search_function(pattern)
    try:
        if search is not None and not search(instance):
            yield ValidationError(f"{instance!r} does not match {pattern!r}")
    except PatternTimeout as exc:
        if exc.ran_out:  # the others: the value is refused already (`pattern_match.refusal`)
            yield ValidationError(str(exc))


def _matching(pattern: str) -> Callable[[str], bool]:
    search = ecma_regex.search_function(pattern)
    return search if search is not None else _never  # not enforced: a key matches no such pattern


def _pattern_properties(
    validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        search = _matching(pattern)
        for key, value in instance.items():
            try:
                matched = search(key)
            except PatternTimeout as exc:
                if exc.ran_out:
                    yield ValidationError(str(exc), path=(key,))
                continue
            if matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _extras(instance: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    known = schema.get("properties", {})
    searches = [_matching(p) for p in schema.get("patternProperties", {})]
    extras: list[str] = []
    for key in instance:
        if key in known:
            continue
        try:
            if not any(search(key) for search in searches):
                extras.append(key)
        except PatternTimeout as exc:
            if exc.ran_out:
                exc.key = key
                raise
    return extras


def _additional_properties(
    validator: Any, extra: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    try:
        extras = _extras(instance, schema)
    except PatternTimeout as exc:
        yield ValidationError(str(exc), path=() if exc.key is None else (exc.key,))
        return
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        shown = ", ".join(repr(k) for k in sorted(extras))
        if "patternProperties" in schema:
            patterns = ", ".join(repr(p) for p in sorted(schema["patternProperties"]))
            yield ValidationError(
                f"{shown} {'does' if len(extras) == 1 else 'do'} not match any of the regexes: {patterns}"
            )
        else:
            yield ValidationError(
                f"Additional properties are not allowed "
                f"({shown} {'was' if len(extras) == 1 else 'were'} unexpected)"
            )


def _valid(errors: Iterator[ValidationError]) -> bool:
    return next(errors, None) is None


def _evaluated_keys(validator: Any, instance: Mapping[str, Any], schema: Any) -> set[str]:
    """jsonschema's `find_evaluated_property_keys_by_schema` (4.26), with `patternProperties` names
    matched as ECMA-262 patterns: the keys `unevaluatedProperties` must leave alone."""
    if validator.is_type(schema, "boolean"):
        return set()
    keys: set[str] = set()
    for keyword in ("$ref", "$dynamicRef"):
        ref = schema.get(keyword)
        if ref is not None:
            resolved = validator._resolver.lookup(ref)
            inner = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            keys |= _evaluated_keys(inner, instance, resolved.contents)
    properties = schema.get("properties")
    if validator.is_type(properties, "object"):
        keys |= properties.keys() & instance.keys()
    for keyword in ("additionalProperties", "unevaluatedProperties"):
        sub = schema.get(keyword)
        if sub is not None:
            keys |= {k for k, v in instance.items() if _valid(validator.descend(v, sub))}
    if "patternProperties" in schema:
        searches = [_matching(p) for p in schema["patternProperties"]]
        keys |= {k for k in instance if any(search(k) for search in searches)}
    for name, sub in schema.get("dependentSchemas", {}).items():
        if name in instance:
            keys |= _evaluated_keys(validator, instance, sub)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for sub in schema.get(keyword, []):
            if _valid(validator.descend(instance, sub)):
                keys |= _evaluated_keys(validator, instance, sub)
    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys |= _evaluated_keys(validator, instance, schema["if"])
            if "then" in schema:
                keys |= _evaluated_keys(validator, instance, schema["then"])
        elif "else" in schema:
            keys |= _evaluated_keys(validator, instance, schema["else"])
    return keys


def _unevaluated_properties(
    validator: Any, unevaluated: Any, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    try:
        evaluated = _evaluated_keys(validator, instance, schema)
    except PatternTimeout as exc:
        if exc.ran_out:
            yield ValidationError(str(exc))
        return
    failed = [
        key
        for key in instance
        if key not in evaluated
        and not _valid(validator.descend(instance[key], unevaluated, path=key, schema_path=key))
    ]
    if failed:
        shown = ", ".join(repr(k) for k in sorted(failed))
        verb = "was" if len(failed) == 1 else "were"
        if unevaluated is False:
            yield ValidationError(f"Unevaluated properties are not allowed ({shown} {verb} unexpected)")
        else:
            yield ValidationError(
                f"Unevaluated properties are not valid under the given schema "
                f"({shown} {verb} unevaluated and invalid)"
            )


def _is_ecma_regex(instance: object) -> bool:
    return ecma_regex.is_valid(instance)


def _ecma_validator(base: Any) -> Any:
    return validators.extend(
        base,
        {
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
            **(
                {"unevaluatedProperties": _unevaluated_properties}
                if "unevaluatedProperties" in base.VALIDATORS
                else {}
            ),
        },
    )


def _ecma_format_checker(base: Any) -> Any:
    """The meta-schema's format checker with `format: regex` meaning ECMA-262 (what `pattern` holds)."""
    checker = FormatChecker(formats=())
    checker.checkers = {**base.FORMAT_CHECKER.checkers, "regex": (_is_ecma_regex, ())}
    return checker


_VALIDATOR_BY_DIALECT: dict[str, Any] = {
    DRAFT202012: _ecma_validator(Draft202012Validator),
    DRAFT7: _ecma_validator(Draft7Validator),
}
_META_FORMATS: dict[str, Any] = {
    DRAFT202012: _ecma_format_checker(Draft202012Validator),
    DRAFT7: _ecma_format_checker(Draft7Validator),
}
_LABEL = {DRAFT202012: "2020-12", DRAFT7: "draft-07"}
_SPEC_BY_DIALECT = {DRAFT202012: referencing.jsonschema.DRAFT202012, DRAFT7: referencing.jsonschema.DRAFT7}

# SCHEMA-11: bound what one schema may cost to compile (hostile definitions).
MAX_SUBSCHEMAS = 10_000
_MESSAGE_LIMIT = 300
MAX_INSTANCE_DEPTH = 100
"""Values nested deeper are refused before jsonschema sees them: it recurses once per level (and
so does the `repr` in its messages), so the limit is ours, not Python's recursion limit."""


class SchemaCompileError(ValueError):
    """The schema cannot be used: invalid for its dialect, or a `$ref` that does not resolve locally."""


class SchemaDialectError(SchemaCompileError):
    """`$schema` names a dialect this runtime does not support (SCHEMA-06)."""


class SchemaIssue(NamedTuple):
    """Why an instance failed: where (RFC 6901 pointer into the instance) and what."""

    pointer: str
    message: str

    def describe(self) -> str:
        return f"at {self.pointer or '/'}: {self.message}"


Validate = Callable[[Any], "SchemaIssue | None"]


def _refuse_retrieval(uri: str) -> referencing.Resource[Any]:
    # SCHEMA-08: never dereference anything outside the document.
    raise referencing.exceptions.NoSuchResource(uri)


_NO_FETCH: referencing.Registry[Any] = referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]
# Meta-schemas are bundled with jsonschema, so `$ref`s to them resolve without a network.
_LOCAL_ONLY: referencing.Registry[Any] = cast("referencing.Registry[Any]", _META_SCHEMAS).combine(_NO_FETCH)


def dialect_of(schema: Mapping[str, Any]) -> str:
    """The dialect URI a schema is written in (2020-12 when `$schema` is absent)."""
    declared = schema.get("$schema")
    if declared is None:
        return DRAFT202012
    if not isinstance(declared, str):
        raise SchemaDialectError(f"$schema must be a string, not {type(declared).__name__}")
    dialect = _DIALECTS.get(declared.rstrip("#"))
    if dialect is None:
        raise SchemaDialectError(
            f"unsupported JSON Schema dialect {declared!r}; "
            f"supported: 2020-12 ({DRAFT202012}) and draft-07 ({DRAFT7})"
        )
    return dialect


def json_pointer(path: Any) -> str:
    """RFC 6901 pointer for a sequence of keys/indexes."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


def _check_refs(schema: Mapping[str, Any], dialect: str) -> None:
    """Resolve every `$ref`/`$dynamicRef` once, so broken or remote ones fail at startup (SCHEMA-10)."""
    root = _SPEC_BY_DIALECT[dialect].create_resource(schema)
    stack: list[tuple[referencing.Resource[Any], Resolver[Any]]] = [
        (root, _LOCAL_ONLY.resolver_with_root(root))
    ]
    seen = 0
    while stack:
        resource, resolver = stack.pop()
        seen += 1
        if seen > MAX_SUBSCHEMAS:
            raise SchemaCompileError(f"schema has more than {MAX_SUBSCHEMAS} subschemas")
        contents = resource.contents
        if isinstance(contents, Mapping):
            for keyword in ("$ref", "$dynamicRef"):
                ref = contents.get(keyword)
                if isinstance(ref, str):
                    try:
                        resolver.lookup(ref)
                    except referencing.exceptions.Unresolvable as exc:
                        why = (
                            "does not resolve within the schema"
                            if ref.startswith("#")
                            else "cannot be resolved inside the schema; external references are never fetched"
                        )
                        raise SchemaCompileError(f"{keyword} {ref!r} {why}") from exc
        for sub in resource.subresources():
            stack.append((sub, resolver.in_subresource(sub)))


# ---- fast path: predicates for the common keywords ------------------------------------

Predicate = Callable[[Any], bool]
# Keywords the predicates implement exactly as jsonschema does for validity.
_FAST_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "propertyNames",
        "dependentRequired",
        "minProperties",
        "maxProperties",
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


def _never(_: Any) -> bool:
    return False


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
        return _never
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
    keys = (
        "properties",
        "required",
        "additionalProperties",
        "propertyNames",
        "dependentRequired",
        "minProperties",
        "maxProperties",
    )
    if not any(key in schema for key in keys):
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
        return _fast(schema, frozenset(_VALIDATOR_BY_DIALECT[dialect].VALIDATORS))
    except (_Unsupported, ecma_regex.EcmaSyntaxError, TypeError, KeyError):
        return None


def deeper_than(value: Any, limit: int) -> str | None:
    """The JSON pointer of the first container nested more than `limit` levels deep in `value`,
    or None. Iterative: any depth is safe to measure."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, pointer = stack.pop()
        if isinstance(item, dict):
            children: Iterable[tuple[Any, Any]] = item.items()
        elif isinstance(item, list):
            children = enumerate(item)
        else:
            continue
        if depth >= limit:
            return pointer
        for key, child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1, pointer + json_pointer((key,))))
    return None


def _issue(error: ValidationError) -> SchemaIssue:
    message = str(error.message)
    if len(message) > _MESSAGE_LIMIT:
        message = message[: _MESSAGE_LIMIT - 1] + "…"
    return SchemaIssue(json_pointer(error.absolute_path), message)


def compile_schema(schema: Mapping[str, Any] | bool) -> Validate:
    """Build a validator for `schema` once; the returned callable gives the most relevant issue or None.

    Raises `SchemaDialectError` for an unsupported `$schema`, `SchemaCompileError` for a
    schema that is invalid in its dialect (SCHEMA-07) or has a `$ref` that does not resolve.
    """
    if isinstance(schema, bool):
        dialect = DRAFT202012
    elif isinstance(schema, Mapping):
        dialect = dialect_of(schema)
    else:
        raise SchemaCompileError(f"a schema must be an object or a boolean, not {type(schema).__name__}")
    cls = _VALIDATOR_BY_DIALECT[dialect]
    try:
        cls.check_schema(schema, format_checker=_META_FORMATS[dialect])
    except SchemaError as exc:
        where = json_pointer(exc.absolute_path)
        raise SchemaCompileError(
            f"invalid {_LABEL[dialect]} schema at {where or '/'}: {exc.message}"
        ) from exc
    if isinstance(schema, Mapping):
        _check_refs(schema, dialect)
    validator = cls(schema, registry=_LOCAL_ONLY)
    iter_errors: Callable[[Any], Iterator[ValidationError]] = validator.iter_errors
    fast = fast_predicate(schema)

    def checked(instance: Any) -> SchemaIssue | None:
        if fast is not None and fast(instance) and pattern_match.refusal() is None:
            return None
        too_deep = deeper_than(instance, MAX_INSTANCE_DEPTH)
        if too_deep is not None:
            return SchemaIssue(too_deep, f"nested more than {MAX_INSTANCE_DEPTH} levels deep")
        pattern_match.renew_budget()  # the fast path may have spent it; what ran out stays out
        try:
            errors = iter_errors(instance)
            first = next(errors, None)
            if first is None:  # the hot path: a valid instance costs one pass
                refused = pattern_match.refusal()  # inside `not` or `anyOf`: refused all the same
                return None if refused is None else SchemaIssue("", str(refused))
            best = best_match(chain((first,), errors))
        except referencing.exceptions.Unresolvable as exc:  # pragma: no cover - ruled out at compile time
            return SchemaIssue("", f"schema reference cannot be resolved: {exc}")
        except PatternTimeout as exc:  # a safeguard: the pattern keywords above answer it themselves
            return SchemaIssue("", str(exc))
        return _issue(best if best is not None else first)

    if not _backtracking(schema):
        return checked  # RE2 matches every pattern: linear time, no budget to keep

    def validate(instance: Any) -> SchemaIssue | None:
        budget = pattern_match.start_budget()  # MCPGEN-REGEX-BUDGET: one budget per value
        try:
            return checked(instance)
        finally:
            pattern_match.end_budget(budget)

    return validate


def _backtracking(schema: Mapping[str, Any] | bool) -> bool:
    """Whether some `pattern` or `patternProperties` name of `schema` is matched by the backtracking
    engine (so its checks need a time budget). Reads every object of the schema, data included:
    a `pattern` member of an `enum` value at worst costs a budget nobody spends."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, Mapping):
            found = (
                list(node.get("patternProperties", {}))
                if isinstance(node.get("patternProperties"), Mapping)
                else []
            )
            if isinstance(node.get("pattern"), str):
                found.append(node["pattern"])
            for pattern in found:
                try:
                    if ecma_regex.translate(pattern).engine == "regex":
                        return True
                except ecma_regex.EcmaSyntaxError:
                    continue
            stack.extend(node.values())
    return False
