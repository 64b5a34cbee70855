"""ECMA-262 (`u` flag) regular expressions parsed into a tree (MCPGEN-REGEX).

The grammar is ECMA-262's with Annex B left out, as the `u` flag requires: a pattern invalid there
raises `EcmaSyntaxError` with its position. Valid constructs this runtime cannot enforce faithfully
(a repeat count past 2**32-2, a nesting depth past `MAX_NESTING`) raise `Unfaithful`; `ecma_regex`
turns the tree into Python's and RE2's syntax, `ecma_hazards` reads it for backtracking shapes.
"""

from __future__ import annotations

import re
from typing import Any, Final

from .ecma_properties import BINARY_BY_NAME, GC_BY_NAME, NON_BINARY, SCRIPTS

__all__ = ["EcmaSyntaxError", "Node", "Parser", "Ranges", "Unfaithful", "complement"]

MAX_NESTING: Final = 100  # groups and lookarounds inside one another
MAX_REPEAT: Final = 4_294_967_294  # Python's MAXREPEAT - 1
_LINE_TERMINATORS: Final = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
_DIGIT: Final = ((0x30, 0x39),)
WORD: Final = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_SPACE: Final = (
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
)
_QUANTIFIER: Final = re.compile(r"\{[0-9]+(,[0-9]*)?\}")
_BOUNDS: Final = re.compile(r"([0-9]+)(,([0-9]*))?\}")
_DIGITS: Final = re.compile(r"[0-9]+")
_SYNTAX: Final = frozenset("^$\\.*+?()[]{}|/")
_CONTROL: Final = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}


class EcmaSyntaxError(ValueError):
    """The pattern is not a valid ECMA-262 regular expression (with the `u` flag)."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at position {position}")
        self.position = position


class Unfaithful(Exception):
    """Valid ECMA-262, but no equivalent this runtime can enforce."""


# ---- parsing ----------------------------------------------------------------------------
# AST nodes are tuples: ("seq", [nodes]), ("alt", [seqs]), ("chars", ranges, negated) for one
# character out of a set, ("prop", text) for \p{...} alone, ("class", negated, ranges, props),
# ("bol",), ("eol",), ("wordb", negated), ("group", index|None, alt),
# ("look", kind, alt), ("ref", index|name, position), ("quant", node, low, high|None, lazy).

Node = tuple[Any, ...]
Ranges = tuple[tuple[int, int], ...]


def complement(ranges: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in sorted(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = max(start, hi + 1)
    if start <= 0x10FFFF:
        out.append((start, 0x10FFFF))
    return tuple(out)


_CLASS_ESCAPES: Final = {
    "d": _DIGIT,
    "D": complement(_DIGIT),
    "w": WORD,
    "W": complement(WORD),
    "s": _SPACE,
    "S": complement(_SPACE),
}


def _is_id_start(ch: str) -> bool:
    return ch in "$_" or (ch.isidentifier() and ch != "_")


def _is_id_part(ch: str) -> bool:
    return ch in "$\u200c\u200d" or ("a" + ch).isidentifier()


class Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.groups = 0
        self.names: dict[str, int] = {}
        self.depth = 0

    # -- helpers
    def fail(self, message: str, position: int | None = None) -> EcmaSyntaxError:
        return EcmaSyntaxError(message, self.pos if position is None else position)

    def peek(self, offset: int = 0) -> str:
        i = self.pos + offset
        return self.text[i] if i < len(self.text) else ""

    def eat(self, s: str) -> bool:
        if self.text.startswith(s, self.pos):
            self.pos += len(s)
            return True
        return False

    # -- grammar
    def parse(self) -> Node:
        node = self.disjunction()
        if self.pos < len(self.text):
            ch = self.peek()
            if ch == ")":
                raise self.fail("unmatched ')'")
            raise self.fail(f"lone {ch!r}")  # ']' '}' are errors with the u flag
        return node

    def disjunction(self) -> Node:
        alternatives = [self.alternative()]
        while self.eat("|"):
            alternatives.append(self.alternative())
        return ("alt", alternatives)

    def alternative(self) -> Node:
        terms: list[Node] = []
        while self.pos < len(self.text) and self.peek() not in "|)":
            terms.append(self.term())
        return ("seq", terms)

    def term(self) -> Node:
        ch = self.peek()
        quantifiable = True
        if ch == "^":
            self.pos += 1
            atom: Node = ("bol",)
            quantifiable = False
        elif ch == "$":
            self.pos += 1
            atom = ("eol",)
            quantifiable = False
        elif ch == "\\" and self.peek(1) in ("b", "B"):
            atom = ("wordb", self.peek(1) == "B")
            self.pos += 2
            quantifiable = False
        elif ch == "(":
            atom, quantifiable = self.group()
        elif ch == ".":
            self.pos += 1
            atom = ("chars", _LINE_TERMINATORS, True)
        elif ch == "[":
            atom = self.char_class()
        elif ch == "\\":
            atom = self.atom_escape()
        elif ch in "*+?":
            raise self.fail("nothing to repeat")
        elif ch == "{":
            if self.quantifier_ahead():
                raise self.fail("nothing to repeat")
            raise self.fail("lone '{'")
        elif ch in "]}":
            raise self.fail(f"lone {ch!r}")
        else:
            cp = ord(ch)
            self.pos += 1
            atom = ("chars", ((cp, cp),), False)
        if self.peek() in ("*", "+", "?") or (self.peek() == "{" and self.quantifier_ahead()):
            if not quantifiable:
                raise self.fail("nothing to repeat" if atom[0] != "look" else "invalid quantifier")
            return self.quantifier(atom)
        if self.peek() == "{":
            raise self.fail("incomplete quantifier")
        return atom

    def quantifier_ahead(self) -> bool:
        return _QUANTIFIER.match(self.text, self.pos) is not None

    def quantifier(self, atom: Node) -> Node:
        ch = self.peek()
        self.pos += 1
        high: int | None
        if ch == "*":
            low, high = 0, None
        elif ch == "+":
            low, high = 1, None
        elif ch == "?":
            low, high = 0, 1
        else:
            m = _BOUNDS.match(self.text, self.pos)
            assert m is not None  # quantifier_ahead said so
            low = int(m.group(1))
            high = low if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            if high is not None and high < low:
                raise self.fail("numbers out of order in {} quantifier")
            self.pos = m.end()
        lazy = self.eat("?")
        if self.peek() in ("*", "+", "?") or (self.peek() == "{" and self.quantifier_ahead()):
            raise self.fail("nothing to repeat")
        return ("quant", atom, low, high, lazy)

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise Unfaithful(f"groups nested more than {MAX_NESTING} deep")

    def group(self) -> tuple[Node, bool]:
        open_at = self.pos
        self.pos += 1
        self.enter()
        kind: str | None = None
        index: int | None = None
        if self.eat("?"):
            for k in ("=", "!", "<=", "<!", ":"):
                if self.eat(k):
                    kind = k
                    break
            else:
                if self.peek() == "<":
                    self.pos += 1
                    name = self.group_name()
                    if name in self.names:
                        raise self.fail(f"duplicate capture group name {name!r}")
                    self.groups += 1
                    index = self.groups
                    self.names[name] = index
                else:
                    raise self.fail("invalid group")
        else:
            self.groups += 1
            index = self.groups
        body = self.disjunction()
        if not self.eat(")"):
            raise self.fail("unterminated group", open_at)
        self.depth -= 1
        if kind in ("=", "!", "<=", "<!"):
            return ("look", kind, body), False  # the u flag: lookarounds are not quantifiable
        return ("group", index, body), True

    def group_name(self) -> str:
        """RegExpIdentifierName up to '>' (escapes \\uXXXX, \\u{...} allowed)."""
        chars: list[str] = []
        while True:
            if self.eat(">"):
                break
            if self.pos >= len(self.text):
                raise self.fail("invalid capture group name")
            if self.peek() == "\\":
                if self.peek(1) != "u":
                    raise self.fail("invalid capture group name")
                self.pos += 2
                cp = self.unicode_escape_body()
                if cp is None:
                    raise self.fail("invalid Unicode escape in a group name")
                ch = chr(cp)
            else:
                ch = self.peek()
                self.pos += 1
            if not (_is_id_start(ch) if not chars else _is_id_part(ch)):
                raise self.fail("invalid capture group name")
            chars.append(ch)
        if not chars:
            raise self.fail("invalid capture group name")
        return "".join(chars)

    def hex_digits(self, count: int) -> int | None:
        digits = self.text[self.pos : self.pos + count]
        if len(digits) == count and all(c in "0123456789abcdefABCDEF" for c in digits):
            self.pos += count
            return int(digits, 16)
        return None

    def unicode_escape_body(self) -> int | None:
        """After `\\u`: XXXX (a surrogate pair of two escapes is one code point) or {X...}."""
        if self.eat("{"):
            end = self.text.find("}", self.pos)
            digits = self.text[self.pos : end] if end >= 0 else ""
            if not digits or not all(c in "0123456789abcdefABCDEF" for c in digits):
                return None
            braced = int(digits, 16)
            if braced > 0x10FFFF:
                return None
            self.pos = end + 1
            return braced
        value = self.hex_digits(4)
        if value is None:
            return None
        if 0xD800 <= value <= 0xDBFF and self.text.startswith("\\u", self.pos):
            save = self.pos
            self.pos += 2
            low = self.hex_digits(4)
            if low is not None and 0xDC00 <= low <= 0xDFFF:
                return 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            self.pos = save
        return value

    def character_escape(self, in_class: bool) -> int:
        """After the backslash: one code point, or EcmaSyntaxError."""
        ch = self.peek()
        at = self.pos - 1
        if ch == "":
            raise self.fail("\\ at end of pattern", at)
        self.pos += 1
        if ch in _CONTROL:
            return _CONTROL[ch]
        if ch == "c":
            letter = self.peek()
            if letter and letter.isascii() and letter.isalpha():
                self.pos += 1
                return ord(letter) % 32
            raise self.fail("invalid control escape", at)
        if ch == "0" and not (self.peek() and self.peek() in "0123456789"):
            return 0
        if ch == "x":
            hex_value = self.hex_digits(2)
            if hex_value is None:
                raise self.fail("invalid hexadecimal escape", at)
            return hex_value
        if ch == "u":
            cp = self.unicode_escape_body()
            if cp is None:
                raise self.fail("invalid Unicode escape", at)
            return cp
        if ch in _SYNTAX or (in_class and ch == "-"):
            return ord(ch)
        raise self.fail(f"invalid escape \\{ch}", at)

    def property_escape(self, negated: bool) -> str:
        """After `\\p`/`\\P`: the `regex` spelling of the property (checked against ECMA's tables)."""
        at = self.pos - 2
        end = self.text.find("}", self.pos)
        if not self.eat("{") or end < 0:
            raise self.fail("invalid property name", at)
        body = self.text[self.pos : end]
        self.pos = end + 1
        name, eq, value = body.partition("=")
        if eq:
            prop = NON_BINARY.get(name)
            if prop == "gc" and value in GC_BY_NAME:
                spelled = f"gc={GC_BY_NAME[value]}"
            elif prop in ("sc", "scx") and value in SCRIPTS:
                spelled = f"{prop}={value}"
            else:
                raise self.fail(f"invalid property name {body!r}", at)
        elif body in GC_BY_NAME:
            spelled = f"gc={GC_BY_NAME[body]}"
        elif body in BINARY_BY_NAME:
            spelled = BINARY_BY_NAME[body]
        else:
            raise self.fail(f"invalid property name {body!r}", at)
        return ("\\P{" if negated else "\\p{") + spelled + "}"

    def atom_escape(self) -> Node:
        at = self.pos
        self.pos += 1  # the backslash
        ch = self.peek()
        if ch in _CLASS_ESCAPES:
            self.pos += 1
            return ("chars", _CLASS_ESCAPES[ch], False)
        if ch in ("p", "P"):
            self.pos += 1
            return ("prop", self.property_escape(ch == "P"))
        if ch == "k":
            self.pos += 1
            if not self.eat("<"):
                raise self.fail("invalid named reference", at)
            return ("ref", self.group_name(), at)
        if ch in "123456789" and ch:
            m = _DIGITS.match(self.text, self.pos)
            assert m is not None
            self.pos = m.end()
            return ("ref", int(m.group()), at)
        cp = self.character_escape(in_class=False)
        return ("chars", ((cp, cp),), False)

    def class_atom(self) -> tuple[Ranges | None, str | None, int | None]:
        """One ClassAtom: (ranges of a class escape, or a property text, or one code point)."""
        ch = self.peek()
        if ch == "\\":
            self.pos += 1
            esc = self.peek()
            if esc in _CLASS_ESCAPES:
                self.pos += 1
                return _CLASS_ESCAPES[esc], None, None
            if esc in ("p", "P"):
                self.pos += 1
                return None, self.property_escape(esc == "P"), None
            if esc == "b":
                self.pos += 1
                return None, None, 0x08
            return None, None, self.character_escape(in_class=True)
        self.pos += 1
        return None, None, ord(ch)

    def char_class(self) -> Node:
        open_at = self.pos
        self.pos += 1
        negated = self.eat("^")
        ranges: list[tuple[int, int]] = []
        props: list[str] = []
        while True:
            if self.pos >= len(self.text):
                raise self.fail("unterminated character class", open_at)
            if self.eat("]"):
                break
            at = self.pos
            set_a, prop_a, cp_a = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                set_b, prop_b, cp_b = self.class_atom()
                if cp_a is None or cp_b is None:
                    raise self.fail("invalid character class range", at)
                if cp_a > cp_b:
                    raise self.fail("range out of order in character class", at)
                ranges.append((cp_a, cp_b))
                del set_b, prop_b
                continue
            if set_a is not None:
                ranges.extend(set_a)
            elif prop_a is not None:
                props.append(prop_a)
            elif cp_a is not None:
                ranges.append((cp_a, cp_a))
        return ("class", negated, tuple(ranges), tuple(props))
