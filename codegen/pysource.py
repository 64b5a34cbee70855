"""The only code that turns data into Python source.

Everything a spec or server supplies is data. It reaches generated code only as

- identifiers rebuilt by `naming` and checked here (`ident`, `dotted`),
- `repr()` output of one recursive JSON-literal emitter (`literal`),
- escaped docstrings (`docstring`) and sanitised single-line comments (`comment`),
- expressions re-emitted from an AST of allow-listed node types (`expr`), used for the
  annotations datamodel-code-generator wrote into models.py.

Each function returns a `PySource` marker (a `str` subclass that only this module can create);
the template environment (`render.environment`) refuses to output any value that is not one.
"""

from __future__ import annotations

import ast
import keyword
import math
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from .errors import InternalGeneratorError

__all__ = [
    "PyCode",
    "PyComment",
    "PyDocstring",
    "PyExpr",
    "PyIdent",
    "PyLiteral",
    "PySource",
    "clean_text",
    "comment",
    "dict_display",
    "docstring",
    "dotted",
    "expr",
    "generated_code",
    "ident",
    "import_from",
    "import_from_wrapped",
    "import_module",
    "join",
    "join_blocks",
    "literal",
]

_TOKEN = object()

MAX_LITERAL_DEPTH = 32
MAX_LITERAL_ITEMS = 10_000
MAX_DOCSTRING_CHARS = 16_000
MAX_COMMENT_CHARS = 300

# Bidirectional controls (Trojan Source), line/paragraph separators, and the Arabic letter mark.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
_SEPARATORS = frozenset("\u2028\u2029")


class PySource(str):
    """Python source text produced by this module. Only `pysource` can create instances."""

    __slots__ = ()

    def __new__(cls, value: str, token: object = None) -> PySource:
        if token is not _TOKEN:
            raise TypeError(f"{cls.__name__} values are created by codegen.pysource only")
        return super().__new__(cls, value)

    def __html__(self) -> str:  # markupsafe: already "safe" -> never HTML-escaped by jinja
        return self


class PyIdent(PySource):
    """A valid, non-keyword identifier (or dotted module path)."""

    __slots__ = ()


class PyLiteral(PySource):
    """A Python literal for a JSON value."""

    __slots__ = ()


class PyExpr(PySource):
    """An expression re-emitted from an allow-listed AST (type annotations)."""

    __slots__ = ()


class PyDocstring(PySource):
    """A complete triple-quoted docstring literal, escaped and indented."""

    __slots__ = ()


class PyComment(PySource):
    """Single-line comment text (without the leading `#`)."""

    __slots__ = ()


class PyCode(PySource):
    """A statement built here from checked parts (import lines)."""

    __slots__ = ()


# ------------------------------------------------------------------------------------ identifiers


def _check_ident(name: str) -> None:
    if not isinstance(name, str) or not name.isascii() or not name.isidentifier() or keyword.iskeyword(name):
        raise InternalGeneratorError(f"not a usable Python identifier: {name!r}")


def ident(name: str) -> PyIdent:
    _check_ident(name)
    return PyIdent(name, _TOKEN)


def dotted(name: str) -> PyIdent:
    """A module path: `a.b.c`, or a relative one (`.`, `.models`)."""
    stripped = name.lstrip(".")
    if stripped:
        for part in stripped.split("."):
            _check_ident(part)
    elif not name:
        raise InternalGeneratorError("empty module path")
    return PyIdent(name, _TOKEN)


def import_from(module: str, names: Sequence[tuple[str, str | None]]) -> PyCode:
    """`from module import a, b as c` (names in the given order)."""
    if not names:
        raise InternalGeneratorError(f"import from {module!r} without names")
    parts = []
    for name, alias in names:
        parts.append(str(ident(name)) if alias is None or alias == name else f"{ident(name)} as {ident(alias)}")
    return PyCode(f"from {dotted(module)} import {', '.join(parts)}", _TOKEN)


def import_from_wrapped(module: str, names: Sequence[tuple[str, str | None]]) -> PyCode:
    """`from module import (` one name per line `)`: the form isort and black agree on when too long."""
    single = import_from(module, names)  # validates every part
    members = single.split(" import ", 1)[1].split(", ")
    return PyCode(f"from {module} import (\n" + "".join(f"    {m},\n" for m in members) + ")", _TOKEN)


def import_module(module: str, alias: str | None = None) -> PyCode:
    text = f"import {dotted(module)}" if alias is None else f"import {dotted(module)} as {ident(alias)}"
    return PyCode(text, _TOKEN)


# --------------------------------------------------------------------------------------- literals


def literal(value: Any) -> PyLiteral:
    """A Python literal for a JSON value (str/int/float/bool/None/list/dict); strings via repr().

    Non-finite floats, non-string keys, other types, nesting deeper than MAX_LITERAL_DEPTH and more
    than MAX_LITERAL_ITEMS values are refused.
    """
    count = 0

    def emit(item: Any, depth: int) -> str:
        nonlocal count
        count += 1
        if count > MAX_LITERAL_ITEMS:
            raise InternalGeneratorError(f"JSON value too large for a literal (more than {MAX_LITERAL_ITEMS} items)")
        if depth > MAX_LITERAL_DEPTH:
            raise InternalGeneratorError(f"JSON value nested deeper than {MAX_LITERAL_DEPTH} levels")
        if item is None or isinstance(item, bool):
            return repr(item)
        if isinstance(item, int):
            return repr(int(item))
        if isinstance(item, float):
            if not math.isfinite(item):
                raise InternalGeneratorError(f"non-finite number {item!r} cannot be a JSON literal")
            return repr(float(item))
        if isinstance(item, str):
            return repr(str(item))
        if isinstance(item, list):
            return "[" + ", ".join(emit(element, depth + 1) for element in item) + "]"
        if isinstance(item, dict):
            members = []
            for key, element in item.items():
                if not isinstance(key, str):
                    raise InternalGeneratorError(f"JSON object key {key!r} is not a string")
                members.append(f"{str(key)!r}: {emit(element, depth + 1)}")
            return "{" + ", ".join(members) + "}"
        raise InternalGeneratorError(f"not a JSON value: {type(item).__name__}")

    return PyLiteral(emit(value, 0), _TOKEN)


# ------------------------------------------------------------------------------------------- text


def clean_text(text: str, *, keep_newlines: bool = True, max_chars: int = MAX_DOCSTRING_CHARS) -> str:
    """Normalise newlines; drop control characters (but \\n and \\t), bidi controls, U+2028/U+2029
    and lone surrogates; strip trailing whitespace per line and blank lines at both ends; cap length."""
    text = str(text).replace("\r\n", "\n").replace("\r", "\n")
    kept: list[str] = []
    for char in text:
        if char == "\n":
            kept.append("\n" if keep_newlines else " ")
        elif char == "\t":
            kept.append("\t" if keep_newlines else " ")
        elif char in _BIDI or char in _SEPARATORS or unicodedata.category(char) in ("Cc", "Cs"):
            continue
        else:
            kept.append(char)
    lines = [line.rstrip() for line in "".join(kept).split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    cleaned = "\n".join(lines)
    if len(cleaned) > max_chars:
        cleaned = cleaned[:max_chars].rstrip() + " [...]"
    return cleaned


def docstring(text: str, *, indent: str) -> PyDocstring:
    """A triple-quoted docstring for `text` at `indent` (the indentation of the body it opens).

    Backslashes are escaped first, then every `\"\"\"`; a quote is never left next to a delimiter and
    a multi-line docstring closes on its own line, so no input can end the string early.
    """
    if indent.strip(" "):
        raise InternalGeneratorError(f"docstring indent must be spaces, got {indent!r}")
    body = "\n".join(line.expandtabs(8) for line in clean_text(text).split("\n"))  # as black would
    body = body.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    # After escaping, backslashes come in pairs, so none can escape the closing quotes. A quote next
    # to a delimiter would merge with it: pad with a space (black does the same).
    if body.startswith('"'):
        body = " " + body
    lines = body.split("\n")
    if len(lines) == 1:
        if body.endswith('"'):
            body += " "
        return PyDocstring(f'"""{body}"""', _TOKEN)
    rest = [indent + line if line else "" for line in lines[1:]]
    return PyDocstring('"""' + lines[0] + "\n" + "\n".join(rest) + "\n" + indent + '"""', _TOKEN)


def comment(text: str) -> PyComment:
    """Text safe inside one `#` comment: a single line, no control or bidi characters, capped."""
    line = " ".join(clean_text(text, keep_newlines=False, max_chars=MAX_COMMENT_CHARS).split())
    return PyComment(line, _TOKEN)


# ------------------------------------------------------------------------------------ expressions

_EXPR_NODES: tuple[type[ast.AST], ...] = (
    ast.Name, ast.Attribute, ast.Subscript, ast.Tuple, ast.List, ast.BinOp, ast.BitOr, ast.Constant, ast.Load,
)


def expr(node: ast.expr) -> PyExpr:
    """Source for a type expression; only names, attributes, subscripts, tuples, `|` and constants."""
    for child in ast.walk(node):
        if not isinstance(child, _EXPR_NODES):
            raise InternalGeneratorError(f"unexpected {type(child).__name__} node in a type expression")
        if isinstance(child, ast.Name):
            _check_ident(child.id)
        elif isinstance(child, ast.Attribute):
            _check_ident(child.attr)
        elif isinstance(child, ast.BinOp) and not isinstance(child.op, ast.BitOr):
            raise InternalGeneratorError("only `|` may combine types")
        elif isinstance(child, ast.Constant) and not (
            child.value is None or isinstance(child.value, (str, int, float, bool, bytes))
        ):
            raise InternalGeneratorError(f"unexpected constant {child.value!r} in a type expression")
    text = ast.unparse(node)
    try:
        ast.parse(text, mode="eval")
    except SyntaxError as exc:  # pragma: no cover - ast.unparse output always parses
        raise InternalGeneratorError(f"type expression does not parse: {text!r}") from exc
    return PyExpr(text, _TOKEN)


def dict_display(items: Sequence[tuple[PySource, PySource]], *, indent: str | None = None) -> PyCode:
    """`{key: value, ...}` from checked keys and values; with `indent` (the indentation of the line
    holding the opening brace) one entry per line with trailing commas, closing brace at `indent`."""
    for key, value in items:
        if not isinstance(key, PySource) or not isinstance(value, PySource):
            raise InternalGeneratorError("dict_display takes pysource values only")
    if indent is None or not items:
        return PyCode("{" + ", ".join(f"{key}: {value}" for key, value in items) + "}", _TOKEN)
    if indent.strip(" "):
        raise InternalGeneratorError(f"indent must be spaces, got {indent!r}")
    body = "".join(f"{indent}    {key}: {value},\n" for key, value in items)
    return PyCode("{\n" + body + indent + "}", _TOKEN)


def generated_code(text: str, *, origin: str) -> PyCode:
    """Module text written by a pinned, trusted code generator (datamodel-code-generator), which does
    its own escaping: accepted only when it parses."""
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise InternalGeneratorError(f"{origin} output does not parse: {exc}") from exc
    return PyCode(text, _TOKEN)


def join_blocks(parts: Iterable[PySource]) -> PyCode:
    """Blocks separated by one blank line."""
    return join(parts, "\n\n")


def join(parts: Iterable[PySource], separator: str) -> PyCode:
    """Join checked fragments with a fixed separator (", ", "\\n", "\\n\\n")."""
    if separator not in (", ", "\n", "\n\n", " | "):
        raise InternalGeneratorError(f"unexpected separator {separator!r}")
    items = list(parts)
    for item in items:
        if not isinstance(item, PySource):
            raise InternalGeneratorError(f"refusing to join unchecked text {item!r:.80}")
    return PyCode(separator.join(items), _TOKEN)
