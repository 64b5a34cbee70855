"""Which ECMA-262 patterns can backtrack catastrophically (MCPGEN-REGEX-BACKTRACK).

A backtracking engine (Node's, Python's `re`, most JSON Schema validators) can take time exponential
in the input's length when one part of the input can be matched in many ways by a repeat. Two shapes
cause nearly all of it, and `hazard` finds them in the parse tree `ecma_parser` builds:

    a variable repeat inside an unbounded repeat, with no required character between iterations
    that the inner repeat cannot also take        (a+)+   (\\w+\\s?)*   (a|b+)+   ([a-z]{1,3})*
    alternatives under an unbounded repeat that can start with the same character
                                                    (a|ab)*   (\\d|\\w)+

`(\\w+\\.)+` is not reported: every iteration needs a `.`, which `\\w+` cannot take, so the split
between iterations is forced. A heuristic: polynomial cases (`\\d*\\d*x`) are not reported.
mcpgen itself never hangs on these (pattern_match.py); the warning is for every other engine that
evaluates the same schema.
"""

from __future__ import annotations

from typing import Final

from .ecma_parser import Node, Ranges, complement

__all__ = ["hazard"]

_ANY: Final[Ranges] = ((0, 0x10FFFF),)
_ZERO_WIDTH: Final = frozenset({"bol", "eol", "wordb", "look"})


def _one_char(node: Node) -> Ranges | None:
    """The characters a one-character node matches (None: not such a node)."""
    kind = node[0]
    if kind == "chars":
        return complement(node[1]) if node[2] else tuple(node[1])
    if kind == "class":
        if node[3]:  # \p{…} inside: treat as anything
            return _ANY
        return complement(node[2]) if node[1] else tuple(node[2])
    if kind == "prop":
        return _ANY
    return None


def _overlap(a: Ranges, b: Ranges) -> bool:
    return any(lo <= hi2 and lo2 <= hi for lo, hi in a for lo2, hi2 in b)


def _first(node: Node) -> tuple[Ranges, bool]:
    """The characters a match of `node` can start with, and whether it can match empty."""
    kind = node[0]
    single = _one_char(node)
    if single is not None:
        return single, False
    if kind in _ZERO_WIDTH:
        return (), True
    if kind == "ref":
        return _ANY, True
    if kind == "group":
        return _first(node[2])
    if kind == "alt":
        found: list[tuple[int, int]] = []
        empty = False
        for child in node[1]:
            chars, nullable = _first(child)
            found += chars
            empty = empty or nullable
        return tuple(found), empty
    if kind == "seq":
        found = []
        for child in node[1]:
            chars, nullable = _first(child)
            found += chars
            if not nullable:
                return tuple(found), False
        return tuple(found), True
    if kind == "quant":
        chars, nullable = _first(node[1])
        return chars, nullable or node[2] == 0
    return _ANY, True  # pragma: no cover - every kind is handled above


def _alternatives(node: Node) -> list[Node]:
    """The alternatives of a repeat's body (a group's, through non-capturing wrappers)."""
    while node[0] == "group":
        node = node[2]
    if node[0] == "alt":
        return list(node[1])
    return [node]


def _variable_repeats(node: Node) -> list[Node]:
    """Repeats inside `node` whose count varies and whose body matches something."""
    kind = node[0]
    found: list[Node] = []
    if kind in ("seq", "alt"):
        for child in node[1]:
            found += _variable_repeats(child)
    elif kind == "group":
        found += _variable_repeats(node[2])
    elif kind == "quant":
        chars, _ = _first(node[1])
        if node[2] != node[3] and chars:
            found.append(node)
        found += _variable_repeats(node[1])
    return found


def _separators(alternative: Node) -> list[Ranges]:
    """The one-character nodes an alternative always matches (its required separators)."""
    elements = alternative[1] if alternative[0] == "seq" else [alternative]
    found: list[Ranges] = []
    for element in elements:
        while element[0] == "group" and len(element[2][1]) == 1:  # (?:x): one alternative
            element = element[2][1][0]
            if element[0] == "seq" and len(element[1]) == 1:
                element = element[1][0]
        if element[0] == "quant" and element[2] >= 1:
            element = element[1]
        single = _one_char(element)
        if single is not None:
            found.append(single)
    return found


def _repeat_hazard(repeat: Node) -> str | None:
    body = repeat[1]
    alternatives = _alternatives(body)
    for alternative in alternatives:
        separators = _separators(alternative)
        for inner in _variable_repeats(alternative):
            inner_chars, _ = _first(inner[1])
            if not any(not _overlap(inner_chars, sep) for sep in separators):
                return "a variable repeat inside an unbounded repeat, as in (a+)+"
    starts = [_first(alternative)[0] for alternative in alternatives]
    for i, first in enumerate(starts):
        for other in starts[i + 1 :]:
            if _overlap(first, other):
                return "alternatives that can start alike inside an unbounded repeat, as in (a|ab)*"
    return None


def hazard(tree: Node) -> str | None:
    """Why the pattern parsed as `tree` can backtrack catastrophically, or None."""
    stack = [tree]
    while stack:
        node = stack.pop()
        kind = node[0]
        if kind in ("seq", "alt"):
            stack.extend(node[1])
        elif kind in ("group", "look"):
            stack.append(node[2])
        elif kind == "quant":
            if node[3] is None:
                found = _repeat_hazard(node)
                if found is not None:
                    return found
            stack.append(node[1])
    return None
