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
`mcpgen_runtime.schema.compile_schema`; none valid means `ValueGenerationError`.

hypothesis draws strings for `pattern`s with Python's `re`, so each ECMA-262 pattern is handed to
it as its translation (`mcpgen_runtime.ecma_regex`: named groups, ASCII `\\d`, `$` at the very
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

from .. import ecma_regex
from ..schema import Validate, compile_schema
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
        import hypothesis
        import hypothesis_jsonschema  # noqa: F401
        from hypothesis.internal.conjecture import utils as conjecture_utils
    except ImportError as exc:
        raise MockDependencyError(
            f"mcpgen mock generates answers with hypothesis and hypothesis-jsonschema ({exc.name} is not "
            f"installed): {INSTALL_HINT}"
        ) from exc
    # hypothesis-jsonschema 0.23.1 draws object properties through hypothesis's private
    # `many.more()`, which hypothesis 6.170.10 removed; mcpgen-runtime[mock] pins a release that has it.
    if not callable(getattr(conjecture_utils.many, "more", None)):
        raise MockDependencyError(
            f"hypothesis {hypothesis.__version__} is too new for hypothesis-jsonschema "
            f"(it needs hypothesis < 6.170.10): {INSTALL_HINT}"
        )


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
                with warnings.catch_warnings():
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
        if validate(value) is None:
            found.append(value)

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
    from hypothesis.internal.conjecture import providers

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
