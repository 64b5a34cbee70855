"""The only code that turns data into Python source: the `PySource` markers and their escaping.

Everything a spec or server supplies is data. It reaches generated code only as

- identifiers rebuilt by `naming` and checked here (`ident`, `dotted`),
- `repr()` output of one recursive JSON-literal emitter (`literal`, `literal_node`),
- escaped docstrings (`docstring`) and sanitised single-line comments (`comment`),
- fixed fragments written in the generator itself (`code`: plain ASCII tokens, no quotes).

Each function returns a `PySource` marker (a `str` subclass that only this module can create);
the template environment (`render.environment`) refuses to output any value that is not one.
Larger pieces are nodes (`Seq`, `Brk`, `Param`) that hold only markers and other nodes
(`seq`, `brk`, `call`, `keyword_arg`, `annotated_name`, `union_of`); `typenodes` builds type
expressions from them. `layout` decides where a node's statement breaks into lines, the way black
would; `laid_out` mints its result only when it is the node's own source apart from white space,
commas and parentheses, so the layout engine never creates source text itself.
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

from ...errors import InternalGeneratorError
from . import black_format, spelling

__all__ = [
    "Brk",
    "Node",
    "Param",
    "PyCode",
    "PyComment",
    "PyDocstring",
    "PyIdent",
    "PyLiteral",
    "PyOp",
    "PySource",
    "Seq",
    "annotated_name",
    "brk",
    "call",
    "code",
    "comment",
    "docstring",
    "dotted",
    "flat",
    "ident",
    "import_from",
    "import_from_wrapped",
    "import_module",
    "indent_first",
    "join",
    "join_blocks",
    "keyword_arg",
    "laid_out",
    "literal",
    "literal_node",
    "seq",
    "union_of",
]

_TOKEN = object()

MAX_COMMENT_CHARS = 300


class PySource(str):
    """Python source text produced by this module. Only `pysource` can create instances."""

    __slots__ = ()

    def __new__(cls, value: str, token: object = None) -> PySource:
        if token is not _TOKEN:
            raise TypeError(f"{cls.__name__} values are created by codegen.render.python.pysource only")
        return str.__new__(cls, value)

    def __html__(self) -> str:  # markupsafe: already "safe" -> never HTML-escaped by jinja
        return self


# `_mint(PyCode, text)` is `PyCode(text, _TOKEN)` without a Python-level call (about 120,000 markers
# for a 1,000-tool package); only this module uses it.
_mint = str.__new__


class PyIdent(PySource):
    """A valid, non-keyword identifier (or dotted module path)."""

    __slots__ = ()


class PyLiteral(PySource):
    """A Python literal for a JSON value."""

    __slots__ = ()


class PyDocstring(PySource):
    """A complete triple-quoted docstring literal, escaped and indented."""

    __slots__ = ()


# Repeats in shape only (duplicates): one marker class per kind of source text.
class PyComment(PySource):
    """Single-line comment text (without the leading `#`)."""

    __slots__ = ()


class PyCode(PySource):
    """Code built here from checked parts: fixed fragments, import lines, laid-out statements."""

    __slots__ = ()


class PyOp(PySource):
    """An operator between the parts of an expression (` | `): black may split lines at it."""

    __slots__ = ()


# Nodes hold only markers and other nodes (checked as they are made), so `flat(node)` is always
# checked source. They are immutable, and written by hand rather than as frozen dataclasses: a
# 1,000-tool package makes about 100,000 of them, and a frozen dataclass's __init__ costs twice as much.


class _Composite:
    """A node made of other nodes; `text` is its source on one line, computed once when it is made."""

    __slots__ = ()
    text: str

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} nodes are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} nodes are immutable")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.text!r})"


_set = object.__setattr__  # how a node's own __init__ writes its fields


class Brk(_Composite):
    """A bracketed, comma-separated list of nodes: a call's arguments, a subscript, a list/dict display.

    `magic`: when black must split it, one item per line with a trailing comma is stable (false for
    one-item subscripts, where a trailing comma would change the meaning and black does not add one).
    `one_tuple`: `(x,)`, a tuple of one keeps its comma on one line too.
    """

    __slots__ = ("close", "items", "magic", "one_tuple", "open", "text")
    open: PySource
    items: tuple[Node, ...]
    close: PySource
    magic: bool
    one_tuple: bool

    def __init__(
        self, open: PySource, items: tuple[Node, ...], close: PySource, magic: bool, one_tuple: bool = False
    ) -> None:
        if not (isinstance(open, PySource) and isinstance(close, PySource)):
            raise InternalGeneratorError(f"refusing unchecked brackets {open!r:.20} {close!r:.20}")
        comma = "," if one_tuple and len(items) == 1 else ""
        _set(self, "open", open)
        _set(self, "items", items)
        _set(self, "close", close)
        _set(self, "magic", magic)
        _set(self, "one_tuple", one_tuple)
        texts = [item if isinstance(item, PySource) else flat(item) for item in items]  # `flat` checks
        _set(self, "text", open + ", ".join(texts) + comma + close)


class Seq(_Composite):
    """Nodes written one after the other."""

    __slots__ = ("parts", "text")
    parts: tuple[Node, ...]

    def __init__(self, parts: tuple[Node, ...]) -> None:
        text = ""
        for part in parts:  # mostly two or three parts
            text += part if isinstance(part, PySource) else flat(part)  # `flat` checks what is no marker
        _set(self, "parts", parts)
        _set(self, "text", text)


class Param(_Composite):
    """`name: annotation` or `name: annotation = default` (a parameter or an annotated assignment)."""

    __slots__ = ("annotation", "default", "name", "text")
    name: PySource  # the identifier followed by ": "
    annotation: Node
    default: Node | None

    def __init__(self, name: PySource, annotation: Node, default: Node | None) -> None:
        if not isinstance(name, PySource):
            raise InternalGeneratorError(f"refusing to lay out unchecked text {name!r:.80}")
        text = name + flat(annotation)
        _set(self, "name", name)
        _set(self, "annotation", annotation)
        _set(self, "default", default)
        _set(self, "text", text if default is None else text + " = " + flat(default))


Node = PySource | Brk | Seq | Param

_COLON = _mint(PyCode, ": ")
_OPEN_LIST = _mint(PyCode, "[")
_CLOSE_LIST = _mint(PyCode, "]")
_OPEN_DICT = _mint(PyCode, "{")
_CLOSE_DICT = _mint(PyCode, "}")
_BAR = _mint(PyOp, " | ")


# ------------------------------------------------------------------------------------ identifiers


def _check_ident(name: str) -> None:
    if not isinstance(name, str) or not name.isascii() or not name.isidentifier() or keyword.iskeyword(name):
        raise InternalGeneratorError(f"not a usable Python identifier: {name!r}")


def ident(name: str) -> PyIdent:
    if not isinstance(name, str):
        _check_ident(name)  # raises
    return _ident(name)


@functools.lru_cache(maxsize=65536)  # the same names recur in statement after statement
def _ident(name: str) -> PyIdent:
    _check_ident(name)
    return _mint(PyIdent, name)


@functools.lru_cache(maxsize=4096)  # a module's imports name the same few modules
def dotted(name: str) -> PyIdent:
    """A module path: `a.b.c`, or a relative one (`.`, `.models`)."""
    stripped = name.lstrip(".")
    if stripped:
        for part in stripped.split("."):
            _check_ident(part)
    elif not name:
        raise InternalGeneratorError("empty module path")
    return _mint(PyIdent, name)


def import_from(module: str, names: Sequence[tuple[str, str | None]]) -> PyCode:
    """`from module import a, b as c` (names in the given order)."""
    if not names:
        raise InternalGeneratorError(f"import from {module!r} without names")
    parts = []
    for name, alias in names:
        parts.append(
            str(ident(name)) if alias is None or alias == name else f"{ident(name)} as {ident(alias)}"
        )
    return _mint(PyCode, f"from {dotted(module)} import {', '.join(parts)}")


def import_from_wrapped(module: str, names: Sequence[tuple[str, str | None]]) -> PyCode:
    """`from module import (` one name per line `)`: the form isort and black agree on when too long."""
    single = import_from(module, names)  # validates every part
    members = single.split(" import ", 1)[1].split(", ")
    return _mint(PyCode, f"from {module} import (\n" + "".join(f"    {m},\n" for m in members) + ")")


def import_module(module: str, alias: str | None = None) -> PyCode:
    text = f"import {dotted(module)}" if alias is None else f"import {dotted(module)} as {ident(alias)}"
    return _mint(PyCode, text)


# --------------------------------------------------------------------------------------- literals


def _literal_node(value: Any) -> Node:
    if value is None or isinstance(value, bool):
        return _mint(PyLiteral, repr(value))
    if isinstance(value, (int, float)):
        return _mint(PyLiteral, spelling.number(value))
    if isinstance(value, str):
        return _string_literal(value)
    if isinstance(value, list):
        if not value:
            return _mint(PyLiteral, "[]")
        return Brk(_OPEN_LIST, tuple(_literal_node(item) for item in value), _CLOSE_LIST, True)
    if not value:
        return _mint(PyLiteral, "{}")
    items = tuple(
        Seq((_mint(PyLiteral, spelling.string(key)), _COLON, _literal_node(item)))
        for key, item in value.items()
    )
    return Brk(_OPEN_DICT, items, _CLOSE_DICT, True)


def literal_node(value: Any) -> Node:
    """A JSON value as a layout node: lists and objects can be split over lines like black does."""
    if isinstance(value, str):
        return _string_literal(value)
    if type(value) is int:  # not a bool
        return _int_literal(value)
    if not (value is None or isinstance(value, (int, float))):  # a scalar has nothing to walk
        spelling.check_json(value)
    return _literal_node(value)


@functools.lru_cache(maxsize=4096)  # bounds and defaults (`ge=0`, `max_length=200`) recur
def _int_literal(value: int) -> PyLiteral:
    return _mint(PyLiteral, spelling.number(value))


@functools.lru_cache(maxsize=16384)  # wire names and descriptions recur: models, client, server, CLI
def _string_literal(value: str) -> PyLiteral:
    return _mint(PyLiteral, spelling.string(value))


def literal(value: Any) -> PyLiteral:
    """A Python literal for a JSON value (str/int/float/bool/None/list/dict), black-normalised.

    Non-finite floats, non-string keys, other types, nesting deeper than MAX_LITERAL_DEPTH and more
    than MAX_LITERAL_ITEMS values are refused.
    """
    if isinstance(value, str):  # most literals (descriptions, names): nothing to walk
        return _string_literal(value)
    node = literal_node(value)
    return node if isinstance(node, PyLiteral) else _mint(PyLiteral, flat(node))  # a scalar is one already


# ------------------------------------------------------------------------------------------- text


_BACKSLASH_NEWLINE = re.compile(r"\\\s*\n")


def docstring(text: str, *, indent: str) -> PyDocstring:
    """A triple-quoted docstring for `text` at `indent` (the indentation of the body it opens),
    written exactly as black writes it, so black leaves the file alone.

    The text is cleaned (`spelling.clean_text`), then backslashes are escaped first and every `\"\"\"` after
    that, so no input can end the string early. A multi-line docstring closes on its own line. Then
    black's own docstring rules run on the result (`linegen.visit_STRING`: first line stripped,
    later lines dedented and re-indented, a quote or odd backslash next to the closing quotes padded).
    """
    if indent.strip(" "):
        raise InternalGeneratorError(f"docstring indent must be spaces, got {indent!r}")
    cleaned = "\n".join(line.expandtabs(8) for line in spelling.clean_text(text).split("\n"))
    body = cleaned.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = body.split("\n")
    if len(lines) > 1:
        raw = lines[0] + "\n" + "\n".join(indent + line if line else "" for line in lines[1:]) + "\n" + indent
        if _BACKSLASH_NEWLINE.search(raw):
            return _mint(PyDocstring, '"""' + raw + '"""')  # black leaves such docstrings exactly as they are
        value = spelling.fix_multiline_docstring(raw, indent)
    else:
        raw = body
        value = body.strip()
    if value:
        if value[0] == '"':
            value = " " + value
        if value[-1] == '"':
            value += " "
        if value[-1] == "\\" and (len(value) - len(value.rstrip("\\"))) % 2:
            value += " "
    elif raw:
        value = " "
    result_lines = value.splitlines()
    last = len(result_lines[-1]) if value and not value.endswith("\n") else 0
    width = black_format.line_length()
    if len(result_lines) > 1 and last + 3 > width and len(indent) + 3 <= width:  # pragma: no cover
        value += "\n" + indent  # black's rule; unreachable while multi-line docstrings end with the indent
    return _mint(PyDocstring, '"""' + value + '"""')


def comment(text: str) -> PyComment:
    """Text safe inside one `#` comment: a single line, no control or bidi characters, capped."""
    line = " ".join(spelling.clean_text(text, keep_newlines=False, max_chars=MAX_COMMENT_CHARS).split())
    return _mint(PyComment, line)


# ------------------------------------------------------------------------------------------ nodes


def seq(*parts: Node) -> Seq:
    """`parts` written one after the other (each checked by `Seq` itself)."""
    return Seq(parts)


_BRACKETS: Final = {pair: (_mint(PyCode, pair[0]), _mint(PyCode, pair[1])) for pair in ("()", "[]", "{}")}


def brk(open_: str, items: Sequence[Node], close: str, *, magic: bool = True, one_tuple: bool = False) -> Brk:
    brackets = _BRACKETS.get(open_ + close)
    if brackets is None:
        raise InternalGeneratorError(f"unexpected brackets {open_!r} {close!r}")
    return Brk(brackets[0], tuple(items), brackets[1], magic, one_tuple)  # items checked by `Brk` itself


def call(func: Node, args: Sequence[Node]) -> Seq:
    """`func(arg, ...)`."""
    return seq(func, brk("(", args, ")"))


def keyword_arg(name: str, value: Node) -> Seq:
    """`name=value` inside a call."""
    if isinstance(value, PySource):
        return _keyword_marker(name, value)
    return seq(_keyword_prefix(name), value)


# `typed`: the same text as another marker class is another node (a `PyOp` is where a line may break)
@functools.lru_cache(maxsize=65536, typed=True)  # descriptions, aliases and bounds recur field after field
def _keyword_marker(name: str, value: PySource) -> Seq:
    return Seq((_keyword_prefix(name), value))


@functools.lru_cache(maxsize=1024)  # a handful of keywords (alias, description, ge, ...) used everywhere
def _keyword_prefix(name: str) -> PyCode:
    return _mint(PyCode, f"{ident(name)}=")


_VALUE_NODES: Final = (PySource, Brk, Seq)  # what an annotation or a default may be


def annotated_name(name: str, annotation: Node, default: Node | None = None) -> Param:
    """`name: annotation` or `name: annotation = default` (a parameter or a class attribute)."""
    if not (isinstance(annotation, _VALUE_NODES) and (default is None or isinstance(default, _VALUE_NODES))):
        part = default if isinstance(annotation, _VALUE_NODES) else annotation
        raise InternalGeneratorError(f"refusing to lay out unchecked text {part!r:.80}")
    return Param(_name_prefix(ident(name)), annotation, default)


@functools.lru_cache(maxsize=65536)  # field and parameter names recur (sync and async methods, handlers)
def _name_prefix(name: PyIdent) -> PyCode:
    return _mint(PyCode, name + ": ")


@functools.lru_cache(maxsize=65536)  # a fixed set of fragments, used in every method
def code(text: str) -> PyCode:
    """A fixed fragment of generated code written in the generator itself (never spec text): it
    must be printable ASCII without quotes or newlines, so it cannot carry data."""
    if not text.isascii() or not text.isprintable() or any(c in text for c in "'\"\\#\n"):
        raise InternalGeneratorError(f"code fragment {text!r} is not a plain ASCII token sequence")
    return _mint(PyCode, text)


def union_of(members: Sequence[Node]) -> Seq:
    """`A | B | ...`: the operators are `PyOp` markers, where `layout` may break the line."""
    parts: list[Node] = []
    for member in members:
        if parts:
            parts.append(_BAR)
        parts.append(member)
    return seq(*parts)


def flat(node: Node) -> str:
    """The node on one line."""
    if isinstance(node, PySource):
        return node  # already a str: no copy of a long literal
    if isinstance(node, _Composite):
        return node.text
    raise InternalGeneratorError(f"refusing to lay out unchecked text {node!r:.80}")


_LAYOUT_BYTES: Final = b" \n,()"


def _same_but_layout(text: str, one_line: str) -> bool:
    """Whether `text` is `one_line` apart from what a layout may change: line breaks, indentation,
    commas and parentheses (spaces and newlines are the only white space in a statement: literals
    escape every other space character)."""
    if text.isascii() and one_line.isascii():  # the common case; bytes.translate drops them fastest
        return text.encode().translate(None, _LAYOUT_BYTES) == one_line.encode().translate(
            None, _LAYOUT_BYTES
        )
    return _without_layout(text) == _without_layout(one_line)


def _without_layout(text: str) -> str:
    return text.replace(" ", "").replace("\n", "").replace(",", "").replace("(", "").replace(")", "")


def laid_out(node: Node, text: str, *, indent: str) -> PyCode:
    """The statement `node` at `indent`, as `text`: its one-line source, or the lines `layout` (or
    black) broke it into. Minted only when `text` differs from the one-line source in nothing but
    white space, commas and parentheses, so a layout cannot add what no checked part said."""
    if indent.strip(" "):
        raise InternalGeneratorError(f"indent must be spaces, got {indent!r}")
    one_line = indent + flat(node)
    if text != one_line and not _same_but_layout(text, one_line):
        raise InternalGeneratorError(f"a layout changed more than line breaks of {one_line.strip()!r:.80}")
    return _mint(PyCode, text)


def indent_first(source: PySource, indent: str) -> PyCode:
    """`source` (whose later lines are already indented, like a docstring's) placed at `indent`."""
    if indent.strip(" "):
        raise InternalGeneratorError(f"indent must be spaces, got {indent!r}")
    return _mint(PyCode, indent + source)


def indent_lines(source: PySource, indent: str) -> PyCode:
    """Every line of `source` (a block at column 0) moved to `indent`."""
    if indent.strip(" "):
        raise InternalGeneratorError(f"indent must be spaces, got {indent!r}")
    if not indent:
        return _mint(PyCode, source)
    return _mint(PyCode, "\n".join(indent + line if line else line for line in source.split("\n")))


def join_blocks(parts: Iterable[PySource]) -> PyCode:
    """Blocks separated by one blank line."""
    return join(parts, "\n\n")


def join(parts: Iterable[PySource], separator: str) -> PyCode:
    """Join checked fragments with a fixed separator (", ", "\\n", "\\n\\n")."""
    if separator not in (", ", "\n", "\n\n", "\n\n\n", " | "):
        raise InternalGeneratorError(f"unexpected separator {separator!r}")
    items = list(parts)
    for item in items:
        if not isinstance(item, PySource):
            raise InternalGeneratorError(f"refusing to join unchecked text {item!r:.80}")
    return _mint(PyCode, separator.join(items))
