"""IR type expressions (`ir.TypeExpr`) -> `pysource` nodes for annotations.

Built only from `pysource` constructors, whose leaves are checked identifiers and literals; how a
module spells class names and typing helpers (`X` in models.py, `_m.X` elsewhere, imports on
first use) is its `TypeNames`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from ...errors import InternalGeneratorError
from ...model import ir
from .pysource import Node, brk, call, code, ident, keyword_arg, literal_node, seq, union_of

__all__ = ["TypeNames", "type_node"]


class TypeNames:
    """How a module spells the names type expressions need.

    `qualify(class_or_alias)` gives `X` in models.py and `_m.X` elsewhere; `use("Any")` gives the
    local name of a typing/pydantic helper and records that the module imports it.

    `shared`: the memo of `type_node`, which modules that spell names the same way may share (nodes
    are immutable; what differs between such modules is only which helpers each one imports, and
    the memo keeps those with each node).
    """

    def __init__(
        self,
        qualify: Callable[[str], Node],
        use: Callable[[str], str],
        shared: dict[tuple[ir.TypeExpr, bool], tuple[Node, tuple[str, ...]]] | None = None,
    ) -> None:
        self.qualify = qualify
        self._use = use
        self.memo = shared if shared is not None else {}
        self._used: list[set[str]] = []  # helpers used by the expressions being built, innermost last

    def use(self, name: str) -> str:
        if self._used:
            self._used[-1].add(name)
        return self._use(name)


_PRIMITIVES: Final = {"str": "str", "int": "int", "float": "float", "bool": "bool", "None": "None"}


def type_node(expr: ir.TypeExpr, names: TypeNames, *, plain: bool = False) -> Node:
    """A type expression; `plain` drops `Annotated[..., Field(discriminator=...)]` metadata (method
    signatures: the input model still validates with it). Memoised (`names.memo`)."""
    key = (expr, plain)
    entry = names.memo.get(key)
    if entry is None:
        names._used.append(set())
        try:
            node = _type_node(expr, names, plain=plain)
        finally:
            used = names._used.pop()
        entry = names.memo[key] = (node, tuple(sorted(used)))
    for helper in entry[1]:  # the module imports what the node names, however it was made
        names.use(helper)
    return entry[0]


def _type_node(expr: ir.TypeExpr, names: TypeNames, *, plain: bool) -> Node:
    if isinstance(expr, ir.Prim):
        if expr.name == "Any":
            return ident(names.use("Any"))
        return code(_PRIMITIVES[expr.name])
    if isinstance(expr, ir.Lit):
        values = [literal_node(value) for value in expr.values]
        return seq(ident(names.use("Literal")), brk("[", values, "]", magic=len(values) > 1))
    if isinstance(expr, ir.ListOf):
        return seq(code("list"), brk("[", [type_node(expr.item, names, plain=plain)], "]", magic=False))
    if isinstance(expr, ir.TupleOf):
        items = [type_node(item, names, plain=plain) for item in expr.items] or [code("()")]
        return seq(code("tuple"), brk("[", items, "]", magic=len(items) > 1))
    if isinstance(expr, ir.DictOf):
        return seq(code("dict"), brk("[", [code("str"), type_node(expr.value, names, plain=plain)], "]"))
    if isinstance(expr, (ir.ModelRef, ir.AliasRef)):
        return names.qualify(expr.name)
    if isinstance(expr, ir.Union):
        return union_of([type_node(member, names, plain=plain) for member in expr.members])
    if isinstance(expr, ir.Annotated):
        union = type_node(expr.union, names, plain=plain)
        if plain:
            return union
        tag = call(
            ident(names.use("Field")), [keyword_arg("discriminator", literal_node(expr.discriminator))]
        )
        return seq(ident(names.use("Annotated")), brk("[", [union, tag], "]"))
    raise InternalGeneratorError(f"unknown type expression {expr!r:.80}")
