"""A generated module's import block, planned as data, and how the module spells type names.

`Imports` records every `from module import name` a module needs while its code is built and prints
them in isort (ruff `I`) order; `type_names` gives the `TypeNames` of a module (`X` in models.py,
`_m.X` elsewhere) whose typing and pydantic helpers are imported on first use.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from ...errors import InternalGeneratorError
from ...model.ir import TypeExpr
from . import layout, pysource
from .pysource import Node, PyCode, PySource
from .typenodes import TypeNames

__all__ = ["Imports", "natural", "type_names"]


_DIGITS = re.compile(r"(\d+)")


# `natural` keys are strings that sort as ruff's tuples would, compared in one step (models.py sorts
# thousands of names): each run of the name is a tag (a digit run with a leading zero, other digits
# preceded by their count, letters), the run, and NUL, which sorts before any character of a name.
_ZERO_LED, _DIGIT_RUN, _TEXT_RUN, _RUN_END = "\x01", "\x02", "\x03", "\x00"


@functools.lru_cache(maxsize=65536)  # module and member names recur in every module's imports
def natural(text: str) -> str:
    """ruff's natural order (the `natord` crate): digits sort before letters; runs of digits compare
    as numbers (`T2` before `T10`), except that a run with a leading zero compares digit by digit."""
    if _RUN_END in text:
        raise InternalGeneratorError(f"no natural order for {text!r:.80}")
    key = []
    for part in _DIGITS.split(text):
        if not part:
            continue
        if part.isdigit():
            key.append(_ZERO_LED if part[0] == "0" else _DIGIT_RUN + chr(len(part)))
        else:
            key.append(_TEXT_RUN)
        key.append(part + _RUN_END)
    return "".join(key)


@functools.lru_cache(maxsize=65536)
def _member_key(name: str) -> tuple[int, str, str]:
    """isort/ruff `order-by-type`: CONSTANTS, then Classes, then everything else (natural order)."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return kind, natural(name.lower()), name


@dataclass
class Imports:
    """An import block planned as data and printed in isort (ruff `I`) order."""

    future: bool = False
    indent: str = ""  # the block's indentation (an `if TYPE_CHECKING:` block: 4 spaces)
    entries: set[tuple[str, str | None, str]] = field(default_factory=set)  # (module, name|None, local)
    # local name -> (module, name): what `add` checks a new entry against (models.py imports
    # thousands of names)
    _bound: dict[str, tuple[str, str | None]] = field(default_factory=dict, repr=False, compare=False)

    def add(self, module: str, name: str | None = None, local: str | None = None) -> str:
        """Record `from module import name as local` (or `import module as local`); return the local name."""
        local = local or name or module
        bound = self._bound.setdefault(local, (module, name))
        if bound != (module, name):
            raise InternalGeneratorError(f"two imports bound to {local!r}")
        self.entries.add((module, name, local))
        return local

    def locals(self) -> set[str]:
        return {entry[2] for entry in self.entries}

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def _section(module: str) -> int:
        if module.startswith("."):
            return 3
        return 1 if module.split(".", 1)[0] in sys.stdlib_module_names else 2

    def block(self) -> PyCode:
        lines: list[list[PySource]] = [[], [], [], []]
        if self.future:
            lines[0].append(pysource.import_from("__future__", [("annotations", None)]))
        by_section: dict[int, list[tuple[str, str | None, str]]] = {1: [], 2: [], 3: []}
        for entry in self.entries:
            by_section[self._section(entry[0])].append(entry)
        for section, entries in by_section.items():
            plain = sorted(
                {(m, local) for m, name, local in entries if name is None}, key=lambda e: (e[0].lower(), e)
            )
            for module, local in plain:
                lines[section].append(
                    pysource.indent_lines(
                        pysource.import_module(module, None if local == module else local), self.indent
                    )
                )
            statements: list[tuple[tuple[Any, ...], str, list[tuple[str, str | None]]]] = []
            by_module: dict[str, list[tuple[str, str]]] = {}
            for m, name, local in entries:
                if name is not None:
                    by_module.setdefault(m, []).append((name, local))
            for module in sorted(by_module):
                names = by_module[module]
                unaliased = sorted((n for n, local in names if n == local), key=_member_key)
                if unaliased:
                    statements.append(
                        (
                            (module.lower(), module, _member_key(unaliased[0])),
                            module,
                            [(n, None) for n in unaliased],
                        )
                    )
                for n, local in sorted(
                    (item for item in names if item[0] != item[1]), key=lambda i: _member_key(i[0])
                ):
                    statements.append(((module.lower(), module, _member_key(n)), module, [(n, local)]))
            for _, module, members in sorted(statements, key=lambda s: s[0]):
                lines[section].append(self._from_line(module, members))
        groups = [pysource.join(group, "\n") for group in lines if group]
        return pysource.join_blocks(groups)

    def _from_line(self, module: str, members: list[tuple[str, str | None]]) -> PyCode:
        return _from_line(module, tuple(members), self.indent, layout.line_length())


@functools.lru_cache(maxsize=4096)  # `from pydantic import BaseModel, ConfigDict, Field` in every module
def _from_line(module: str, members: tuple[tuple[str, str | None], ...], indent: str, limit: int) -> PyCode:
    one_line = pysource.import_from(module, members)
    if len(indent) + len(one_line) <= limit or (len(members) == 1 and not indent):
        return pysource.indent_lines(one_line, indent)
    # isort and black agree on one name per line with a trailing comma once the line is too long
    return pysource.indent_lines(pysource.import_from_wrapped(module, members), indent)


# ------------------------------------------------------------------------------------- type names


# `type_node`'s memo for each spelling (`prefix`): every module spelling names one way builds the
# same nodes (a large package has hundreds of models modules). Bounded: a long process renders many specs.
_TYPE_MEMO: dict[str | None, dict[tuple[TypeExpr, bool], tuple[Node, tuple[str, ...]]]] = {}
_TYPE_MEMO_SIZE = 65536


def type_names(*imports: Imports, prefix: str | None) -> TypeNames:
    """Type spelling for a module: models.py (`prefix` None) names classes directly, other modules
    as `_m.X`; typing/pydantic helpers are imported on first use (into each of `imports`: modules
    that share the code built with these names)."""
    sources = {"Any": "typing", "Literal": "typing", "Annotated": "typing", "Field": "pydantic"}

    qualified: dict[str, Node] = {}  # a client names each input and output model twice or more

    def qualify(name: str) -> Node:
        node = qualified.get(name)
        if node is None:
            checked = pysource.ident(name)
            node = qualified[name] = checked if prefix is None else pysource.code(f"{prefix}.{checked}")
        return node

    def use(name: str) -> str:
        for module in imports:
            module.add(sources[name], name)
        return name

    memo = _TYPE_MEMO.setdefault(prefix, {})
    if len(memo) > _TYPE_MEMO_SIZE:
        memo.clear()
    return TypeNames(qualify, use, memo)
