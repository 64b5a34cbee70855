"""Values valid against a JSON Schema, drawn deterministically by hypothesis-jsonschema.

`ValueMaker(schema).make(seed)` returns the same value for the same seed, in any process:
hypothesis runs a one-test search of a few examples under `@seed(seed)` with every setting
that could vary pinned here (no example database, no derandomizing, generation phase only,
no deadline, no health checks, the default backend), so a user's hypothesis profile cannot
change the answer. The answer is one of the search's valid examples, picked by the seed too
(the first example of a search is the strategy's simplest value; the others vary with the seed).

The schema hypothesis-jsonschema sees is the one `prepare.py` makes: `examples` and `default`
first, objects with their declared properties only, `$ref`s inlined. Should that schema be
unsatisfiable (a closed object that a composition needs open, say), the maker tries again with
fewer rewrites. Every value is checked against the *original* schema with
`mcpgen_runtime.schema.compile_schema`; none valid means `ValueGenerationError`. Values that
orjson cannot send (a lone surrogate, an integer past 64 bits) count as invalid, and control
characters in strings become `?` where the schema still accepts the result.

Objects are drawn by objects.py (hypothesis's public API) in place of hypothesis-jsonschema's
own, which needs a private hypothesis function that hypothesis 6.170.10 removed.

hypothesis draws strings for `pattern`s with Python's `re`, so each ECMA-262 pattern is handed to
it as its translation (`mcpgen_runtime.patterns.ecma_regex`: named groups, ASCII `\\d`, `$` at the very
end, ...), with `\\p{…}` spelled out as code point ranges; only a variable-width lookbehind, which
`re` cannot run, is left as written.

hypothesis and hypothesis-jsonschema are optional (`pip install 'mcpgen-runtime[mock]'`):
`require_generator()` raises `MockDependencyError` saying so.
"""

from __future__ import annotations

import contextlib
import re
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

import orjson

from ...patterns import ecma_regex
from ...schema import Validate, compile_schema
from .objects import objects_drawn_publicly
from .prepare import UnsupportedSchema, prepare

__all__ = ["MockDependencyError", "ValueGenerationError", "ValueMaker", "require_generator"]

EXAMPLES_PER_DRAW: Final = 4
INSTALL_HINT: Final = "pip install 'mcpgen-runtime[mock]'"


class MockDependencyError(RuntimeError):
    """hypothesis / hypothesis-jsonschema are missing or cannot work together."""


class ValueGenerationError(ValueError):
    """No value valid against the schema could be generated."""


# Attempts, most realistic first: (prefer examples/default, close objects).
_ATTEMPTS: Final = ((True, True), (False, True), (False, False))
# hypothesis keeps global state while a search runs: one maker at a time builds or searches.
_LOCK = threading.RLock()


def require_generator() -> None:
    """Import the generator's libraries, or raise `MockDependencyError` telling how to install them."""
    try:
        import hypothesis  # noqa: F401
        import hypothesis_jsonschema  # noqa: F401
    except ImportError as exc:
        raise MockDependencyError(
            f"mcpgen mock generates answers with hypothesis and hypothesis-jsonschema ({exc.name} is not "
            f"installed): {INSTALL_HINT}"
        ) from exc


class ValueMaker:
    """Deterministic values for one schema; strategies are built on first use and kept."""

    __slots__ = ("_strategies", "_unsupported", "_validate", "schema")

    def __init__(self, schema: Mapping[str, Any] | bool, validate: Validate | None = None) -> None:
        self.schema = schema
        self._validate = validate if validate is not None else compile_schema(schema)
        self._strategies: list[Any] | None = None  # one per attempt, most rewritten first
        self._unsupported: str | None = None  # why prepare() refused the schema

    def make(self, seed: int) -> Any:
        """A value valid against the schema, the same for the same `seed`; `ValueGenerationError` if none."""
        with _LOCK:
            why = self._unsupported or "no attempt"
            for strategy in self._attempts():
                try:
                    with objects_drawn_publicly():
                        found = _draw(strategy, seed, self._validate)
                except Exception as exc:  # hypothesis' own errors: unsatisfiable, invalid schema, ...
                    first_line = str(exc).splitlines()[0][:200] if str(exc) else ""
                    why = f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__
                    continue
                if found:
                    return found[seed % len(found)]
                why = f"none of {EXAMPLES_PER_DRAW} generated values was valid"
            raise ValueGenerationError(why)

    def _attempts(self) -> list[Any]:
        if self._strategies is None:
            require_generator()
            from hypothesis_jsonschema import from_schema

            strategies: list[Any] = []
            seen: list[Any] = []
            for prefer, close in _ATTEMPTS:
                try:
                    prepared = prepare(self.schema, prefer_examples=prefer, close_objects=close)
                except UnsupportedSchema as exc:
                    self._unsupported = str(exc)
                    break  # the rewrites do not change what prepare() refuses
                if prepared in seen:
                    continue
                seen.append(prepared)
                with warnings.catch_warnings(), objects_drawn_publicly():
                    warnings.simplefilter("ignore")
                    strategies.append(from_schema(_python_patterns(prepared), allow_x00=False, codec="utf-8"))
            self._strategies = strategies
        return self._strategies


_DATA_KEYWORDS: Final = frozenset({"enum", "const", "examples", "default"})


def _python_pattern(pattern: str) -> str:
    try:
        translated = ecma_regex.translate(pattern)
    except ecma_regex.EcmaSyntaxError:
        return pattern  # compile_schema refused the schema already; nothing to draw from
    if translated.search is None or translated.python is None:
        return pattern
    if not translated.needs_regex:
        return translated.python
    expanded = ecma_regex.expand_properties(translated.python)
    try:
        re.compile(expanded)
    except re.error:  # a variable-width lookbehind: hypothesis cannot draw from it
        return pattern
    return expanded


def _python_patterns(node: Any) -> Any:
    """The prepared schema with every `pattern` (and `patternProperties` name) in Python's syntax."""
    if isinstance(node, list):
        return [_python_patterns(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DATA_KEYWORDS:
            out[key] = value
        elif key == "pattern" and isinstance(value, str):
            out[key] = _python_pattern(value)
        elif key == "patternProperties" and isinstance(value, dict):
            out[key] = {_python_pattern(name): _python_patterns(sub) for name, sub in value.items()}
        else:
            out[key] = _python_patterns(value)
    return out


def _draw(strategy: Any, seed: int, validate: Validate) -> list[Any]:
    """The valid values among the first `EXAMPLES_PER_DRAW` examples of a search seeded with `seed`."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as seeded

    found: list[Any] = []

    def collect(value: Any) -> None:
        if validate(value) is not None or not _sendable(value):
            return
        tidy = _printable(value)
        found.append(tidy if tidy is value or validate(tidy) is None else value)

    pinned = settings(
        database=None,
        derandomize=False,
        max_examples=EXAMPLES_PER_DRAW,
        phases=(Phase.generate,),
        deadline=None,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
        report_multiple_bugs=False,
        backend="hypothesis",
    )
    test: Any = given(strategy)(collect)  # type: ignore[no-untyped-call]  # given() returns an untyped wrapper
    search: Callable[[], None] = seeded(seed)(pinned(test))
    with warnings.catch_warnings(), _without_local_constants():
        warnings.simplefilter("ignore")
        search()
    return found


@contextlib.contextmanager
def _without_local_constants() -> Iterator[None]:
    """Hide the literals hypothesis collects from the caller's own modules.

    Since 6.131 hypothesis sometimes draws a string or number written in a "local" (not
    installed) module that happens to be imported — which would make an answer depend on
    the importing process and the user's code, and writes a cache to `.hypothesis/`. There is
    no setting for it, so its two private hooks are swapped for empty ones while a search
    runs (under `_LOCK`); tests/runtime/mock/test_values.py proves answers stay the same.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # older releases (6.103 here) have no providers module, nor local constants
        yield
        return
    if not hasattr(providers, "_get_local_constants"):  # a release without local constants
        yield
        return
    from hypothesis.internal.constants_ast import Constants

    empty = Constants()
    saved = providers._get_local_constants, providers.CONSTANTS_CACHE
    providers._get_local_constants = lambda: empty
    providers.CONSTANTS_CACHE = type(saved[1])(1024)  # cached (global, local) pools per constraint
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = saved


_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _sendable(value: Any) -> bool:
    """orjson writes it: strings without lone surrogates, integers within 64 bits."""
    try:
        orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return False
    return True


def _printable(value: Any) -> Any:
    """`value` with the control characters of its strings (keys too) replaced by `?`; `value`
    itself when there were none."""
    if isinstance(value, str):
        return _CONTROL.sub("?", value) if _CONTROL.search(value) else value
    if isinstance(value, list):
        items = [_printable(v) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    if isinstance(value, dict):
        pairs = [(_printable(k), _printable(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)):
            return value
        tidy: dict[str, Any] = {}
        for key, item in pairs:
            while key in tidy:  # two keys that became one: the later gets a `_`
                key += "_"
            tidy[key] = item
        return tidy
    return value
