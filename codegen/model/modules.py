"""Which module of a package's `_models/` defines each class and alias: one module per tool.

A generated package's models.py only names its classes (for type checkers) and imports each one's
module on first use (PEP 562 `__getattr__`), so importing a 1,000-tool package creates no pydantic
class. Module names are numbered (`t0001`, the tool's 1-based position in the listing, at least
four digits so that every sort agrees): no
server text ever names a file, and no two names differ only in case. A class or alias lives in the
module of the first tool that reaches it (its own tool's, or an earlier tool's when shared), so a
module imports only from modules with smaller numbers: never a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ir import AliasRef, Annotated, DictOf, ListOf, ModelRef, ModelsIR, ToolIR, TupleOf, TypeExpr, Union

__all__ = ["ModulePlan", "module_name", "plan_modules"]


def module_name(index: int, count: int) -> str:
    """The module of the tool at `index` (0-based) in a listing of `count` tools."""
    return f"t{index + 1:0{max(4, len(str(count)))}d}"


@dataclass(frozen=True, slots=True)
class ModulePlan:
    """`home[name]`: the `_models/` module defining class or alias `name`; `modules`: every module
    with what it defines, in listing order."""

    home: dict[str, str]
    modules: tuple[tuple[str, tuple[str, ...]], ...]


def _refs(expr: TypeExpr | None, found: list[str]) -> None:
    stack: list[TypeExpr] = [] if expr is None else [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, (ModelRef, AliasRef)):
            found.append(node.name)
        elif isinstance(node, ListOf):
            stack.append(node.item)
        elif isinstance(node, DictOf):
            stack.append(node.value)
        elif isinstance(node, TupleOf):
            stack.extend(node.items)
        elif isinstance(node, Union):
            stack.extend(node.members)
        elif isinstance(node, Annotated):
            stack.append(node.union)


def plan_modules(models: ModelsIR, tools: tuple[ToolIR, ...]) -> ModulePlan:
    edges: dict[str, list[str]] = {alias.name: [] for alias in models.aliases}
    for model in models.models:
        found: list[str] = []
        _refs(model.root, found)
        for field in model.fields:
            _refs(field.type, found)
        edges[model.name] = found
    home: dict[str, str] = {}
    for index, tool in enumerate(tools):
        module = module_name(index, len(tools))
        stack = [tool.input_class] + ([tool.output_class] if tool.output_class is not None else [])
        while stack:
            name = stack.pop()
            if name in home or name not in edges:
                continue
            home[name] = module
            stack.extend(edges[name])
    # nothing reached by no tool is planned today; should it happen, it joins the first module
    for name in edges:
        home.setdefault(name, module_name(0, len(tools)))
    order = {module_name(index, len(tools)): index for index in range(max(len(tools), 1))}
    members: dict[str, list[str]] = {}
    for name in edges:  # aliases first, then classes in dependency order: the models.py order
        members.setdefault(home[name], []).append(name)
    modules = tuple(
        (module, tuple(names)) for module, names in sorted(members.items(), key=lambda item: order[item[0]])
    )
    return ModulePlan(home=home, modules=modules)
