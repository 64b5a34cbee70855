"""Matching translated ECMA-262 patterns in bounded time (MCPGEN-REGEX-BUDGET).

A schema's `pattern` comes from whoever wrote the tool definition, and a backtracking engine can
take time exponential in the input for some patterns (`^(a+)+$` on thirty `a`s and a `b`): one
argument would stall the event loop and every other caller. So no pattern is matched by Python's
`re`:

- a pattern without backreferences, lookaround or `\\p{…}` (a regular language) is matched by RE2
  (google-re2): time linear in the input, whatever the pattern;
- the others need backtracking and are matched by the `regex` package with a time budget: the
  checks of one value (one call's arguments, one result) may spend `time_budget()` seconds in such
  patterns, after which the match stops with `PatternTimeout` and the value is refused. The
  match that ran out says so (`ran_out`); the ones after it stop at once (`ran_out` False), so the
  caller can name the string that cost the time. `refusal()` keeps the first, so a timeout inside
  `not` or `anyOf` still refuses the value.

`set_time_budget` changes the budget for the whole process (clients and servers alike). Without
google-re2 installed every pattern takes the budgeted path; so does text RE2 cannot take (a lone
surrogate, which UTF-8 cannot encode).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import Any, Final, Literal

__all__ = [
    "DEFAULT_TIME_BUDGET_S",
    "Engine",
    "PatternTimeout",
    "compile_search",
    "end_budget",
    "refusal",
    "renew_budget",
    "set_time_budget",
    "start_budget",
    "time_budget",
]

DEFAULT_TIME_BUDGET_S: Final = 0.1
"""Seconds the backtracking patterns of one value may take: legitimate inputs take microseconds."""

Engine = Literal["re2", "regex"]
Search = Callable[[str], bool]

_budget_s = DEFAULT_TIME_BUDGET_S


def set_time_budget(seconds: float) -> None:
    """Set the seconds one value's backtracking patterns may take in this process (default 0.1)."""
    global _budget_s
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not math.isfinite(seconds):
        raise ValueError(f"the pattern time budget must be a finite number of seconds, not {seconds!r}")
    if seconds <= 0:
        raise ValueError(f"the pattern time budget must be positive, not {seconds!r}")
    _budget_s = float(seconds)


def time_budget() -> float:
    return _budget_s


class PatternTimeout(Exception):
    """A backtracking pattern used up the time budget: the value it was checking is refused."""

    def __init__(self, pattern: str, ran_out: bool) -> None:
        super().__init__(
            f"matching {pattern[:100]!r} took longer than the pattern time budget "
            f"({_budget_s:g} s); the value is refused"
        )
        self.pattern = pattern
        self.ran_out = ran_out  # this match used the time up (False: the budget was gone already)
        self.key: str | None = None  # the object key being matched, when the caller knows it


class _Budget:
    """The deadline of one value's checks, and the (pattern, text) pairs that already ran out."""

    __slots__ = ("deadline", "first", "spent")

    def __init__(self) -> None:
        self.deadline = time.monotonic() + _budget_s
        self.spent: set[tuple[int, int]] = set()  # ids: the value (so its strings) outlives the scope
        self.first: PatternTimeout | None = None


_SCOPE: ContextVar[_Budget | None] = ContextVar("mcpgen_pattern_budget", default=None)


def start_budget() -> Token[_Budget | None]:
    """Start the budget of one value's checks (`end_budget` ends it)."""
    return _SCOPE.set(_Budget())


def renew_budget() -> None:
    """A second pass over the same value gets the budget again; a match that ran out stays out."""
    scope = _SCOPE.get()
    if scope is not None:
        scope.deadline = time.monotonic() + _budget_s


def end_budget(token: Token[_Budget | None]) -> None:
    _SCOPE.reset(token)


def refusal() -> PatternTimeout | None:
    """The first match of the current value's checks that ran out of time, if one did."""
    scope = _SCOPE.get()
    return None if scope is None else scope.first


def _budgeted(compiled: Any, source: str) -> Search:
    def search(text: str) -> bool:
        scope = _SCOPE.get()
        if scope is None:  # outside a value's checks: this one match gets the whole budget
            left = _budget_s
        else:
            if (id(search), id(text)) in scope.spent:
                raise PatternTimeout(source, ran_out=True)
            left = scope.deadline - time.monotonic()
            if left <= 0:
                raise PatternTimeout(source, ran_out=False)
        try:
            return compiled.search(text, timeout=left) is not None
        except TimeoutError:
            timeout = PatternTimeout(source, ran_out=True)
            if scope is not None:
                scope.spent.add((id(search), id(text)))
                scope.first = scope.first or timeout
                scope.deadline = 0.0  # spent, whatever the engine's own clock left over
            raise timeout from None

    return search


def _linear(re2_source: str, fallback: Callable[[], Search]) -> Search | None:
    """RE2's search for `re2_source`, or None when RE2 is absent or refuses it (a repeat count over
    1000, a program over its memory bound)."""
    try:
        from re2 import _re2  # type: ignore[import-untyped, import-not-found, unused-ignore]

        options = _re2.RE2.Options()
        options.log_errors = False
        options.never_capture = True
        compiled = _re2.RE2(re2_source.encode("utf-8"), options)
        if not compiled.ok():
            return None
        match = compiled.Match
        unanchored = _re2.RE2.Anchor.UNANCHORED
        match(unanchored, b"", 0, 0)[0][0]  # the binding's shape, checked once
    except (ImportError, AttributeError, TypeError, IndexError):
        # `_re2` is the binding's own module, not its public API: a release that reshapes it makes
        # every pattern take the budgeted path rather than fail.
        return None
    others: list[Search] = []

    # The public `re2.search` builds a match object and maps byte offsets back (about 5 µs);
    # asking the compiled program directly costs about 1 µs.
    def search(text: str) -> bool:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: not UTF-8, so the backtracking engine decides
            if not others:
                others.append(fallback())
            return others[0](text)
        return bool(match(unanchored, data, 0, len(data))[0][0] >= 0)

    return search


def compile_search(pattern: str, python: str, re2_source: str | None) -> tuple[Search, Engine]:
    """A bounded `search` for `pattern` translated: RE2 when `re2_source` is given and RE2 takes it,
    else `python` compiled by `regex` (V0, `re`'s syntax) with the time budget. Raises what `regex`
    raises for a translation it refuses."""

    def backtracking() -> Search:
        import regex  # type: ignore[import-untyped, import-not-found, unused-ignore]

        return _budgeted(regex.compile(python, regex.V0), pattern)

    if re2_source is not None:
        linear = _linear(re2_source, backtracking)
        if linear is not None:
            return linear, "re2"
    return backtracking(), "regex"
