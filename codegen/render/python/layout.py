"""Statements written already in black's layout, so no formatter runs over whole files.

Only layouts whose black result is certain are used:

- a statement that fits stays on one line;
- otherwise its *last* bracket is split one item per line with a trailing comma (black's "magic
  trailing comma" then keeps that layout), when the line before the bracket and the closing line
  fit; items are laid out the same way, and an item black could not split (a long string,
  `name=<string>`) stays as it is, as black leaves it;
- a def puts one parameter per line (black's left-hand split); a long union annotation of a
  parameter or a field goes in parentheses, on one line or one `| member` per line, the way
  black's "parenthesize long type hints" does; a field whose `name: annotation =` fits keeps it and
  wraps the value instead, as black does.

Every width is measured against the line length of the style in force (`black_format.line_length()`).

Anything else (a one-item subscript too long for its line, a long class line, ...) goes to black
itself (`black_format.black_statement`), so the output is black's in every case. tests/codegen
(test_generate_format.py and the black checks of every spec and corpus) prove it.

Layout only decides where lines break: it reads the checked nodes `pysource` builds and hands the
lines back to `pysource.laid_out`, which mints the statement only when it is the node's own source
apart from white space, commas and parentheses. No text is made here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from . import black_format, pysource
from .pysource import Brk, Node, Param, PyCode, PyIdent, PyOp, PySource, Seq, flat

__all__ = [
    "call_statements",
    "class_header",
    "def_header",
    "def_headers",
    "line_length",
    "statement",
    "width",
]

line_length = black_format.line_length  # the line length of the style in force (`black_format.formatting`)

# Every character black's width table (black 26.10.1) counts as two columns, and more: the table
# lists Hangul Jamo, then nothing before U+231A (test_generate_format.py checks it). Text without
# these characters is one column per character, and black need not be imported to measure it.
_MAYBE_WIDE = re.compile("[\u1100-\u115f\u231a-\U0010ffff]")


def width(text: str) -> int:
    """Display width as black measures it (East Asian wide characters count twice)."""
    if text.isascii() or not _MAYBE_WIDE.search(text):
        return len(text)
    from black.strings import str_width

    return str_width(text)


# ------------------------------------------------------------------------------------ statements

_ARROW = pysource.code(" -> ")
_COLON = pysource.code(":")
_CLASS = pysource.code("class ")
_EQUALS = pysource.code(" = ")


def statement(node: Node, *, indent: str) -> PyCode:
    """One simple statement at `indent` (4 spaces per block level), laid out as black would."""
    lines = _lines(node, indent, "", inside=False)
    level = len(indent) // 4
    text = "\n".join(lines) if lines is not None else black_format.black_statement(flat(node), level)
    return pysource.laid_out(node, text, indent=indent)


def call_statements(heads: Sequence[Node], arguments: Brk, *, indent: str) -> list[PyCode]:
    """`statement(seq(head, arguments))` for each head (`return self.f`, `return await self.f`): the
    arguments, when split one per line, are laid out once for all of them."""
    out: list[PyCode] = []
    items: list[str] | None = None  # the split arguments' lines, once laid out
    laid = False
    for head in heads:
        node = pysource.seq(head, arguments)
        one = indent + flat(node)
        if width(one) <= line_length():
            out.append(pysource.laid_out(node, one, indent=indent))
            continue
        if not (arguments.items and arguments.magic):
            out.append(statement(node, indent=indent))
            continue
        # `_split_last_bracket`, its items shared
        first, closing = indent + flat(head) + arguments.open, indent + arguments.close
        if width(first) > line_length() or width(closing) > line_length():
            out.append(statement(node, indent=indent))
            continue
        if not laid:
            items, laid = _item_lines(arguments.items, indent + "    ", 1), True
        if items is None:
            out.append(statement(node, indent=indent))
            continue
        out.append(pysource.laid_out(node, "\n".join([first, *items, closing]), indent=indent))
    return out


def def_header(
    name: PyIdent, params: Sequence[Node], returns: Node, *, indent: str, is_async: bool
) -> PyCode:
    """`[async ]def name(params) -> returns:`; too long: one parameter per line (black's left-hand split)."""
    return _DefLayout(name, params, returns, indent).header(is_async)


def def_headers(
    name: PyIdent, params: Sequence[Node], returns: Node, *, indent: str
) -> tuple[PyCode, PyCode]:
    """`def_header` of a blocking and an asyncio method alike: their parameters are laid out once."""
    shared = _DefLayout(name, params, returns, indent)
    return shared.header(False), shared.header(True)


class _DefLayout:
    """What the `def` and the `async def` of one signature share: everything after the keyword."""

    def __init__(self, name: PyIdent, params: Sequence[Node], returns: Node, indent: str) -> None:
        self.name, self.params, self.returns, self.indent = name, params, returns, indent
        self.signature = pysource.seq(name, pysource.brk("(", params, ")"), _ARROW, returns, _COLON)

    def header(self, is_async: bool) -> PyCode:
        indent = self.indent
        keyword = pysource.code("async def " if is_async else "def ")
        node = pysource.seq(keyword, self.signature)
        one = indent + flat(node)
        if width(one) <= line_length():
            return pysource.laid_out(node, one, indent=indent)
        head = indent + keyword + self.name + "("
        body = self.body if width(head) <= line_length() else None
        if body is None:
            text = black_format.black_statement(one.removeprefix(indent), len(indent) // 4, header=True)
        else:
            text = "\n".join([head, *body])
        return pysource.laid_out(node, text, indent=indent)

    @functools.cached_property
    def body(self) -> list[str] | None:
        """One parameter per line, then `) -> returns:` (None: not black's layout for certain)."""
        indent = self.indent
        tail = ") -> " + flat(self.returns) + ":"
        tail_lines: list[str] | None = [indent + tail]
        if width(indent + tail) > line_length():
            members = _union_members(self.returns)
            body = _union_body(members, indent + "    ", 0) if members is not None else None
            tail_lines = None if body is None else [indent + ") -> (", *body, indent + "):"]
        if tail_lines is None:
            return None
        lines: list[str] = []
        for param in self.params:
            sub = _lines(param, indent + "    ", ",", inside=True)
            if sub is None:
                return None
            lines += sub
        return lines + tail_lines


def class_header(name: PyIdent, bases: Sequence[Node], *, indent: str = "") -> PyCode:
    """`class Name(bases):` (black's layout when too long)."""
    node = pysource.seq(_CLASS, name, pysource.brk("(", bases, ")"), _COLON)
    one = indent + flat(node)
    if width(one) > line_length():
        head, body = indent + "class " + name + "(", indent + "    " + flat(bases[0]) if bases else ""
        if len(bases) == 1 and width(head) <= line_length() and width(body) <= line_length():
            # black's right-hand split: the one base on a line of its own (a class line gets no
            # trailing comma; a base that fits is not split further)
            one = "\n".join([head, body, indent + "):"])
        else:
            one = black_format.black_statement(one.removeprefix(indent), len(indent) // 4, header=True)
    return pysource.laid_out(node, one, indent=indent)


# ---------------------------------------------------------------------------------------- engine
#
# Each function returns the lines of one node at `indent` (followed by `suffix`, "" or ","), or None
# when it cannot be sure of black's layout; `inside`: the node is an item of a split bracket.
#
# A node's one-line text is the text of its parts (`_parts`) one after the other, so the text before
# its last part is a slice of `flat(node)`: the engine walks a node's parts only where it must look
# at all of them (a union, an item of a split bracket).


def _parts(node: Node) -> list[PySource | Brk]:
    out: list[PySource | Brk] = []
    stack: list[Node] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Seq):
            stack.extend(reversed(item.parts))
        elif isinstance(item, Param):
            if item.default is not None:
                stack += (item.default, _EQUALS)
            stack += (item.annotation, item.name)
        else:
            out.append(item)
    return out


def _last_part(node: Node) -> PySource | Brk:
    """`_parts(node)[-1]`, found without walking the whole node."""
    item = node
    while True:
        if isinstance(item, Seq):
            if not item.parts:
                return _parts(node)[-1]  # an empty sequence at the end: the whole walk
            item = item.parts[-1]
        elif isinstance(item, Param):
            item = item.annotation if item.default is None else item.default
        else:
            return item


def _operands(parts: list[PySource | Brk]) -> list[list[PySource | Brk]] | None:
    """The operands of a top-level `A | B | ...` (None when the parts make no union)."""
    if not any(isinstance(part, PyOp) for part in parts):
        return None
    members: list[list[PySource | Brk]] = [[]]
    for part in parts:
        if isinstance(part, PyOp):
            members.append([])
        else:
            members[-1].append(part)
    return members


def _union_members(node: Node) -> list[list[PySource | Brk]] | None:
    """The operands of a top-level `A | B | ...` (None when `node` is no union)."""
    return _operands(_parts(node))


def _item_lines(items: Sequence[Node], indent: str, depth: int) -> list[str] | None:
    """The items of a split bracket, each on its own line(s) at `indent` and followed by a comma."""
    out: list[str] = []
    limit = line_length()
    for item in items:
        line = indent + flat(item) + ","
        if (len(line) if line.isascii() else width(line)) <= limit:  # most items fit: no `_lines` call
            out.append(line)
            continue
        sub = _lines(item, indent, ",", inside=True, depth=depth)
        if sub is None:
            return None
        out += sub
    return out


def _operand_lines(members: list[list[PySource | Brk]], indent: str, depth: int) -> list[str] | None:
    """A union split at its operators: `A`, then `| B`, `| C`, ... each at `indent`."""
    out: list[str] = []
    for position, member in enumerate(members):
        sub = _member_lines(member, indent, "| " if position else "", depth)
        if sub is None:
            return None
        out += sub
    return out


def _member_lines(member: list[PySource | Brk], indent: str, prefix: str, depth: int) -> list[str] | None:
    """One union operand at `indent` (after `prefix`, "" or "| "): one line, or its last bracket split."""
    text = indent + prefix + "".join(map(flat, member))
    if width(text) <= line_length():
        return [text]
    last = member[-1]
    if not (isinstance(last, Brk) and last.items):
        return None
    head = text[: len(text) - len(last.text)] + last.open
    if width(head) > line_length():
        return None
    if not last.magic:  # a one-item subscript (`list[...]`): its item alone inside, no comma
        if len(last.items) != 1:
            return None
        item = last.items[0]
        body = _union_body(_union_members(item) or [_parts(item)], indent + "    ", depth + 1)
        return None if body is None else [head, *body, indent + last.close]
    items = _item_lines(last.items, indent + "    ", depth + 1)
    return None if items is None else [head, *items, indent + last.close]


def _union_body(members: list[list[PySource | Brk]], indent: str, depth: int) -> list[str] | None:
    """black's layout of a union inside parentheses (its own, around a long type hint, or a
    subscript's): one line when it fits, else one operand per line, each after the first led by `| `."""
    one = indent + " | ".join("".join(map(flat, member)) for member in members)
    if width(one) <= line_length():
        return [one]
    return _operand_lines(members, indent, depth)


def _split_annotation(node: Param, indent: str, suffix: str, depth: int) -> list[str] | None:
    """`name: (` union `)[ = default]` or `name: Head[` items `][ = default]`: how black splits an
    annotation that is too long, keeping the default (if any) on the closing line."""
    rest = ("" if node.default is None else " = " + flat(node.default)) + suffix
    if (
        node.default is not None
        and width(indent + node.name + flat(node.annotation) + " =") <= line_length() - 2
    ):
        # black keeps the annotation and wraps the value instead: `name: annotation = (` value `)`
        value = _lines(node.default, indent + "    ", "", inside=True, depth=depth + 1)
        if value is None:
            return None
        return [indent + node.name + flat(node.annotation) + " = (", *value, indent + ")" + suffix]
    parts = _parts(node.annotation)
    members = _operands(parts)
    body: list[str] | None
    if members is not None:
        head = indent + node.name + "("
        body = _union_body(members, indent + "    ", depth)
        closing = indent + ")" + rest
    else:
        last = parts[-1]
        if not (isinstance(last, Brk) and last.items and last.magic):
            return None
        annotation = flat(node.annotation)
        head = indent + node.name + annotation[: len(annotation) - len(last.text)] + last.open
        body = _item_lines(last.items, indent + "    ", depth + 1)
        closing = indent + last.close + rest
    if body is None or width(head) > line_length():
        return None
    if width(closing) <= line_length():
        return [head, *body, closing]
    if node.default is None or members is None:
        return None
    # the value does not fit after the annotation either: `) = Field(` items `)`, as black splits it
    value = _split_last_bracket(node.default, indent, suffix, depth + 1)
    if value is None:
        return None
    joined = indent + ") = " + value[0][len(indent) :]  # value[0] is `indent + "Field("`
    if width(joined) > line_length():
        return None
    return [head, *body, joined, *value[1:]]


def _lines(node: Node, indent: str, suffix: str, *, inside: bool, depth: int = 0) -> list[str] | None:
    line = indent + flat(node) + suffix
    if (len(line) if line.isascii() else width(line)) <= line_length():
        return [line]
    if depth > 64:
        return None
    if isinstance(node, Param):
        if inside:  # a def parameter: black parenthesizes a long union annotation
            members = _union_members(node.annotation)
            if members is None:
                return None
            rest = ("" if node.default is None else " = " + flat(node.default)) + suffix
            body = _union_body(members, indent + "    ", depth)
            head, closing = indent + node.name + "(", indent + ")" + rest
            if body is None or width(head) > line_length() or width(closing) > line_length():
                return None
            return [head, *body, closing]
        if node.default is None:
            members = _union_members(node.annotation)
            if members is not None:
                # `name: A | B | C` alone: with two or more `|` black keeps its parentheses around the
                # annotation (can_omit_invisible_parens); with one, black decides by more rules: black
                return _split_annotation(node, indent, suffix, depth) if len(members) > 2 else None
        split = _split_last_bracket(node, indent, suffix, depth)
        return split if split is not None else _split_annotation(node, indent, suffix, depth)
    if not inside:
        return _split_last_bracket(node, indent, suffix, depth)
    parts = _parts(node)
    members = _operands(parts)
    if members is not None:  # `A`, `| B`, `| C,`: black splits at the operator
        out = _operand_lines(members, indent, depth)
        if out is None:
            return None
        out[-1] += suffix
        return out if width(out[-1]) <= line_length() else None
    split = _split_last_bracket(node, indent, suffix, depth, parts[-1])
    if split is None and not any(isinstance(part, Brk) for part in parts):
        return [line]  # nothing black could split: it stays one (long) line
    return split


def _split_last_bracket(
    node: Node, indent: str, suffix: str, depth: int, last: PySource | Brk | None = None
) -> list[str] | None:
    """The node's last part, a bracket, split one item per line with a trailing comma (None when
    the last part is no such bracket, or a line would not fit). `last`: `_last_part(node)`, if known."""
    if last is None:
        last = _last_part(node)
    if not (isinstance(last, Brk) and last.items and last.magic):
        return None
    text = flat(node)
    head = indent + text[: len(text) - len(last.text)] + last.open
    closing = indent + last.close + suffix
    if width(head) > line_length() or width(closing) > line_length():
        return None
    items = _item_lines(last.items, indent + "    ", depth + 1)
    return None if items is None else [head, *items, closing]
