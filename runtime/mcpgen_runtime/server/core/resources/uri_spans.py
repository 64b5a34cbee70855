"""Where each expression of a URI template lies in a URI, in time linear in the URI's length.

A template reads a URI ambiguously (`{a}-{b}` and `x-y-z`): the answer is the one the backtracking
regular expression this replaced gave, each expression a greedy or lazy pattern and the first match
winning, so that servers see the same variables as before. Read left to right, each expression takes
the longest span (greedy kinds) or the shortest (lazy: `{+var}`, `{#var}`) after which the rest of
the template still matches. Adjacent variables therefore split as: `{a}{b}` on `xy` gives a="xy",
b=""; `{+a}{b}` gives a="", b="xy".

    kind (operator)              a value is                                       takes
    {v} {v,w}                    runs without / ? # , &  joined by ","            the longest
    {v*}                         a run without / ? # &                            the longest
    {+v} {+v,w}   {#v} {#v,w}    runs without "," joined by "," (after "#")       the shortest
    {+v*} {#v*}                  anything (after "#")                             the shortest
    {.v} {/v} {;v} {?v} {&v}     empty, or the operator's character and a run     the longest
                                 without / ? # (.), ? # ; (/), / ? # (;), # (? &)

A backtracking matcher tries those spans one by one and retries the rest for each: exponential in
the number of adjacent variables. Here a pass from the right computes, before each piece of the
template, the set of URI positions from which the rest of the template matches: bit sets in Python
ints (position i of an n-character URI is bit n - i), where each step is a few whole-int operations
(shift, and, one addition whose carries fill runs). A pass from the left then picks each span's end
from those sets: every expression's possible ends from a given start form one interval, so a pick is
a mask and the lowest or highest bit. No step loops over the URI's characters in Python.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Span", "spans"]


@dataclass(frozen=True, slots=True)
class Span:
    """One expression's shape (the module docstring's table).

    `head`: a character the value must start with ("#"); `prefix`: one it may start with (a value
    that does not is empty); `stop`: characters a run cannot contain; `count`: runs joined by ",";
    `greedy`: the longest span first, else the shortest."""

    head: str
    prefix: str
    stop: str
    count: int
    greedy: bool

    @staticmethod
    def of(operator: str, count: int, explode: bool) -> Span:
        if operator == "":
            return Span("", "", "/?#&" if explode else "/?#,&", 1 if explode else count, True)
        if operator in ("+", "#"):
            head = "#" if operator == "#" else ""
            return Span(head, "", "" if explode else ",", 1 if explode else count, False)
        stop = {".": "/?#", "/": "?#;", ";": "/?#", "?": "#", "&": "#"}[operator]
        return Span("", operator, stop, 1, True)


Piece = str | Span  # literal text, or an expression


class _Bits:
    """One URI's characters as bit sets (position i is bit n - i), built once per character set."""

    __slots__ = ("_codes", "_data", "_masks", "_narrow", "n", "uri")

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.n = len(uri)
        self._masks: dict[str, int] = {}
        if uri.isascii():
            self._codes = uri.encode("ascii")
            self._data = b""
            self._narrow = -1  # every position holds an ASCII character
        else:
            # One byte per character: the low byte of its code point, and which are ASCII.
            self._data = uri.encode("utf-32-be", "surrogatepass")
            self._codes = self._data[3::4]
            high = int.from_bytes(self._data[1::4], "big") | int.from_bytes(self._data[2::4], "big")
            zero = high.to_bytes(self.n, "big").translate(_ZERO_IS_ONE)
            self._narrow = self._digits(zero) & self._digits(self._codes.translate(_ASCII_IS_ONE))

    def _digits(self, zeros_and_ones: bytes) -> int:
        return int(zeros_and_ones or b"0", 2) << 1

    def mask(self, chars: str) -> int:
        """The positions holding one of `chars`."""
        found = self._masks.get(chars)
        if found is not None:
            return found
        ascii_chars = "".join(c for c in chars if c < "\x80")
        table = bytearray(_ALL_ZERO)
        for c in ascii_chars:
            table[ord(c)] = ord("1")
        found = self._digits(self._codes.translate(table)) & self._narrow
        for c in chars:
            if c >= "\x80" and self._data:
                point = ord(c)
                hit = -1
                for lane, byte in ((1, point >> 16), (2, (point >> 8) & 0xFF), (3, point & 0xFF)):
                    hit &= self._digits(self._data[lane::4].translate(_ONE_BYTE[byte]))
                found |= hit
        self._masks[chars] = found
        return found

    def passable(self, stop: str) -> int:
        """The positions whose character may be in a run that `stop` ends."""
        every = (1 << (self.n + 1)) - 2
        return every & ~self.mask(stop) if stop else every

    def literal(self, text: str, after: int) -> int:
        """Positions where `text` starts and is followed by a position in `after`."""
        found = after << len(text)
        for offset, char in enumerate(text):
            found &= self.mask(char) << offset
            if not found:
                break
        return found

    def fill(self, seeds: int, stop: str) -> int:
        """Positions from which a run (characters outside `stop`) reaches a position in `seeds`:
        each seed spreads to lower positions (higher bits) over passable characters. Adding a
        seed's next bit to a run of passable bits carries through exactly that run."""
        free = self.passable(stop) & ~seeds
        return seeds | (((free + (seeds << 1)) ^ free) & free)


_ALL_ZERO = bytes(b"0" * 256)
_ASCII_IS_ONE = bytes(b"1" * 128 + b"0" * 128)
_ZERO_IS_ONE = bytes(b"1" + b"0" * 255)
_ONE_BYTE = [bytes(b"0" * i + b"1" + b"0" * (255 - i)) for i in range(256)]
_STOPS: dict[str, re.Pattern[str]] = {}


def _run_end(uri: str, start: int, stop: str) -> int:
    """The first position at or after `start` holding a character of `stop` (len(uri): none)."""
    if not stop:
        return len(uri)
    pattern = _STOPS.get(stop)
    if pattern is None:
        pattern = _STOPS[stop] = re.compile(f"[{re.escape(stop)}]")
    found = pattern.search(uri, start)
    return len(uri) if found is None else found.start()


def _before(bits: _Bits, piece: Piece, after: int) -> int:
    """The positions from which `piece` and then a position in `after` match."""
    if isinstance(piece, str):
        return bits.literal(piece, after)
    if piece.prefix:
        return after | (bits.mask(piece.prefix) & bits.fill(after, piece.stop))
    found = bits.fill(after, piece.stop)
    for _ in range(piece.count - 1):
        found = bits.fill(bits.literal(",", found), piece.stop)
    return bits.literal(piece.head, found) if piece.head else found


def _pick(after: int, n: int, low: int, high: int, greedy: bool) -> int:
    """The last (greedy) or first position in [low, high] that is in `after`; -1 when none is."""
    window = (after >> (n - high)) & ((1 << (high - low + 1)) - 1)
    if not window:
        return -1
    bit = (window & -window).bit_length() - 1 if greedy else window.bit_length() - 1
    return high - bit


def spans(pieces: Sequence[Piece], uri: str) -> list[tuple[int, int]] | None:
    """Each expression's (start, end) in `uri`, in template order, or None when it does not match."""
    bits = _Bits(uri)
    n = bits.n
    reach = [1]  # reach[k]: positions from which pieces[k:] match; built from the right
    for piece in reversed(pieces):
        reach.append(_before(bits, piece, reach[-1]))
        if not reach[-1]:
            return None
    reach.reverse()
    if not (reach[0] >> n) & 1:
        return None
    out: list[tuple[int, int]] = []
    at = 0
    for k, piece in enumerate(pieces):
        if isinstance(piece, str):
            at += len(piece)
            continue
        start = at
        if piece.head:
            at += 1
        if piece.prefix:
            high = _run_end(uri, at + 1, piece.stop) if uri.startswith(piece.prefix, at) else at
        else:
            for _ in range(piece.count - 1):  # the runs before the last end at their ","
                at = _run_end(uri, at, piece.stop) + 1
            high = _run_end(uri, at, piece.stop)
        at = _pick(reach[k + 1], n, at, high, piece.greedy)
        if at < 0:  # cannot happen when reach[k] holds `start`; refuse rather than guess
            return None
        out.append((start, at))
    return out
