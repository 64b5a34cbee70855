"""How generated source spells what it holds, as black would write it: string and number literals,
a JSON value checked before it becomes one, text cleaned for a docstring or comment, and a docstring's
PEP 257 indentation. Plain text in, plain text out: `pysource` alone mints the markers around it.
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any

from ...errors import InternalGeneratorError

__all__ = [
    "MAX_DOCSTRING_CHARS",
    "MAX_LITERAL_DEPTH",
    "MAX_LITERAL_ITEMS",
    "check_json",
    "clean_text",
    "fix_multiline_docstring",
    "number",
    "prefer_double_quotes",
    "string",
]

MAX_LITERAL_DEPTH = 32
MAX_LITERAL_ITEMS = 10_000
MAX_DOCSTRING_CHARS = 16_000


def string(value: str) -> str:
    """A string literal exactly as black writes it: repr() (every control, bidi and separator
    character escaped), then black's own quote preference (double quotes unless that adds escapes)."""
    text = repr(value)
    if text[0] == '"':
        return text  # repr picked double quotes: the text has a ' and no ", black keeps it
    if '"' not in text and "\\'" not in text:
        return '"' + text[1:-1] + '"'  # nothing to re-escape: black only swaps the quotes
    return prefer_double_quotes(text)


# black.strings.normalize_string_quotes (black 26.10.1) for what reaches it here, a repr() in single
# quotes without prefix, so black need not be imported; test_generate_format.py compares the two.
_ESCAPED_DOUBLE = re.compile(r'([^\\]|^)\\((?:\\\\)*)"')
_ESCAPED_SINGLE = re.compile(r"([^\\]|^)\\((?:\\\\)*)'")
_UNESCAPED_DOUBLE = re.compile(r'(([^\\]|^)(\\\\)*)"')


def _sub_twice(pattern: re.Pattern[str], replacement: str, text: str) -> str:
    return pattern.sub(replacement, pattern.sub(replacement, text))  # matches may overlap


def prefer_double_quotes(text: str) -> str:
    body = text[1:-1]
    new_body = _sub_twice(_ESCAPED_DOUBLE, r'\1\2"', body)  # drop needless escapes of "
    if new_body != body:
        body = new_body
        text = f"'{body}'"
    new_body = _sub_twice(_ESCAPED_SINGLE, r"\1\2'", new_body)
    new_body = _sub_twice(_UNESCAPED_DOUBLE, r'\1\\"', new_body)
    if new_body.count("\\") > body.count("\\"):
        return text  # double quotes would need more escapes
    return f'"{new_body}"'


def number(value: int | float) -> str:
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InternalGeneratorError(f"non-finite number {value!r} cannot be a JSON literal")
        text = repr(float(value))
    else:
        text = repr(int(value))
    sign = "-" if text.startswith("-") else ""
    digits = text.removeprefix("-")
    if "e" in digits:  # 1e+100 -> 1e100, as black's numeric normalisation writes it
        from black.numerics import format_scientific_notation

        digits = format_scientific_notation(digits)
    return sign + digits


def check_json(value: Any) -> None:
    count = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > MAX_LITERAL_ITEMS:
            raise InternalGeneratorError(
                f"JSON value too large for a literal (more than {MAX_LITERAL_ITEMS} items)"
            )
        if depth > MAX_LITERAL_DEPTH:
            raise InternalGeneratorError(f"JSON value nested deeper than {MAX_LITERAL_DEPTH} levels")
        if item is None or isinstance(item, (bool, int, str)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise InternalGeneratorError(f"non-finite number {item!r} cannot be a JSON literal")
        elif isinstance(item, list):
            stack.extend((element, depth + 1) for element in item)
        elif isinstance(item, dict):
            for key, element in item.items():
                if not isinstance(key, str):
                    raise InternalGeneratorError(f"JSON object key {key!r} is not a string")
                stack.append((element, depth + 1))
        else:
            raise InternalGeneratorError(f"not a JSON value: {type(item).__name__}")


# Control characters but \t and \n, bidirectional controls (Trojan Source) and the Arabic letter mark,
# line/paragraph separators, lone surrogates.
_DROP = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]"
)


def clean_text(text: str, *, keep_newlines: bool = True, max_chars: int = MAX_DOCSTRING_CHARS) -> str:
    """Normalise newlines; drop control characters (but \\n and \\t), bidi controls, U+2028/U+2029
    and lone surrogates; strip trailing whitespace per line and blank lines at both ends; cap length."""
    text = str(text)
    if text.isascii() and text.isprintable():  # one line without a character to drop: most texts
        cleaned = text.rstrip()
    else:
        text = _DROP.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
        if not keep_newlines:
            text = text.replace("\n", " ").replace("\t", " ")
        lines = [line.rstrip() for line in text.split("\n")]
        while lines and not lines[0]:
            lines.pop(0)
        while lines and not lines[-1]:
            lines.pop()
        cleaned = "\n".join(lines)
    if len(cleaned) > max_chars:
        cleaned = cleaned[:max_chars].rstrip() + " [...]"
    return cleaned


_LINE_BREAK = re.compile(r"\r\n|[\r\n]")


def _lines_with_leading_tabs_expanded(text: str) -> list[str]:
    # black.strings.lines_with_leading_tabs_expanded (black 26.10.1), so black need not be imported;
    # tests/codegen/render/test_black_layout.py proves both give the same result
    if "\t" not in text and "\r" not in text:
        return text.split("\n")  # no tab to expand (docstrings expand theirs first): the lines as they are
    lines = []
    for line in _LINE_BREAK.split(text):
        stripped = line.lstrip()
        if not stripped or stripped == line:
            lines.append(line)
        else:
            prefix_length = len(line) - len(stripped)
            lines.append(line[:prefix_length].expandtabs(4) + stripped)
    return lines


def fix_multiline_docstring(docstring: str, prefix: str) -> str:
    """black.strings.fix_multiline_docstring (black 26.10.1): PEP 257 indentation handling."""
    lines = _lines_with_leading_tabs_expanded(docstring)
    indent = sys.maxsize
    for line in lines[1:]:
        stripped = line.lstrip()
        if stripped:
            indent = min(indent, len(line) - len(stripped))
    trimmed = [lines[0].strip()]
    if indent < sys.maxsize:
        last_line_idx = len(lines) - 2
        for i, line in enumerate(lines[1:]):
            stripped_line = line[indent:].rstrip()
            if stripped_line or i == last_line_idx:
                trimmed.append(prefix + stripped_line)
            else:
                trimmed.append("")
    return "\n".join(trimmed)
