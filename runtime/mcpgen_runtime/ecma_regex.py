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

One module over 600 lines on purpose: about 450 of them are the property-name tables ECMA-262
allows (data, not logic), and the parser and emitter beside them read as the grammar does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from . import pattern_match
from .ecma_hazards import hazard

__all__ = ["EcmaPattern", "EcmaSyntaxError", "expand_properties", "search_function", "translate"]

MAX_NESTING: Final = 100  # groups and lookarounds inside one another
_MAX_REPEAT: Final = 4_294_967_294  # Python's MAXREPEAT - 1
_LINE_TERMINATORS: Final = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
_DIGIT: Final = ((0x30, 0x39),)
_WORD: Final = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
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

# General_Category values (short name first), binary properties (long name first): ECMA-262's
# tables, spelled exactly as Node 22 accepts them.
_GENERAL_CATEGORY: Final = (
    ("C", "Other"),
    ("Cc", "Control", "cntrl"),
    ("Cf", "Format"),
    ("Cn", "Unassigned"),
    ("Co", "Private_Use"),
    ("Cs", "Surrogate"),
    ("L", "Letter"),
    ("LC", "Cased_Letter"),
    ("Ll", "Lowercase_Letter"),
    ("Lm", "Modifier_Letter"),
    ("Lo", "Other_Letter"),
    ("Lt", "Titlecase_Letter"),
    ("Lu", "Uppercase_Letter"),
    ("M", "Mark", "Combining_Mark"),
    ("Mc", "Spacing_Mark"),
    ("Me", "Enclosing_Mark"),
    ("Mn", "Nonspacing_Mark"),
    ("N", "Number"),
    ("Nd", "Decimal_Number", "digit"),
    ("Nl", "Letter_Number"),
    ("No", "Other_Number"),
    ("P", "Punctuation", "punct"),
    ("Pc", "Connector_Punctuation"),
    ("Pd", "Dash_Punctuation"),
    ("Pe", "Close_Punctuation"),
    ("Pf", "Final_Punctuation"),
    ("Pi", "Initial_Punctuation"),
    ("Po", "Other_Punctuation"),
    ("Ps", "Open_Punctuation"),
    ("S", "Symbol"),
    ("Sc", "Currency_Symbol"),
    ("Sk", "Modifier_Symbol"),
    ("Sm", "Math_Symbol"),
    ("So", "Other_Symbol"),
    ("Z", "Separator"),
    ("Zl", "Line_Separator"),
    ("Zp", "Paragraph_Separator"),
    ("Zs", "Space_Separator"),
)
_BINARY: Final = (
    ("ASCII",),
    ("ASCII_Hex_Digit", "AHex"),
    ("Alphabetic", "Alpha"),
    ("Any",),
    ("Assigned",),
    ("Bidi_Control", "Bidi_C"),
    ("Bidi_Mirrored", "Bidi_M"),
    ("Case_Ignorable", "CI"),
    ("Cased",),
    ("Changes_When_Casefolded", "CWCF"),
    ("Changes_When_Casemapped", "CWCM"),
    ("Changes_When_Lowercased", "CWL"),
    ("Changes_When_NFKC_Casefolded", "CWKCF"),
    ("Changes_When_Titlecased", "CWT"),
    ("Changes_When_Uppercased", "CWU"),
    ("Dash",),
    ("Default_Ignorable_Code_Point", "DI"),
    ("Deprecated", "Dep"),
    ("Diacritic", "Dia"),
    ("Emoji",),
    ("Emoji_Component", "EComp"),
    ("Emoji_Modifier", "EMod"),
    ("Emoji_Modifier_Base", "EBase"),
    ("Emoji_Presentation", "EPres"),
    ("Extended_Pictographic", "ExtPict"),
    ("Extender", "Ext"),
    ("Grapheme_Base", "Gr_Base"),
    ("Grapheme_Extend", "Gr_Ext"),
    ("Hex_Digit", "Hex"),
    ("IDS_Binary_Operator", "IDSB"),
    ("IDS_Trinary_Operator", "IDST"),
    ("ID_Continue", "IDC"),
    ("ID_Start", "IDS"),
    ("Ideographic", "Ideo"),
    ("Join_Control", "Join_C"),
    ("Logical_Order_Exception", "LOE"),
    ("Lowercase", "Lower"),
    ("Math",),
    ("Noncharacter_Code_Point", "NChar"),
    ("Pattern_Syntax", "Pat_Syn"),
    ("Pattern_White_Space", "Pat_WS"),
    ("Quotation_Mark", "QMark"),
    ("Radical",),
    ("Regional_Indicator", "RI"),
    ("Sentence_Terminal", "STerm"),
    ("Soft_Dotted", "SD"),
    ("Terminal_Punctuation", "Term"),
    ("Unified_Ideograph", "UIdeo"),
    ("Uppercase", "Upper"),
    ("Variation_Selector", "VS"),
    ("White_Space", "space", "WSpace"),
    ("XID_Continue", "XIDC"),
    ("XID_Start", "XIDS"),
)
# Script / Script_Extensions values (long and short names) Node 22 accepts (Unicode 17).
_SCRIPTS: Final = frozenset(
    [
        "Adlam",
        "Adlm",
        "Aghb",
        "Ahom",
        "Anatolian_Hieroglyphs",
        "Arab",
        "Arabic",
        "Armenian",
        "Armi",
        "Armn",
        "Avestan",
        "Avst",
        "Bali",
        "Balinese",
        "Bamu",
        "Bamum",
        "Bass",
        "Bassa_Vah",
        "Batak",
        "Batk",
        "Beng",
        "Bengali",
        "Berf",
        "Beria_Erfe",
        "Bhaiksuki",
        "Bhks",
        "Bopo",
        "Bopomofo",
        "Brah",
        "Brahmi",
        "Brai",
        "Braille",
        "Bugi",
        "Buginese",
        "Buhd",
        "Buhid",
        "Cakm",
        "Canadian_Aboriginal",
        "Cans",
        "Cari",
        "Carian",
        "Caucasian_Albanian",
        "Chakma",
        "Cham",
        "Cher",
        "Cherokee",
        "Chorasmian",
        "Chrs",
        "Common",
        "Copt",
        "Coptic",
        "Cpmn",
        "Cprt",
        "Cuneiform",
        "Cypriot",
        "Cypro_Minoan",
        "Cyrillic",
        "Cyrl",
        "Deseret",
        "Deva",
        "Devanagari",
        "Diak",
        "Dives_Akuru",
        "Dogr",
        "Dogra",
        "Dsrt",
        "Dupl",
        "Duployan",
        "Egyp",
        "Egyptian_Hieroglyphs",
        "Elba",
        "Elbasan",
        "Elym",
        "Elymaic",
        "Ethi",
        "Ethiopic",
        "Gara",
        "Garay",
        "Geor",
        "Georgian",
        "Glag",
        "Glagolitic",
        "Gong",
        "Gonm",
        "Goth",
        "Gothic",
        "Gran",
        "Grantha",
        "Greek",
        "Grek",
        "Gujarati",
        "Gujr",
        "Gukh",
        "Gunjala_Gondi",
        "Gurmukhi",
        "Guru",
        "Gurung_Khema",
        "Han",
        "Hang",
        "Hangul",
        "Hani",
        "Hanifi_Rohingya",
        "Hano",
        "Hanunoo",
        "Hatr",
        "Hatran",
        "Hebr",
        "Hebrew",
        "Hira",
        "Hiragana",
        "Hluw",
        "Hmng",
        "Hmnp",
        "Hung",
        "Imperial_Aramaic",
        "Inherited",
        "Inscriptional_Pahlavi",
        "Inscriptional_Parthian",
        "Ital",
        "Java",
        "Javanese",
        "Kaithi",
        "Kali",
        "Kana",
        "Kannada",
        "Katakana",
        "Kawi",
        "Kayah_Li",
        "Khar",
        "Kharoshthi",
        "Khitan_Small_Script",
        "Khmer",
        "Khmr",
        "Khoj",
        "Khojki",
        "Khudawadi",
        "Kirat_Rai",
        "Kits",
        "Knda",
        "Krai",
        "Kthi",
        "Lana",
        "Lao",
        "Laoo",
        "Latin",
        "Latn",
        "Lepc",
        "Lepcha",
        "Limb",
        "Limbu",
        "Lina",
        "Linb",
        "Linear_A",
        "Linear_B",
        "Lisu",
        "Lyci",
        "Lycian",
        "Lydi",
        "Lydian",
        "Mahajani",
        "Mahj",
        "Maka",
        "Makasar",
        "Malayalam",
        "Mand",
        "Mandaic",
        "Mani",
        "Manichaean",
        "Marc",
        "Marchen",
        "Masaram_Gondi",
        "Medefaidrin",
        "Medf",
        "Meetei_Mayek",
        "Mend",
        "Mende_Kikakui",
        "Merc",
        "Mero",
        "Meroitic_Cursive",
        "Meroitic_Hieroglyphs",
        "Miao",
        "Mlym",
        "Modi",
        "Mong",
        "Mongolian",
        "Mro",
        "Mroo",
        "Mtei",
        "Mult",
        "Multani",
        "Myanmar",
        "Mymr",
        "Nag_Mundari",
        "Nagm",
        "Nand",
        "Nandinagari",
        "Narb",
        "Nbat",
        "New_Tai_Lue",
        "Newa",
        "Nko",
        "Nkoo",
        "Nshu",
        "Nushu",
        "Nyiakeng_Puachue_Hmong",
        "Ogam",
        "Ogham",
        "Ol_Chiki",
        "Ol_Onal",
        "Olck",
        "Old_Hungarian",
        "Old_Italic",
        "Old_North_Arabian",
        "Old_Permic",
        "Old_Persian",
        "Old_Sogdian",
        "Old_South_Arabian",
        "Old_Turkic",
        "Old_Uyghur",
        "Onao",
        "Oriya",
        "Orkh",
        "Orya",
        "Osage",
        "Osge",
        "Osma",
        "Osmanya",
        "Ougr",
        "Pahawh_Hmong",
        "Palm",
        "Palmyrene",
        "Pau_Cin_Hau",
        "Pauc",
        "Perm",
        "Phag",
        "Phags_Pa",
        "Phli",
        "Phlp",
        "Phnx",
        "Phoenician",
        "Plrd",
        "Prti",
        "Psalter_Pahlavi",
        "Qaac",
        "Qaai",
        "Rejang",
        "Rjng",
        "Rohg",
        "Runic",
        "Runr",
        "Samaritan",
        "Samr",
        "Sarb",
        "Saur",
        "Saurashtra",
        "Sgnw",
        "Sharada",
        "Shavian",
        "Shaw",
        "Shrd",
        "Sidd",
        "Siddham",
        "Sidetic",
        "Sidt",
        "SignWriting",
        "Sind",
        "Sinh",
        "Sinhala",
        "Sogd",
        "Sogdian",
        "Sogo",
        "Sora",
        "Sora_Sompeng",
        "Soyo",
        "Soyombo",
        "Sund",
        "Sundanese",
        "Sunu",
        "Sunuwar",
        "Sylo",
        "Syloti_Nagri",
        "Syrc",
        "Syriac",
        "Tagalog",
        "Tagb",
        "Tagbanwa",
        "Tai_Le",
        "Tai_Tham",
        "Tai_Viet",
        "Tai_Yo",
        "Takr",
        "Takri",
        "Tale",
        "Talu",
        "Tamil",
        "Taml",
        "Tang",
        "Tangsa",
        "Tangut",
        "Tavt",
        "Tayo",
        "Telu",
        "Telugu",
        "Tfng",
        "Tglg",
        "Thaa",
        "Thaana",
        "Thai",
        "Tibetan",
        "Tibt",
        "Tifinagh",
        "Tirh",
        "Tirhuta",
        "Tnsa",
        "Todhri",
        "Todr",
        "Tols",
        "Tolong_Siki",
        "Toto",
        "Tulu_Tigalari",
        "Tutg",
        "Ugar",
        "Ugaritic",
        "Unknown",
        "Vai",
        "Vaii",
        "Vith",
        "Vithkuqi",
        "Wancho",
        "Wara",
        "Warang_Citi",
        "Wcho",
        "Xpeo",
        "Xsux",
        "Yezi",
        "Yezidi",
        "Yi",
        "Yiii",
        "Zanabazar_Square",
        "Zanb",
        "Zinh",
        "Zyyy",
        "Zzzz",
    ]
)
_GC_BY_NAME: Final = {name: names[0] for names in _GENERAL_CATEGORY for name in names}
_BINARY_BY_NAME: Final = {name: names[0] for names in _BINARY for name in names}
_NON_BINARY: Final = {
    "General_Category": "gc",
    "gc": "gc",
    "Script": "sc",
    "sc": "sc",
    "Script_Extensions": "scx",
    "scx": "scx",
}


class EcmaSyntaxError(ValueError):
    """The pattern is not a valid ECMA-262 regular expression (with the `u` flag)."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at position {position}")
        self.position = position


class _Unfaithful(Exception):
    """Valid ECMA-262, but no equivalent this runtime can enforce."""


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


# ---- parsing ----------------------------------------------------------------------------
# AST nodes are tuples: ("seq", [nodes]), ("alt", [seqs]), ("chars", ranges, negated) for one
# character out of a set, ("prop", text) for \p{...} alone, ("class", negated, ranges, props),
# ("bol",), ("eol",), ("wordb", negated), ("group", index|None, alt),
# ("look", kind, alt), ("ref", index|name, position), ("quant", node, low, high|None, lazy).

Node = tuple[Any, ...]
Ranges = tuple[tuple[int, int], ...]


def _complement(ranges: Ranges) -> Ranges:
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
    "D": _complement(_DIGIT),
    "w": _WORD,
    "W": _complement(_WORD),
    "s": _SPACE,
    "S": _complement(_SPACE),
}


def _is_id_start(ch: str) -> bool:
    return ch in "$_" or (ch.isidentifier() and ch != "_")


def _is_id_part(ch: str) -> bool:
    return ch in "$\u200c\u200d" or ("a" + ch).isidentifier()


class _Parser:
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
            raise _Unfaithful(f"groups nested more than {MAX_NESTING} deep")

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
            prop = _NON_BINARY.get(name)
            if prop == "gc" and value in _GC_BY_NAME:
                spelled = f"gc={_GC_BY_NAME[value]}"
            elif prop in ("sc", "scx") and value in _SCRIPTS:
                spelled = f"{prop}={value}"
            else:
                raise self.fail(f"invalid property name {body!r}", at)
        elif body in _GC_BY_NAME:
            spelled = f"gc={_GC_BY_NAME[body]}"
        elif body in _BINARY_BY_NAME:
            spelled = _BINARY_BY_NAME[body]
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


_WORD_CLASS: Final = "[" + _ranges(_WORD) + "]"
_BOUNDARY: Final = f"(?:(?<={_WORD_CLASS})(?!{_WORD_CLASS})|(?<!{_WORD_CLASS})(?={_WORD_CLASS}))"
_NOT_BOUNDARY: Final = f"(?:(?<={_WORD_CLASS})(?={_WORD_CLASS})|(?<!{_WORD_CLASS})(?!{_WORD_CLASS}))"


@dataclass
class _GroupInfo:
    repeated: bool = False  # inside a quantifier that may run more than once
    behind: bool = False  # inside a lookbehind


class _Emitter:
    def __init__(self, parser: _Parser) -> None:
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
            if low > _MAX_REPEAT:
                raise _Unfaithful(f"a repeat count of {low} is more than this runtime can count")
            if high is not None and high > _MAX_REPEAT:
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
                raise _Unfaithful(
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


def _re2_form(parser: _Parser, emitter: _Emitter, tree: Node) -> str | None:
    re2 = _Re2Emitter(parser)
    re2.info = emitter.info
    try:
        return re2.emit(tree)
    except (_NotRegular, _Unfaithful, RecursionError):
        return None


@functools.lru_cache(maxsize=4096)
def translate(pattern: str) -> EcmaPattern:
    """Parse and translate one ECMA-262 pattern (cached).

    Raises `EcmaSyntaxError` when the pattern is invalid in ECMA-262 (with the `u` flag); a valid
    pattern without a faithful equivalent comes back with `enforced` False and a `reason`.
    """
    parser = _Parser(pattern)
    try:
        tree = parser.parse()
        emitter = _Emitter(parser)
        emitter.check_refs(tree)
        emitter.survey(tree, repeated=False, behind=False)
    except _Unfaithful as exc:
        return EcmaPattern(pattern, None, reason=str(exc))
    except RecursionError:
        return EcmaPattern(pattern, None, reason="the pattern is nested too deeply")
    try:
        python = emitter.emit(tree)
    except _Unfaithful as exc:
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
