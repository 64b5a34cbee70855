"""`compile_schema`: one schema compiled once into a validator that answers the most relevant issue or
None; the fast path first, jsonschema when it rejects, bounded in depth and in pattern time."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import chain
from typing import Any

import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema.exceptions import (  # type: ignore[import-untyped]
    SchemaError,
    ValidationError,
    best_match,
)

from ..patterns import ecma_regex, pattern_match
from ..patterns.pattern_match import PatternTimeout
from .dialects import (
    DRAFT202012,
    LABEL,
    LOCAL_ONLY,
    MAX_INSTANCE_DEPTH,
    MESSAGE_LIMIT,
    SchemaCompileError,
    SchemaIssue,
    Validate,
    check_refs,
    dialect_of,
    json_pointer,
)
from .ecma_keywords import META_FORMATS, VALIDATOR_BY_DIALECT
from .fast_path import fast_predicate


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
    if len(message) > MESSAGE_LIMIT:
        message = message[: MESSAGE_LIMIT - 1] + "…"
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
    cls = VALIDATOR_BY_DIALECT[dialect]
    try:
        cls.check_schema(schema, format_checker=META_FORMATS[dialect])
    except SchemaError as exc:
        where = json_pointer(exc.absolute_path)
        raise SchemaCompileError(f"invalid {LABEL[dialect]} schema at {where or '/'}: {exc.message}") from exc
    if isinstance(schema, Mapping):
        check_refs(schema, dialect)
    validator = cls(schema, registry=LOCAL_ONLY)
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
