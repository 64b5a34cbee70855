"""JSON Schema `pattern`s as ECMA-262 (`u` flag) regular expressions, enforced in Python (MCPGEN-REGEX).

JSON Schema patterns are ECMA-262 regular expressions with the `u` flag's semantics. `translate`
parses one with the ECMA-262 grammar (Annex B left out, as the `u` flag requires), so a pattern
invalid in ECMA-262 raises `EcmaSyntaxError` with its position, and writes an equivalent for
Python's `re` where the two differ:

    \\d \\w \\b and their negations   ASCII only ([0-9], [A-Za-z0-9_])
    \\s                              ECMA WhiteSpace and LineTerminator, not Python's set
    .                               anything but \\n \\r \\u2028 \\u2029
    $                               the very end of the input (Python's `$` also matches before a final \\n)
    (?<name>…) \\k<name>             numbered groups and backreferences
    \\1 before its group, or inside it   the empty string (Python refuses to compile these)
    \\1 to a group that did not match    the empty string ((?(1)\\1)); Python's match fails
    \\u{…}, \\uD83D\\uDC32, astral text    one code point, as Python strings hold them
    [^] []                          any character; nothing

`\\p{…}`/`\\P{…}` (the property names ECMA-262 allows, checked against the table below: Node 22,
Unicode 17) and lookbehind of variable width need the `regex` package's syntax.

Matching is bounded (pattern_match.py, MCPGEN-REGEX-BUDGET): a pattern without backreferences,
lookaround or properties is also written in RE2's syntax (`EcmaPattern.re2`) and matched in linear
time; the others are matched by `regex` with a time budget. `EcmaPattern.hazard` says why a pattern
can backtrack catastrophically in other engines (ecma_hazards.py).

Where no faithful equivalent exists (a backreference to a group inside a repeated group or a
lookbehind: ECMA resets such captures per iteration and matches lookbehind backwards; a repeat count
past 2**32-2; a property or a nesting depth the engine refuses), the pattern is `enforced = False`
with a `reason`: callers skip that one pattern and say so.

Nothing of the pattern text becomes code: it is parsed character by character and the output
is built from escapes (`\\uXXXX`), so the translation can only ever mean what the parser read.

The parser is ecma_parser.py (the property-name tables: ecma_properties.py); this module emits.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from . import pattern_match
from .ecma_hazards import hazard
from .ecma_parser import MAX_REPEAT, WORD, EcmaSyntaxError, Node, Parser, Ranges, Unfaithful

__all__ = ["EcmaPattern", "EcmaSyntaxError", "expand_properties", "search_function", "translate"]


class _NotRegular(Exception):
    """Needs backtracking (lookaround, a backreference, a property): no RE2 form."""


@dataclass(frozen=True)
class EcmaPattern:
    """One pattern, translated: `python` is what `re` (or `regex`, when `needs_regex`) compiles,
    `re2` the same in RE2's syntax when the pattern needs no backtracking; `engine` says which one
    `search` uses ("re2": linear time; "regex": within the time budget)."""

    source: str
    python: str | None
    needs_regex: bool = False
    reason: str | None = None  # why the pattern is not enforced (python is None)
    search: Callable[[str], bool] | None = field(default=None, compare=False, repr=False)
    re2: str | None = None
    engine: pattern_match.Engine | None = None
    hazard: str | None = None  # why it can backtrack catastrophically in a backtracking engine

    @property
    def enforced(self) -> bool:
        return self.search is not None


# ---- emitting ------------------------------------------------------------------------------


def _char(cp: int) -> str:
    if cp < 0x80 and chr(cp).isalnum():
        return chr(cp)
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def _re2_char(cp: int) -> str:
    if cp < 0x80 and chr(cp).isalnum():
        return chr(cp)
    return f"\\x{{{cp:x}}}"


def _ranges(ranges: Ranges, char: Callable[[int], str] = _char) -> str:
    merged: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return "".join(char(lo) if lo == hi else f"{char(lo)}-{char(hi)}" for lo, hi in merged)


_WORD_CLASS: Final = "[" + _ranges(WORD) + "]"
_BOUNDARY: Final = f"(?:(?<={_WORD_CLASS})(?!{_WORD_CLASS})|(?<!{_WORD_CLASS})(?={_WORD_CLASS}))"
_NOT_BOUNDARY: Final = f"(?:(?<={_WORD_CLASS})(?={_WORD_CLASS})|(?<!{_WORD_CLASS})(?!{_WORD_CLASS}))"


@dataclass
class _GroupInfo:
    repeated: bool = False  # inside a quantifier that may run more than once
    behind: bool = False  # inside a lookbehind


class _Emitter:
    def __init__(self, parser: Parser) -> None:
        self.parser = parser
        self.info: dict[int, _GroupInfo] = {}
        self.closed: set[int] = set()
        self.needs_regex = False

    def survey(self, node: Node, repeated: bool, behind: bool) -> None:
        kind = node[0]
        if kind in ("seq", "alt"):
            for child in node[1]:
                self.survey(child, repeated, behind)
        elif kind == "group":
            if node[1] is not None:
                self.info[node[1]] = _GroupInfo(repeated, behind)
            self.survey(node[2], repeated, behind)
        elif kind == "look":
            self.survey(node[2], repeated, behind or node[1] in ("<=", "<!"))
        elif kind == "quant":
            self.survey(node[1], repeated or node[3] is None or node[3] > 1, behind)

    def resolve(self, node: Node) -> int:
        ref, at = node[1], node[2]
        if isinstance(ref, str):
            if ref not in self.parser.names:
                raise self.parser.fail(f"invalid named reference {ref!r}", at)
            return self.parser.names[ref]
        if ref > self.parser.groups:
            raise self.parser.fail(
                f"invalid escape: backreference \\{ref} to a group that does not exist", at
            )
        return int(ref)

    def check_refs(self, node: Node) -> None:
        """Every backreference names a group that exists (an error in ECMA-262 otherwise)."""
        kind = node[0]
        if kind == "ref":
            self.resolve(node)
        elif kind in ("seq", "alt"):
            for child in node[1]:
                self.check_refs(child)
        elif kind in ("group", "look"):
            self.check_refs(node[2])
        elif kind == "quant":
            self.check_refs(node[1])

    def emit(self, node: Node, behind: bool = False) -> str:
        kind = node[0]
        if kind == "seq":
            return "".join(self.emit(child, behind) for child in node[1])
        if kind == "alt":
            return "|".join(self.emit(child, behind) for child in node[1])
        if kind == "chars":
            ranges, negated = node[1], node[2]
            if not negated and len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
                return _char(ranges[0][0])
            return ("[^" if negated else "[") + _ranges(ranges) + "]"
        if kind == "prop":
            self.needs_regex = True
            return str(node[1])
        if kind == "class":
            negated, ranges, props = node[1], node[2], node[3]
            if props:
                self.needs_regex = True
            if not ranges and not props:
                return "[\\u0000-\\U0010ffff]" if negated else "(?!)"
            return ("[^" if negated else "[") + _ranges(ranges) + "".join(props) + "]"
        if kind == "bol":
            return "^"
        if kind == "eol":
            return "\\Z"
        if kind == "wordb":
            return _NOT_BOUNDARY if node[1] else _BOUNDARY
        if kind == "group":
            index, body = node[1], node[2]
            if index is None:
                return "(?:" + self.emit(body, behind) + ")"
            inner = self.emit(body, behind)
            self.closed.add(index)
            return "(" + inner + ")"
        if kind == "look":
            look = str(node[1])
            return "(?" + look + self.emit(node[2], behind or look in ("<=", "<!")) + ")"
        if kind == "quant":
            atom, low, high, lazy = node[1], node[2], node[3], node[4]
            if low > MAX_REPEAT:
                raise Unfaithful(f"a repeat count of {low} is more than this runtime can count")
            if high is not None and high > MAX_REPEAT:
                high = None  # no input is long enough to tell the difference
            inner = self.emit(atom, behind)
            if atom[0] in ("group", "look") or (atom[0] == "chars" and inner.startswith("[")):
                target = inner
            else:
                target = "(?:" + inner + ")"
            if (low, high) == (0, None):
                q = "*"
            elif (low, high) == (1, None):
                q = "+"
            elif (low, high) == (0, 1):
                q = "?"
            elif high is None:
                q = f"{{{low},}}"
            elif low == high:
                q = f"{{{low}}}"
            else:
                q = f"{{{low},{high}}}"
            return target + q + ("?" if lazy else "")
        if kind == "ref":
            index = self.resolve(node)
            info = self.info[index]
            if info.repeated or info.behind or behind:
                raise Unfaithful(
                    "a backreference to a group inside a repeated group or a lookbehind "
                    "(ECMA-262 resets such captures on every repetition and matches lookbehinds backwards)"
                )
            if index not in self.closed:
                return "(?:)"  # the group has not matched yet (forward or inside it): ECMA matches empty
            return f"(?({index})\\{index})"
        raise AssertionError(kind)  # pragma: no cover


class _Re2Emitter(_Emitter):
    """The same translation in RE2's syntax (`\\x{…}`, `\\z`; its `\\b` is ASCII, as ECMA's with
    `u`), for patterns without backtracking constructs: anything else raises `_NotRegular`."""

    def emit(self, node: Node, behind: bool = False) -> str:
        kind = node[0]
        if kind == "chars":
            ranges, negated = node[1], node[2]
            if not negated and len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
                return _re2_char(ranges[0][0])
            return ("[^" if negated else "[") + _ranges(ranges, _re2_char) + "]"
        if kind == "class":
            negated, ranges, props = node[1], node[2], node[3]
            if props:
                raise _NotRegular
            if not ranges:  # [^] anything, [] nothing
                return "[\\x{0}-\\x{10ffff}]" if negated else "[^\\x{0}-\\x{10ffff}]"
            return ("[^" if negated else "[") + _ranges(ranges, _re2_char) + "]"
        if kind in ("prop", "look"):
            raise _NotRegular
        if kind == "eol":
            return "\\z"
        if kind == "wordb":
            return "\\B" if node[1] else "\\b"
        if kind == "ref":
            if self.resolve(node) in self.closed:
                raise _NotRegular
            return "(?:)"  # the group has not matched yet: ECMA matches empty
        return super().emit(node, behind)


def _re2_form(parser: Parser, emitter: _Emitter, tree: Node) -> str | None:
    re2 = _Re2Emitter(parser)
    re2.info = emitter.info
    try:
        return re2.emit(tree)
    except (_NotRegular, Unfaithful, RecursionError):
        return None


@functools.lru_cache(maxsize=4096)
def translate(pattern: str) -> EcmaPattern:
    """Parse and translate one ECMA-262 pattern (cached).

    Raises `EcmaSyntaxError` when the pattern is invalid in ECMA-262 (with the `u` flag); a valid
    pattern without a faithful equivalent comes back with `enforced` False and a `reason`.
    """
    parser = Parser(pattern)
    try:
        tree = parser.parse()
        emitter = _Emitter(parser)
        emitter.check_refs(tree)
        emitter.survey(tree, repeated=False, behind=False)
        python = emitter.emit(tree)
    except Unfaithful as exc:
        return EcmaPattern(pattern, None, reason=str(exc))
    except RecursionError:
        return EcmaPattern(pattern, None, reason="the pattern is nested too deeply")
    needs_regex = emitter.needs_regex or _variable_lookbehind(python)
    re2 = _re2_form(parser, emitter, tree)
    danger = hazard(tree)
    try:
        search, engine = pattern_match.compile_search(pattern, python, re2)
    except ImportError:
        return EcmaPattern(
            pattern, python, True, "the `regex` package is not installed", re2=re2, hazard=danger
        )
    except (Exception, RecursionError) as exc:
        return EcmaPattern(
            pattern,
            python,
            needs_regex,
            f"the regex engine refuses its translation ({exc})",
            re2=re2,
            hazard=danger,
        )
    return EcmaPattern(pattern, python, needs_regex, None, search, re2, engine, danger)


def _variable_lookbehind(python: str) -> bool:
    """Whether Python's `re` refuses the translation for a lookbehind of variable width (the mock
    draws values with `re`, so `needs_regex` keeps saying which translations it cannot take)."""
    if "(?<" not in python:
        return False
    try:
        re.compile(python)
    except re.error as exc:
        return "look-behind requires fixed-width pattern" in str(exc)
    except RecursionError:
        return False
    return False


_PROPERTY = re.compile(r"\\([pP])\{([^}]*)\}")


@functools.cache
def _every_character() -> str:
    return "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)


@functools.cache
def _property_ranges(token: str) -> str:
    """The code points of `\\p{…}` as a class body of `\\uXXXX` ranges (computed once with `regex`)."""
    import regex  # type: ignore[import-untyped, import-not-found, unused-ignore]

    parts: list[str] = []
    for run in regex.finditer(token + "+", _every_character()):
        first, last = ord(run.group()[0]), ord(run.group()[-1])
        spans = [(first, last)] if not first < 0xD800 < last else [(first, 0xD7FF), (0xE000, last)]
        parts += [f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in spans]
    return "".join(parts)


def expand_properties(python: str) -> str:
    """A translation (`EcmaPattern.python`) with its `\\p{…}`/`\\P{…}` spelled as `\\U` ranges that
    Python's `re` reads (the mock's value generator draws with `re`); needs `regex` to list them.
    The translation escapes every other character, so a bare `[` or `]` delimits a class."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(python):
        ch = python[i]
        match = _PROPERTY.match(python, i) if ch == "\\" else None
        if match is not None:
            ranges = _property_ranges("\\p{" + match.group(2) + "}")
            negated = match.group(1) == "P"
            if in_class and negated:
                # [..\P{X}..]: the complement of X's ranges, as ranges
                ranges = _property_ranges("\\P{" + match.group(2) + "}")
            out.append(ranges if in_class else ("[^" if negated else "[") + ranges + "]")
            i = match.end()
            continue
        if ch == "\\":
            out.append(python[i : i + 2])
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        out.append(ch)
        i += 1
    return "".join(out)


def search_function(pattern: str) -> Callable[[str], bool] | None:
    """`re.search`-style test for a valid pattern (None: not enforced); EcmaSyntaxError if invalid."""
    return translate(pattern).search


def is_valid(pattern: object) -> bool:
    """Whether `pattern` is a valid ECMA-262 regular expression (`format: regex`)."""
    if not isinstance(pattern, str):
        return True
    try:
        translate(pattern)
    except EcmaSyntaxError:
        return False
    return True
