"""Which module of a package's `_models/` defines each class and alias: consecutive tools share a
module, up to `MODULE_BUDGET` names each.

A generated package's models.py only names its classes (for type checkers) and imports each one's
module on first use (PEP 562 `__getattr__`), so importing a 1,000-tool package creates no pydantic
class. A module holds consecutive tools (in listing order) and takes the next tool while the names
it defines stay within `MODULE_BUDGET`; a tool with more names than that has a module of its own.
So using one tool creates at most that many classes beyond its own, and a 1,000-tool package is a
couple of hundred files rather than a thousand (creating a file is the dearest step of writing a
package on some filesystems). Module names are numbered after their first tool (`t0001`, its 1-based
position in the listing, at least four digits so that every sort agrees): no server text ever names
a file, and no two names differ only in case. A class or alias lives in the module of the first tool
that reaches it (its own tool's, or an earlier tool's when shared), so a module imports only from
modules with smaller numbers: never a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ir import ModelsIR, ToolIR, class_refs

__all__ = ["MODULE_BUDGET", "ModulePlan", "module_name", "plan_modules"]

# About 0.5 ms of class creation each (pydantic, `defer_build`) on a 2-core machine: what a program
# that uses one tool pays, at most, for the other tools of its module.
MODULE_BUDGET = 24


def module_name(index: int, count: int) -> str:
    """The module whose first tool is the one at `index` (0-based) in a listing of `count` tools."""
    return f"t{index + 1:0{max(4, len(str(count)))}d}"


@dataclass(frozen=True, slots=True)
class ModulePlan:
    """`home[name]`: the `_models/` module defining class or alias `name`; `modules`: every module
    with what it defines, in listing order."""

    home: dict[str, str]
    modules: tuple[tuple[str, tuple[str, ...]], ...]


def _first_reached(models: ModelsIR, tools: tuple[ToolIR, ...]) -> dict[str, int]:
    """The index of the first tool that reaches each class and alias."""
    edges: dict[str, list[str]] = {alias.name: [] for alias in models.aliases}
    for model in models.models:
        exprs = [field.type for field in model.fields]
        if model.root is not None:
            exprs.insert(0, model.root)
        edges[model.name] = class_refs(*exprs, aliases=True)
    first: dict[str, int] = {}
    for index, tool in enumerate(tools):
        stack = [tool.input_class] + ([tool.output_class] if tool.output_class is not None else [])
        while stack:
            name = stack.pop()
            if name in first or name not in edges:
                continue
            first[name] = index
            stack.extend(edges[name])
    # nothing reached by no tool is planned today; should it happen, it joins the first module
    return {name: first.get(name, 0) for name in edges}


def plan_modules(models: ModelsIR, tools: tuple[ToolIR, ...]) -> ModulePlan:
    first = _first_reached(models, tools)
    per_tool = [0] * max(len(tools), 1)
    for index in first.values():
        per_tool[index] += 1
    # pack consecutive tools: a module takes the next tool while its names stay within the budget
    module_of: list[str] = []
    opened, size = 0, 0
    for index, count in enumerate(per_tool):
        if size and size + count > MODULE_BUDGET:
            opened, size = index, 0
        module_of.append(module_name(opened, len(tools)))
        size += count
    home = {name: module_of[index] for name, index in first.items()}
    members: dict[str, list[str]] = {}
    for name in first:  # aliases first, then classes in dependency order: the models.py order
        members.setdefault(home[name], []).append(name)
    modules = tuple(sorted((module, tuple(names)) for module, names in members.items()))
    return ModulePlan(home=home, modules=modules)
