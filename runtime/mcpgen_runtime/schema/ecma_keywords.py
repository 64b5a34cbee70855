"""The keywords whose meaning rests on ECMA-262 patterns (MCPGEN-REGEX): `pattern`, `patternProperties`,
and the `additionalProperties`/`unevaluatedProperties` that depend on them, as jsonschema validator
extensions per dialect (`VALIDATOR_BY_DIALECT`), and `format: regex` in meta-schema checks."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from jsonschema import (  # type: ignore[import-untyped]
    Draft7Validator,
    Draft202012Validator,
    FormatChecker,
    validators,
)
from jsonschema.exceptions import (  # type: ignore[import-untyped]
    ValidationError,
)

from ..patterns import ecma_regex
from ..patterns.pattern_match import PatternTimeout
from .dialects import DRAFT7, DRAFT202012


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
    return search if search is not None else never  # not enforced: a key matches no such pattern


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


# Same shape as _unevaluated_properties by design: jsonschema's keyword signature; timeouts answered apart.
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


# Same shape as _additional_properties by design: jsonschema's keyword signature; timeouts answered apart.
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


VALIDATOR_BY_DIALECT: dict[str, Any] = {
    DRAFT202012: _ecma_validator(Draft202012Validator),
    DRAFT7: _ecma_validator(Draft7Validator),
}
META_FORMATS: dict[str, Any] = {
    DRAFT202012: _ecma_format_checker(Draft202012Validator),
    DRAFT7: _ecma_format_checker(Draft7Validator),
}


def never(_: Any) -> bool:
    return False
