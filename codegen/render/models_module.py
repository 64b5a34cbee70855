"""The models of a generated package: `_models/t<n>.py`, each holding the pydantic classes
(`ModelDef`) and aliases (`AliasDef`) its consecutive tools are the first to reach (`model.modules`), and
models.py, which names every one of them for type checkers and imports a module only when one of
its names is first used (PEP 562 `__getattr__`): importing a package creates no class.

Rendered as jobs (`jobs.Render`: one per module), the same for a client and a server built from one IR.
"""

from __future__ import annotations

import functools

from ..model.ir import (
    AliasDef,
    FieldDef,
    ModelDef,
    PackageIR,
    class_refs,
)
from ..model.modules import ModulePlan, plan_modules
from .jobs import Render
from .python import black_format, layout, pysource
from .python.imports import Imports, natural, type_names
from .python.pysource import Node, PyCode, PySource
from .python.typenodes import TypeNames, type_node
from .templates import file_header, render_template

__all__ = ["render_models"]

MODELS_PACKAGE = "_models"

_CLASS = " " * 4
_NONE = pysource.literal_node(None)  # the default of most optional fields
_DEFAULT_NONE = pysource.keyword_arg("default", _NONE)


def _field_statement(f: FieldDef, names: TypeNames) -> PyCode:
    """`name: T`, `name: T = default` or `name: T = Field(default=..., ...)`. Written so pyright and
    mypy (with the pydantic plugin or without) read the constructor as pydantic does: a default
    only as `default=` (a positional one reads as required), and a wire name as
    `validation_alias`/`serialization_alias` (`alias` would make it the only keyword a checker
    accepts; `populate_by_name` lets the Python name in at run time too)."""
    annotation = type_node(f.type, names)
    default: Node | None = None
    if not f.required:
        default = pysource.literal_node(f.default) if f.has_default else _NONE
    keywords: list[Node] = []
    if f.name != f.wire_name:
        wire = pysource.literal(f.wire_name)
        keywords += [
            pysource.keyword_arg("validation_alias", wire),
            pysource.keyword_arg("serialization_alias", wire),
        ]
    if f.description is not None:
        keywords.append(pysource.keyword_arg("description", pysource.literal(f.description)))
    for keyword, value in f.constraints:
        keywords.append(pysource.keyword_arg(keyword, pysource.literal(value)))
    mutable = f.has_default and isinstance(f.default, (list, dict))
    if not keywords and not mutable:
        simple = pysource.annotated_name(f.name, annotation, default)
        if f.required or layout.width(_CLASS + pysource.flat(simple)) <= layout.line_length():
            return layout.statement(simple, indent=_CLASS)
        # too long: `= Field(` with the default on its own line, when that line fits; else black's
        # split of the annotation, keeping `= None` on the closing line
        head = _CLASS + pysource.flat(pysource.annotated_name(f.name, annotation, pysource.code("Field(")))
        if layout.width(head) > layout.line_length():
            return layout.statement(simple, indent=_CLASS)
    if default is not None:
        keywords.insert(0, _DEFAULT_NONE if default is _NONE else pysource.keyword_arg("default", default))
    field_call = pysource.call(pysource.ident(names.use("Field")), keywords)
    return layout.statement(pysource.annotated_name(f.name, annotation, field_call), indent=_CLASS)


def _model_block(model: ModelDef, names: TypeNames, defined: set[str], imports: Imports) -> PyCode:
    name = pysource.ident(model.name)
    if model.root is not None:
        root = type_node(model.root, names)
        forward = any(ref not in defined for ref in class_refs(model.root))
        argument: Node = pysource.literal(pysource.flat(root)) if forward else root
        base = pysource.seq(
            pysource.ident(imports.add("pydantic", "RootModel")),
            pysource.brk("[", [argument], "]", magic=False),
        )
        lines = [
            layout.class_header(name, [base]),
            _config(imports),
            layout.statement(pysource.annotated_name("root", root), indent=_CLASS),
        ]
        return pysource.join(lines, "\n")
    lines = [layout.class_header(name, [pysource.ident(imports.add("pydantic", "BaseModel"))])]
    renamed = any(f.name != f.wire_name for f in model.fields)
    lines.append(_config(imports, extra=model.extra, populate_by_name=renamed))
    lines += [_field_statement(f, names) for f in model.fields]
    return pysource.join(lines, "\n")


def _config(imports: Imports, *, extra: str | None = None, populate_by_name: bool = False) -> PyCode:
    """`model_config = ConfigDict(defer_build=True, strict=True, ...)`: pydantic builds a model's
    validator when it is first used, not at import (a 1,000-tool client imports in about half the
    time), and forward references are resolved then, so no `model_rebuild()` calls are needed.
    Strict: a constructor refuses what its annotations refuse (`"10"` for an `int`), which is also
    what makes the pydantic mypy plugin check constructor argument types; the runtime parses JSON
    it receives with `strict=False` after the schema check (arrays become tuples)."""
    config_dict = imports.add("pydantic", "ConfigDict")
    return _config_statement(config_dict, extra, populate_by_name, black_format.style())


@functools.lru_cache(maxsize=64)  # one of a few statements, repeated in every class of models.py
def _config_statement(
    config_dict: str, extra: str | None, populate_by_name: bool, _style: black_format.Style
) -> PyCode:
    config = [
        pysource.keyword_arg("defer_build", pysource.literal(True)),
        pysource.keyword_arg("strict", pysource.literal(True)),
    ]
    if extra is not None:
        config.append(pysource.keyword_arg("extra", pysource.literal(extra)))
    if populate_by_name:
        config.append(pysource.keyword_arg("populate_by_name", pysource.literal(True)))
    config_call = pysource.call(pysource.ident(config_dict), config)
    return layout.statement(pysource.seq(pysource.code("model_config = "), config_call), indent=_CLASS)


def _module_body(
    members: tuple[str, ...],
    plan: ModulePlan,
    aliases: dict[str, AliasDef],
    models: dict[str, ModelDef],
    imports: Imports,
    this: str,
) -> tuple[PyCode, PyCode]:
    """(the Literal aliases, the classes) of one `_models/` module."""
    names = type_names(imports, prefix=None)
    defined: set[str] = set()
    for name in members:
        model = models.get(name)
        if model is None:
            continue
        refs = [model.root] if model.root is not None else [f.type for f in model.fields]
        for ref in class_refs(*refs, aliases=True):
            home = plan.home[ref]
            if home != this:
                defined.add(imports.add(f".{home}", ref))
    alias_lines = [
        layout.statement(
            pysource.seq(pysource.code(f"{pysource.ident(name)} = "), type_node(aliases[name].value, names)),
            indent="",
        )
        for name in members
        if name in aliases
    ]
    blocks: list[PySource] = []
    for name in members:
        model = models.get(name)
        if model is not None:
            blocks.append(_model_block(model, names, defined, imports))
            defined.add(model.name)
    return pysource.join(alias_lines, "\n"), pysource.join(blocks, "\n\n\n")


def _facade(plan: ModulePlan, header: object) -> str:
    """models.py: every name for type checkers (`if TYPE_CHECKING:` imports, `__all__`), and the
    table `__getattr__` imports a name's module from on first use."""
    checking = Imports(indent="    ")
    for module, members in plan.modules:
        for name in members:
            checking.add(f".{MODELS_PACKAGE}.{module}", name)
    every = sorted(plan.home, key=_all_key)
    exported = pysource.seq(
        pysource.code("__all__: list[str] = "), pysource.brk("[", [pysource.literal(n) for n in every], "]")
    )
    table = pysource.seq(
        pysource.code("_MODULES: dict[str, str] = "),
        pysource.brk(
            "{",
            [
                pysource.seq(pysource.literal(name), pysource.code(": "), pysource.literal(plan.home[name]))
                for module, members in plan.modules
                for name in members
            ],
            "}",
        ),
    )
    return render_template(
        "models.py.jinja",
        header=header,
        checking=checking.block() if plan.home else None,
        exported=layout.statement(exported, indent=""),
        table=layout.statement(table, indent=""),
    )


def _all_key(name: str) -> tuple[int, str]:
    """ruff's `__all__` order (RUF022, isort-style): CONSTANTS, then Classes, then the rest; each
    in natural order."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return kind, natural(name)


# the jobs of the last IR's models (and style): a client and a server share them, and so their text
_MODELS_JOBS: dict[int, tuple[object, tuple[str, str, str, black_format.Style], list[Render]]] = {}


def render_models(ir: PackageIR) -> list[Render]:
    """The jobs rendering models.py and `_models/` (`render.jobs`): models.py and `_models/__init__.py`
    first, then one job per module. The same job objects for a client and a server built from one
    IR, so what they rendered once is reused."""
    key = (ir.source, ir.digest, ir.generator_version, black_format.style())
    hit = _MODELS_JOBS.get(id(ir.models))
    if hit is not None and hit[0] is ir.models and hit[1] == key:
        return hit[2]
    plan = plan_modules(ir.models, ir.tools)
    aliases = {a.name: a for a in ir.models.aliases}
    models = {m.name: m for m in ir.models.models}
    header = file_header(ir)

    def package() -> dict[str, str]:
        return {
            "models.py": _facade(plan, header),
            f"{MODELS_PACKAGE}/__init__.py": render_template("models/__init__.py.jinja", header=header),
        }

    def module(name: str, members: tuple[str, ...]) -> dict[str, str]:
        imports = Imports(future=True)
        alias_text, body = _module_body(members, plan, aliases, models, imports, name)
        text = render_template(
            "models/module.py.jinja", header=header, imports=imports.block(), aliases=alias_text, body=body
        )
        return {f"{MODELS_PACKAGE}/{name}.py": text}

    jobs: list[Render] = [package, *(functools.partial(module, *entry) for entry in plan.modules)]
    _MODELS_JOBS.clear()
    _MODELS_JOBS[id(ir.models)] = (ir.models, key, jobs)
    return jobs
